"""Presigned URLs of a local S3 server (moto) for the integration tests, and what it holds.

    python3 s3.py ENDPOINT presign-put BUCKET KEY     -> prints a presigned PUT URL (creates the bucket)
    python3 s3.py ENDPOINT presign-get BUCKET KEY     -> prints a presigned GET URL
    python3 s3.py ENDPOINT presign-post BUCKET KEY    -> prints a presigned POST: its URL, then a name=value line per field
    python3 s3.py ENDPOINT put BUCKET KEY FILE        -> stores FILE (creates the bucket)
    python3 s3.py ENDPOINT sha256 BUCKET KEY          -> prints the stored object's SHA-256
"""
import hashlib
import sys

import boto3

endpoint, command, bucket, key = sys.argv[1:5]
s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                  aws_access_key_id="testing", aws_secret_access_key="testing")


def ensure_bucket():
    try:
        s3.head_bucket(Bucket=bucket)
    except Exception:
        s3.create_bucket(Bucket=bucket)


if command == "presign-put":
    ensure_bucket()
    print(s3.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=3600))
elif command == "presign-post":
    ensure_bucket()
    post = s3.generate_presigned_post(Bucket=bucket, Key=key, ExpiresIn=3600)
    print(post["url"])
    for name, value in post["fields"].items():
        print(name + "=" + value)
elif command == "presign-get":
    print(s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": key}, ExpiresIn=3600))
elif command == "put":
    ensure_bucket()
    with open(sys.argv[5], "rb") as f:
        s3.put_object(Bucket=bucket, Key=key, Body=f.read())
elif command == "sha256":
    print(hashlib.sha256(s3.get_object(Bucket=bucket, Key=key)["Body"].read()).hexdigest())
else:
    sys.exit("unknown command " + command)

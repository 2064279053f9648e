"""A real tus 1.0 server for the integration tests: tuspyserver (FastAPI) under uvicorn.

    python3 tus_server.py PORT FILES_DIR DONE_DIR

Uploads are kept in FILES_DIR under their tus id; a completed one is copied to
DONE_DIR/<its filename metadata>, so a test can compare it with its source.
"""
import os
import shutil
import sys

import uvicorn
from fastapi import FastAPI
from tuspyserver import create_tus_router

port, files, done = int(sys.argv[1]), sys.argv[2], sys.argv[3]


def completed(path, metadata):
    name = os.path.basename(metadata.get("filename") or "upload")
    shutil.copyfile(path, os.path.join(done, name))


app = FastAPI()
app.include_router(create_tus_router(prefix="files", files_dir=files, on_upload_complete=completed))
uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")

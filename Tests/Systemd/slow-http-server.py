#!/usr/bin/python3
"""A throttled HTTP/1.1 file server for the systemd container test, on python3-minimal's modules only.

Serves the files of one directory with GET and HEAD, a strong ETag, and single byte ranges
(`Range: bytes=N-` and `N-M`, honoured only when `If-Range` matches), sending at most RATE bytes per
second per connection, so that a download is still running when the test reboots the container,
stops the daemon or freezes it.

    slow-http-server.py DIRECTORY PORT RATE
"""
import os
import socket
import sys
import threading
import time

ROOT, PORT, RATE = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
CHUNK = 16384


def etag(path):
    info = os.stat(path)
    return '"%x-%x"' % (info.st_size, int(info.st_mtime))


def answer(connection):
    with connection, connection.makefile("rb") as reader:
        while True:
            request = reader.readline().decode("latin-1").strip()
            if not request:
                return
            headers = {}
            while True:
                line = reader.readline().decode("latin-1").strip()
                if not line:
                    break
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            method, target, _ = request.split(" ", 2)
            path = os.path.join(ROOT, os.path.basename(target.split("?")[0]))
            if not os.path.isfile(path):
                connection.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                continue
            size, tag = os.path.getsize(path), etag(path)
            start, end, status = 0, size - 1, "200 OK"
            wanted = headers.get("range", "")
            if wanted.startswith("bytes=") and headers.get("if-range", tag) == tag:
                first, _, last = wanted[6:].partition("-")
                start = int(first)
                end = min(int(last), size - 1) if last else size - 1
                if start >= size:
                    connection.sendall(("HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */%d\r\n"
                                        "Content-Length: 0\r\n\r\n" % size).encode())
                    continue
                status = "206 Partial Content"
            head = "HTTP/1.1 %s\r\nContent-Length: %d\r\nETag: %s\r\nAccept-Ranges: bytes\r\n" % (status, end - start + 1, tag)
            if status.startswith("206"):
                head += "Content-Range: bytes %d-%d/%d\r\n" % (start, end, size)
            connection.sendall((head + "\r\n").encode())
            # One line per request, to the journal: the test reads where each download (re)started.
            print("%s %s %s %s" % (method, target, wanted or "-", status.split()[0]), flush=True)
            if method == "HEAD":
                continue
            with open(path, "rb") as body:
                body.seek(start)
                left = end - start + 1
                began, sent = time.monotonic(), 0
                while left > 0:
                    data = body.read(min(CHUNK, left))
                    connection.sendall(data)
                    left -= len(data)
                    sent += len(data)
                    ahead = sent / RATE - (time.monotonic() - began)
                    if ahead > 0:
                        time.sleep(ahead)


def main():
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", PORT))
    listener.listen(16)
    while True:
        connection, _ = listener.accept()
        threading.Thread(target=lambda: _quietly(connection), daemon=True).start()


def _quietly(connection):
    try:
        answer(connection)
    except (OSError, ValueError):
        pass


main()

#!/usr/bin/env python3
"""The fault sweep: makes the Nth write, sync, rename, open or truncate of the daemon's journal,
spool and partial files fail, for every N of a scripted workload, then restarts the daemon without
faults and checks that it starts, that every acknowledged job is there, and that no destination
differs from its source. Tests/Faults/README.md says what it covers and how to read a failure.

    sweep.py [--bounded N] [--kinds write,sync,...] [--bin .build/debug] [--keep]

--bounded N runs N fault points spread over the whole range (CI); without it, every point.
"""
import argparse
import hashlib
import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# The errno values each kind of call is failed with.
ERRNOS = {
    "write": ["ENOSPC", "EIO"],
    "sync": ["EIO"],
    "rename": ["ENOSPC", "EIO"],
    "open": ["ENOSPC", "EIO"],
    "truncate": ["EIO"],
}
KINDS = list(ERRNOS)
FAR_FUTURE = "2030-01-01T00:00:00Z"


def content(name, size):
    """The bytes of file `name`: the same for every run, different for every file."""
    seed = hashlib.sha256(name.encode()).digest()
    block = hashlib.sha256(seed).digest() * 2048  # 64 KiB
    return (block * (size // len(block) + 1))[:size]


FILES = {"small.bin": 96 * 1024, "slow.bin": 3 * 1024 * 1024, "queued.bin": 4096}
BODIES = {name: content(name, size) for name, size in FILES.items()}
UPLOAD = content("upload.bin", 700 * 1024)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    uploads = {}

    def log_message(self, *args):
        pass

    def do_GET(self):
        name = self.path.rsplit("/", 1)[-1]
        body = BODIES.get(name)
        if body is None:
            self.send_error(404)
            return
        start, status = 0, 200
        wanted = self.headers.get("Range", "")
        end = len(body)
        if wanted.startswith("bytes="):
            first, _, last = wanted[6:].partition("-")
            start, status = int(first), 206
            end = min(end, int(last) + 1) if last else end
        self.send_response(status)
        self.send_header("Content-Length", str(end - start))
        self.send_header("ETag", '"v1-%s"' % name)
        self.send_header("Accept-Ranges", "bytes")
        if status == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end - 1, len(body)))
        self.end_headers()
        # slow.bin trickles, so that a pause and a restart meet it in flight.
        step = 32 * 1024 if name == "slow.bin" else len(body)
        try:
            for offset in range(start, end, step):
                self.wfile.write(body[offset:min(end, offset + step)])
                if name == "slow.bin":
                    time.sleep(0.01)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_PUT(self):
        name = self.path.rsplit("/", 1)[-1]
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    break
                data += self.rfile.read(size)
                self.rfile.readline()
        else:
            data = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        Handler.uploads[name] = data
        self.send_response(201)
        self.send_header("Content-Length", "0")
        self.end_headers()


def serve():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def rpc(sock_path, method, params=None, timeout=10):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(timeout)
        connection.connect(sock_path)
        request = {"jsonrpc": "2.0", "id": 1, "method": method}
        if params is not None:
            request["params"] = params
        connection.sendall((json.dumps(request) + "\n").encode())
        data = b""
        while not data.endswith(b"\n"):
            chunk = connection.recv(65536)
            if not chunk:
                break
            data += chunk
    return json.loads(data)


class Run:
    """One daemon's directory, configuration and processes."""

    def __init__(self, binaries, base, port):
        self.binaries = binaries
        self.dir = tempfile.mkdtemp(prefix="faults-", dir=base)
        self.state = os.path.join(self.dir, "state")
        self.out = os.path.join(self.dir, "out")
        self.sock = os.path.join(self.dir, "s.sock")
        self.log = os.path.join(self.dir, "transferd.log")
        self.url = "http://127.0.0.1:%d/" % port
        os.makedirs(self.out)
        self.source = os.path.join(self.dir, "upload.bin")
        with open(self.source, "wb") as f:
            f.write(UPLOAD)
        self.config = os.path.join(self.dir, "transferd.json")
        with open(self.config, "w") as f:
            json.dump({
                "allowed_roots": [self.out], "local_addresses": "allow", "checkpoint_bytes": 256 * 1024,
                "retry_initial_delay_seconds": 0, "retry_max_delay_seconds": 1, "disk_reserve_bytes": 0,
            }, f)
        self.process = None

    def start(self, fault_env=None):
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TRANSFERD_", "NOTIFY_", "LISTEN_", "WATCHDOG_"))}
        env["TRANSFERD_TEST_COMPACTION_BYTES"] = "8192"
        env.update(fault_env or {})
        log = open(self.log, "ab")
        self.process = subprocess.Popen(
            [os.path.join(self.binaries, "transferd"), "--socket", self.sock, "--state-dir", self.state, "--config", self.config],
            env=env, stdout=log, stderr=log)
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                if "result" in rpc(self.sock, "version", timeout=2):
                    return True
            except (OSError, ValueError):
                # Not listening yet, or the connection closed without an answer (a daemon that
                # stops on the injected fault does that): the next turn sees whether it exited.
                pass
            time.sleep(0.05)
        return False

    def stop(self, timeout=15):
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def call(self, method, params=None):
        """The result, or None when the daemon refused or could not be reached."""
        try:
            answer = rpc(self.sock, method, params)
        except (OSError, ValueError):
            return None
        return answer.get("result")

    def submit(self, name, dest, **extra):
        params = {"url": self.url + name, "destination": os.path.join(self.out, dest)}
        params.update(extra)
        result = self.call("submit", params)
        return result["job"]["id"] if result else None

    def upload(self, name):
        try:
            done = subprocess.run(
                [os.path.join(self.binaries, "transferctl"), "--socket", self.sock, "upload", self.source,
                 self.url + "uploads/" + name, "--resumable", "off", "--json"],
                capture_output=True, timeout=30)
        except subprocess.TimeoutExpired:
            return None
        if done.returncode != 0:
            return None
        for line in done.stdout.decode().splitlines():
            try:
                return json.loads(line)["id"]
            except (ValueError, KeyError, TypeError):
                continue
        return None

    def jobs(self):
        result = self.call("status", {"limit": 1000})
        return {job["id"]: job for job in result["jobs"]} if result else None

    def wait_for_ends(self, ids, seconds):
        deadline = time.time() + seconds
        while time.time() < deadline:
            jobs = self.jobs()
            if jobs is None:  # the daemon is gone
                return {}
            if all(jobs.get(i, {}).get("state") in ("completed", "failed", "cancelled", None) for i in ids):
                return jobs
            time.sleep(0.1)
        return self.jobs() or {}


def workload(run, fault_env):
    """Submits, a download, an upload, pause, cancel, a compaction and a restart, under the fault.
    Returns the ids the daemon acknowledged."""
    acknowledged = []

    def keep(job_id):
        if job_id:
            acknowledged.append(job_id)
        return job_id

    if not run.start(fault_env):
        return acknowledged
    small = keep(run.submit("small.bin", "small.bin"))
    slow = keep(run.submit("slow.bin", "slow.bin"))
    queued = keep(run.submit("queued.bin", "queued.bin", not_before=FAR_FUTURE))
    keep(run.upload("upload.bin"))
    for index in range(6):  # churn enough records for a compaction
        job = keep(run.submit("queued.bin", "churn-%d.bin" % index, not_before=FAR_FUTURE))
        if job:
            run.call("cancel", {"id": job})
    if slow:
        time.sleep(0.3)
        run.call("pause", {"ids": [slow]})
        run.call("resume", {"ids": [slow]})
    if queued:
        run.call("cancel", {"id": queued})
    run.wait_for_ends([i for i in (small,) if i], 10)
    run.stop()  # a restart in the middle of the slow download, still under the fault
    if run.start(fault_env):
        run.wait_for_ends([i for i in acknowledged if i not in (queued,)], 15)
        run.stop()
    return acknowledged


def verify(run, acknowledged):
    """Problems found after a clean restart; empty when everything holds."""
    problems = []
    if not run.start():
        return ["the daemon does not start after the fault: " + tail(run.log)]
    # Every job the table holds, acknowledged or not (an answer may be lost when the daemon stops).
    jobs = run.jobs() or {}
    # A job waiting for its start time, or paused (a resume that was not acknowledged), waits on.
    jobs = run.wait_for_ends([i for i, job in jobs.items() if not job.get("not_before") and not job.get("paused")], 30)
    for job_id in acknowledged:
        if job_id not in jobs:
            problems.append("acknowledged job %s is gone" % job_id)
    for job in jobs.values():
        if job.get("kind") == "upload":
            if job["state"] == "completed" and Handler.uploads.get(job["url"].rsplit("/", 1)[-1]) != UPLOAD:
                problems.append("upload %s completed but the server holds other bytes" % job["id"])
            # A copy is freed only once its job's end is on disk: an upload that had not ended
            # never finds its copy gone after a restart.
            message = (job.get("error") or {}).get("message", "")
            if "spool copy of the file" in message and "missing" in message:
                problems.append("upload %s lost its spool copy before its end was saved: %s" % (job["id"], message))
            continue
        dest = job.get("destination", "")
        name = job.get("url", "").rsplit("/", 1)[-1]
        if os.path.exists(dest):
            with open(dest, "rb") as f:
                if f.read() != BODIES.get(name):
                    problems.append("destination %s differs from its source (job %s, %s)" % (dest, job["id"], job["state"]))
        elif job["state"] == "completed":
            problems.append("job %s completed but %s does not exist" % (job["id"], dest))
    unfinished = [j["id"] for j in jobs.values()
                  if j["state"] in ("running", "waiting", "queued") and not j.get("not_before") and not j.get("paused")]
    if unfinished:
        problems.append("jobs still unfinished 30 s after the restart: %s" % ", ".join(unfinished))
    run.stop()
    return problems


def tail(path, lines=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


def points(counts, kinds, bounded):
    everything = [(kind, n, code) for kind in kinds for n in range(1, counts.get(kind, 0) + 1) for code in ERRNOS[kind]]
    if not bounded or bounded >= len(everything):
        return everything
    # Spread over each kind: its first and last calls, and evenly between.
    per_kind = max(1, bounded // max(1, len(kinds)))
    chosen = []
    for kind in kinds:
        mine = [p for p in everything if p[0] == kind]
        if len(mine) <= per_kind:
            chosen += mine
        else:
            chosen += [mine[round(i * (len(mine) - 1) / (per_kind - 1))] for i in range(per_kind)] if per_kind > 1 else [mine[0]]
    return chosen


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bounded", type=int, default=0)
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--bin", default=".build/debug")
    parser.add_argument("--keep", action="store_true", help="keep every run's directory")
    parser.add_argument("--point", action="append", default=[], help="KIND:N:ERRNO, one point only (repeatable)")
    args = parser.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    for kind in kinds:
        if kind not in ERRNOS:
            sys.exit("unknown kind %s: choose among %s" % (kind, ", ".join(KINDS)))
    base = tempfile.mkdtemp(prefix="transferd-faults-")
    library = os.path.join(base, "libfaultinject.so")
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", library, os.path.join(HERE, "faultinject.c"), "-ldl"], check=True)
    server = serve()
    port = server.server_address[1]

    # A run without a fault counts the calls of each kind.
    run = Run(args.bin, base, port)
    counts_file = os.path.join(base, "counts")
    env = {"LD_PRELOAD": library, "FAULT_PATHS": run.state + ":" + run.out, "FAULT_COUNTS": counts_file}
    acknowledged = workload(run, env)
    problems = verify(run, acknowledged)
    if problems or len(acknowledged) < 9:
        print("the workload fails without a fault (%d acknowledged): %s\n%s" % (len(acknowledged), problems, tail(run.log, 40)))
        sys.exit(1)
    with open(counts_file, "rb") as f:
        raw = f.read()
    counts = {kind: int.from_bytes(raw[i * 8:(i + 1) * 8], "little") for i, kind in enumerate(KINDS)}
    print("calls in one workload: " + ", ".join("%s %d" % (k, counts[k]) for k in KINDS))
    shutil.rmtree(run.dir, ignore_errors=True)

    chosen = points(counts, kinds, args.bounded)
    if args.point:
        chosen = [(kind, int(n), code) for kind, n, code in (p.split(":") for p in args.point)]
    print("fault points: %d" % len(chosen))
    failures = 0
    started = time.time()
    for index, (kind, n, code) in enumerate(chosen, 1):
        Handler.uploads.clear()
        run = Run(args.bin, base, port)
        env = {"LD_PRELOAD": library, "FAULT_PATHS": run.state + ":" + run.out, "FAULT_KIND": kind, "FAULT_AT": str(n),
               "FAULT_ERRNO": code, "FAULT_COUNTS": os.path.join(run.dir, "counts")}  # numbered across the restart
        acknowledged = workload(run, env)
        problems = verify(run, acknowledged)
        label = "%s #%d %s" % (kind, n, code)
        if problems:
            failures += 1
            print("FAIL %s (%s kept): %s\n%s" % (label, run.dir, "; ".join(problems), tail(run.log)))
        else:
            print("ok   %s: %d acknowledged, restarted, intact" % (label, len(acknowledged)))
            if not args.keep:
                shutil.rmtree(run.dir, ignore_errors=True)
        sys.stdout.flush()
    print("%d passed, %d failed (%d fault points in %.0f s)" % (len(chosen) - failures, failures, len(chosen), time.time() - started))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# The job table's benchmarks: submit throughput with 0 and with N kept jobs, and with jobs that
# run and fail against a live server meanwhile; pipelined submits, one batch; READY time and
# memory with many jobs kept, and with many jobs queued. Prints one table with the goals.
#
# Usage (from anywhere; `make bench` runs it after bench.sh):
#   Tests/Benchmarks/jobtable.sh
# Environment:
#   BENCH_KEPT=100000          finished jobs kept for the "kept" rows
#   BENCH_MILLION=1            also measure READY time and RSS with 1,000,000 kept jobs, and with
#                              1,000,000 queued (0: skip)
#   BENCH_DIR=/tmp             where the scratch directory is made
#   BENCH_SKIP_BUILD=1         use the release binaries already built
#   SWIFT=swift                the swift driver
#
# See Tests/Benchmarks/README.md ("Job table").
set -euo pipefail

KEPT=${BENCH_KEPT:-100000}
MILLION=${BENCH_MILLION:-1}
SKIP_BUILD=${BENCH_SKIP_BUILD:-0}
SWIFT=${SWIFT:-swift}

say() { printf 'jobtable: %s\n' "$*" >&2; }
die() { printf 'jobtable: FAIL: %s\n' "$*" >&2; exit 1; }
[[ $KEPT =~ ^[1-9][0-9]*$ ]] || die "BENCH_KEPT must be a positive integer, got '$KEPT'"

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO_ROOT"

SCRATCH=""
PIDS=()
cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    [[ -n $SCRATCH && -d $SCRATCH ]] && rm -rf -- "$SCRATCH"
}
trap cleanup EXIT

if [[ $SKIP_BUILD != 1 ]]; then
    say "building transferd, transferctl and transferd-bench (release)"
    for product in transferd transferctl transferd-bench; do
        "$SWIFT" build -c release --static-swift-stdlib --product "$product" >&2 || die "swift build --product $product failed"
    done
fi
BIN_DIR=$("$SWIFT" build -c release --show-bin-path)
TRANSFERD=$BIN_DIR/transferd
TOOL=$BIN_DIR/transferd-bench
[[ -x $TRANSFERD && -x $TOOL ]] || die "release binaries not found in $BIN_DIR"

SCRATCH=$(mktemp -d "${BENCH_DIR:-/tmp}/transferd-jobtable.XXXXXX")
mkdir -p "$SCRATCH/out"

# A listener that accepts connections and never answers: submitted jobs start, wait for an answer
# and occupy their slots, so only the submits are measured.
python3 -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(4096)
print(s.getsockname()[1], flush=True)
time.sleep(1e9)' >"$SCRATCH/port" &
PIDS+=($!)
for _ in $(seq 100); do [[ -s $SCRATCH/port ]] && break; sleep 0.05; done
URL="http://127.0.0.1:$(cat "$SCRATCH/port")/file"

# A live server for the jobs that run while others are submitted: a 4 KiB file they download, and
# a name it answers 404 for, so that some jobs complete (a landed file, synced) and some fail.
mkdir -p "$SCRATCH/www"
head -c 4096 /dev/urandom >"$SCRATCH/www/small.bin"
python3 -c '
import functools, http.server, sys
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
handler.func.log_message = lambda *args: None
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
# Jobs cancelled or stopped with the daemon drop their connections mid-answer: not worth a traceback.
server.handle_error = lambda request, address: None
print(server.server_address[1], flush=True)
server.serve_forever()' "$SCRATCH/www" >"$SCRATCH/live-port" &
PIDS+=($!)
for _ in $(seq 100); do [[ -s $SCRATCH/live-port ]] && break; sleep 0.05; done
LIVE="http://127.0.0.1:$(cat "$SCRATCH/live-port")"
curl -fsS -o /dev/null "$LIVE/small.bin" || die "the live test server does not serve $LIVE/small.bin"

printf '{"allowed_roots": ["%s"], "max_jobs_per_user": 10000000, "journal_bytes_per_user": 4294967296, "max_concurrent_transfers": 4, "max_request_bytes": 16777216, "log_level": "warning"}\n' \
    "$SCRATCH" >"$SCRATCH/transferd.json"

# daemon NAME: starts transferd on $SCRATCH/NAME (its journal may be filled already); sets SOCKET and PID.
daemon() {
    local dir=$SCRATCH/$1 i
    mkdir -p "$dir/state" "$SCRATCH/out/$1"
    SOCKET=$dir/d.sock
    env -u TRANSFERD_SOCKET -u TRANSFERD_STATE_DIRECTORY "$TRANSFERD" --socket "$SOCKET" --state-dir "$dir/state" \
        --config "$SCRATCH/transferd.json" >"$dir/log" 2>&1 &
    PID=$!
    PIDS+=("$PID")
    for i in $(seq 600); do [[ -S $SOCKET ]] && return; kill -0 "$PID" || die "transferd $1 exited: $(tail -5 "$dir/log")"; sleep 0.05; done
    die "transferd $1 did not open its socket"
}
stop() { kill "$PID"; wait "$PID" 2>/dev/null || true; }
fill() { # NAME COUNT [completed|queued [URL_PREFIX [FIRST]]]
    mkdir -p "$SCRATCH/$1/state" "$SCRATCH/out/$1"
    "$TOOL" fill-journal "$SCRATCH/$1/state" "$2" 0 "$SCRATCH/out/$1" "${@:3}"
}
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

ROWS=()
row() { ROWS+=("$(printf '%-58s %14s %16s' "$1" "$2" "$3")"); }

anon_kib() { awk '/^RssAnon:/ {print $2}' "/proc/$1/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

say "submits: 8 clients x 50 in flight, first 8,000 jobs"
daemon empty
read -r _ RATE0 < <("$TOOL" submit-load "$SOCKET" 8 50 8000 "$URL" "$SCRATCH/out/empty")
# The first max_concurrent_transfers jobs wait for an answer that never comes: the daemon should sleep.
sleep 1
TICKS=$(cpu_ticks "$PID")
sleep 5
WAITING_CPU=$(awk -v t="$(( $(cpu_ticks "$PID") - TICKS ))" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.3f", t / hz / 5}')
stop
row "durable submits/s, 8 clients x 50 in flight, 0 kept" "$RATE0" ">= 20000"
row "CPU while 4 transfers wait for an answer (s per s)" "$WAITING_CPU" "<= 0.01"

# A script hands over many URLs while the first transfers wait for a slow server: every job but
# the first few waits in the queue, as submitted (not replayed at a restart).
LIVE_QUEUED=$KEPT
say "memory: $LIVE_QUEUED jobs submitted and left queued"
daemon live-queued
sleep 1
ANON_BEFORE=$(anon_kib "$PID")
"$TOOL" submit-load "$SOCKET" 8 50 "$LIVE_QUEUED" "$URL" "$SCRATCH/out/live-queued" >/dev/null
# The daemon returns what the burst freed once it pauses (a second).
sleep 2
ANON_AFTER=$(anon_kib "$PID")
stop
rm -rf "$SCRATCH/live-queued" "$SCRATCH/out/live-queued"
row "anonymous memory per job submitted and queued, $LIVE_QUEUED (bytes)" "$(( (ANON_AFTER - ANON_BEFORE) * 1024 / LIVE_QUEUED ))" "<= 600"

say "submits with $KEPT jobs kept"
fill kept "$KEPT"
daemon kept
read -r _ RATEK < <("$TOOL" submit-load "$SOCKET" 8 50 8000 "$URL" "$SCRATCH/out/kept")
stop
row "durable submits/s, same, $KEPT kept" "$RATEK" ">= 20000"

say "submits with $KEPT jobs kept while jobs run and fail against a live server"
fill live "$KEPT"
daemon live
read -r _ RATEL < <("$TOOL" submit-load "$SOCKET" 8 50 8000 "$LIVE/small.bin,$LIVE/missing.bin" "$SCRATCH/out/live")
stop
row "durable submits/s, same, jobs running and failing" "$RATEL" ">= 20000"

say "1,000 submits pipelined on one connection"
daemon pipelined
read -r PIPE _ < <("$TOOL" submit-load "$SOCKET" 1 1000 1000 "$URL" "$SCRATCH/out/pipelined")
stop
row "1,000 submits pipelined on one connection (s)" "$PIPE" "<= 0.1"

say "10,000 submits in one batch"
daemon batch
BATCH=$("$TOOL" batch "$SOCKET" 10000 "$URL" "$SCRATCH/out/batch")
stop
row "10,000 submits in one batch (s)" "$BATCH" "-"

ready_row() { # NAME COUNT
    local ready rss
    read -r ready rss < <("$TOOL" ready "$TRANSFERD" --socket "$SCRATCH/$1/r.sock" --state-dir "$SCRATCH/$1/state" --config "$SCRATCH/transferd.json")
    READY_S=$ready
    READY_RSS=$rss
}
say "READY time and RSS: empty journal"
mkdir -p "$SCRATCH/idle/state"
ready_row idle
IDLE_RSS=$READY_RSS
row "idle RSS after READY (MiB)" "$((IDLE_RSS / 1024))" "<= 24"
say "READY time and RSS: $KEPT kept"
fill ready "$KEPT"
ready_row ready
JOURNAL_MB=$(( $(stat -c %s "$SCRATCH/ready/state/journal.log") / 1000000 ))
row "READY after restart, $KEPT kept, ${JOURNAL_MB} MB journal (s)" "$READY_S" "<= 0.5"
row "RSS with $KEPT kept (MiB)" "$((READY_RSS / 1024))" "<= 64"
row "memory per kept job (bytes)" "$(( (READY_RSS - IDLE_RSS) * 1024 / KEPT ))" "<= 600"
# Queued jobs wait behind a server that never answers: the first max_concurrent_transfers start
# and hold their slots, the others stay queued.
QUEUED=$((KEPT * 3 / 4))
say "READY time and RSS: $QUEUED queued, $((KEPT - QUEUED)) finished"
fill queued "$((KEPT - QUEUED))"
fill queued "$QUEUED" queued "$URL-" "$((KEPT - QUEUED))"
ready_row queued
row "READY, $QUEUED queued + $((KEPT - QUEUED)) finished (s)" "$READY_S" "<= 0.5"
row "RSS, same (MiB)" "$((READY_RSS / 1024))" "-"
row "memory per job, same (bytes)" "$(( (READY_RSS - IDLE_RSS) * 1024 / KEPT ))" "<= 600"
rm -rf "$SCRATCH/queued"
if [[ $MILLION == 1 ]]; then
    say "READY time and RSS: 1,000,000 kept (writing the journal takes a while)"
    rm -rf "$SCRATCH/ready"
    fill million 1000000
    ready_row million
    JOURNAL_MB=$(( $(stat -c %s "$SCRATCH/million/state/journal.log") / 1000000 ))
    row "READY after restart, 1,000,000 kept, ${JOURNAL_MB} MB journal (s)" "$READY_S" "<= 5"
    row "RSS with 1,000,000 kept (MiB)" "$((READY_RSS / 1024))" "-"
    row "memory per kept job, 1,000,000 (bytes)" "$(( (READY_RSS - IDLE_RSS) * 1024 / 1000000 ))" "<= 600"
    say "READY time and RSS: 1,000,000 queued"
    rm -rf "$SCRATCH/million"
    fill million-queued 1000000 queued "$URL-"
    ready_row million-queued
    row "READY after restart, 1,000,000 queued (s)" "$READY_S" "<= 5"
    row "RSS with 1,000,000 queued (MiB)" "$((READY_RSS / 1024))" "-"
    row "memory per queued job, 1,000,000 (bytes)" "$(( (READY_RSS - IDLE_RSS) * 1024 / 1000000 ))" "<= 600"
fi

printf '\n%-58s %14s %16s\n' "job table" "transferd" "goal"
printf '%s\n' "${ROWS[@]}"
printf '\nmachine: %s, %s cores, %s\n' "$(uname -m)" "$(nproc)" "$(awk '/MemTotal/ {printf "%.0f GiB RAM", $2/1048576}' /proc/meminfo)"

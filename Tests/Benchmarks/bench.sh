#!/usr/bin/env bash
# The benchmark suite of transferd's data path: each row runs transferd and its peers (curl, aria2c)
# against one local nginx in the same run and prints ratios. The small row also runs the same files
# through one bare URLSession (transferd-bench urlsession-fetch): the floor every transfer stands on.
#
# Usage (from anywhere; `make bench` runs it from the repository root):
#   Tests/Benchmarks/bench.sh
#   BENCH_ROWS=big BENCH_RUNS=1 Tests/Benchmarks/bench.sh      # a quick run
# Environment:
#   BENCH_ROWS=idle,big,small,waiting,capped,upload   which rows to run (comma-separated, in this order)
#   BENCH_SIZE_MIB=1024        size of the big file in MiB (rows big, capped and upload)
#   BENCH_RUNS=3               runs per tool in rows big, small, waiting and upload; medians are reported
#   BENCH_SMALL_FILES=1000     files of the small row, each BENCH_SMALL_KIB (4) KiB
#   BENCH_CAPPED_RATE=20m      nginx limit_rate per connection of the capped row
#   BENCH_CAPPED_RUNS=1        runs per tool in the capped row
#   BENCH_SEGMENTS=4           connections per file for the tools that split one file (capped row)
#   BENCH_WAITING_SECONDS=2    how long the waiting row's server thinks before each answer
#   BENCH_DIR=/tmp             where the scratch directory is made (a subdirectory is created and removed)
#   BENCH_SLOW_DISK_USEC=N     also run one download with TRANSFERD_TEST_WRITE_DELAY_USEC=N
#                              (N microseconds per 16 KiB chunk written) and report its peak RSS
#   BENCH_SKIP_BUILD=1         use the release binaries already built instead of building them
#   BENCH_BIN_DIR=DIR          use the transferd, transferctl and transferd-bench in DIR
#                              (implies BENCH_SKIP_BUILD=1; without transferd-bench, no floor)
#   BENCH_BASELINE=DIR         also run the transferd in DIR (another build, e.g. before a change),
#                              interleaved with the others, and print both side by side
#   SWIFT=swift                the swift driver to build with
#
# See Tests/Benchmarks/README.md for what is measured and how to read the output.
set -euo pipefail

# ---------------------------------------------------------------------------- settings
SIZE_MIB=${BENCH_SIZE_MIB:-1024}
RUNS=${BENCH_RUNS:-3}
SLOW_USEC=${BENCH_SLOW_DISK_USEC:-}
SKIP_BUILD=${BENCH_SKIP_BUILD:-0}
BASELINE_DIR=${BENCH_BASELINE:-}
SWIFT=${SWIFT:-swift}
ROWS=${BENCH_ROWS:-idle,big,small,waiting,capped,upload}
SMALL_FILES=${BENCH_SMALL_FILES:-1000}
SMALL_KIB=${BENCH_SMALL_KIB:-4}
CAPPED_RATE=${BENCH_CAPPED_RATE:-20m}
CAPPED_RUNS=${BENCH_CAPPED_RUNS:-1}
SEGMENTS=${BENCH_SEGMENTS:-4}
WAITING_SECONDS=${BENCH_WAITING_SECONDS:-2}

BENCH_START_NS=$(date +%s%N)

say() { printf 'bench: %s\n' "$*" >&2; }

SCRATCH=""
NGINX_PID=""
DAEMON_PIDS=()
FAILED=0

die() {
    FAILED=1
    printf 'bench: FAIL: %s\n' "$*" >&2
    if [[ -n $SCRATCH && -d $SCRATCH ]]; then
        local log
        for log in "$SCRATCH"/transferd*.log "$SCRATCH"/nginx/error.log; do
            [[ -s $log ]] || continue
            printf 'bench: --- last lines of %s ---\n' "${log##*/}" >&2
            tail -n 20 "$log" >&2 || true
        done
    fi
    exit 1
}

[[ $SIZE_MIB =~ ^[1-9][0-9]*$ ]] || die "BENCH_SIZE_MIB must be a positive integer, got '$SIZE_MIB'"
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive integer, got '$RUNS'"
[[ -z $SLOW_USEC || $SLOW_USEC =~ ^[0-9]+$ ]] || die "BENCH_SLOW_DISK_USEC must be a non-negative integer, got '$SLOW_USEC'"
[[ $SMALL_FILES =~ ^[1-9][0-9]*$ ]] || die "BENCH_SMALL_FILES must be a positive integer, got '$SMALL_FILES'"
[[ $SMALL_KIB =~ ^[1-9][0-9]*$ ]] || die "BENCH_SMALL_KIB must be a positive integer, got '$SMALL_KIB'"
[[ $CAPPED_RUNS =~ ^[1-9][0-9]*$ ]] || die "BENCH_CAPPED_RUNS must be a positive integer, got '$CAPPED_RUNS'"
[[ $SEGMENTS =~ ^[1-9][0-9]*$ ]] || die "BENCH_SEGMENTS must be a positive integer, got '$SEGMENTS'"
[[ $WAITING_SECONDS =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "BENCH_WAITING_SECONDS must be a number of seconds, got '$WAITING_SECONDS'"
[[ $CAPPED_RATE =~ ^[1-9][0-9]*[kKmM]?$ ]] || die "BENCH_CAPPED_RATE must be an nginx rate such as 20m, got '$CAPPED_RATE'"
for row in ${ROWS//,/ }; do
    case $row in idle | big | small | waiting | capped | upload) ;; *) die "BENCH_ROWS: unknown row '$row' (known: idle, big, small, waiting, capped, upload)" ;; esac
done
want_row() { [[ ,$ROWS, == *",$1,"* ]]; }
# Without the rows that download or upload it, the big file is only the server's probe: keep it small.
if ! want_row big && ! want_row capped && ! want_row upload; then SIZE_MIB=1; fi
SIZE_BYTES=$((SIZE_MIB * 1024 * 1024))

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO_ROOT"
[[ -f Package.swift ]] || die "cannot find Package.swift in $REPO_ROOT"

# ---------------------------------------------------------------------------- cleanup
stop_pid() { # PID [seconds before SIGKILL]
    local pid=$1 grace=${2:-10} i
    kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < grace * 10; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        say "pid $pid did not stop after SIGTERM, sending SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
}

cleanup() {
    local status=$?
    trap - EXIT INT TERM
    local pid
    for pid in "${DAEMON_PIDS[@]}"; do stop_pid "$pid" 25; done
    if [[ -n $NGINX_PID ]]; then stop_pid "$NGINX_PID" 10; fi
    if [[ -n $WAITING_PID ]]; then stop_pid "$WAITING_PID" 5; fi
    if [[ -n $SCRATCH && -d $SCRATCH ]]; then rm -rf -- "$SCRATCH"; fi
    if ((status != 0 && FAILED == 0)); then say "FAIL: stopped with status $status"; fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------------------- tools
have() { command -v "$1" >/dev/null 2>&1 || [[ -x /usr/sbin/$1 || -x /sbin/$1 ]]; }

APT_UPDATED=0
apt_install() { # PACKAGE...
    have apt-get || die "missing $*, and apt-get is not available to install it"
    if ((APT_UPDATED == 0)); then
        say "apt-get update"
        apt-get update -qq >&2 || die "apt-get update failed"
        APT_UPDATED=1
    fi
    say "apt-get install -y $*"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}

if ! have nginx; then
    system_nginx_was_running=0
    [[ -s /run/nginx.pid ]] && system_nginx_was_running=1
    apt_install nginx-light || apt_install nginx || die "cannot install nginx"
    # Some images let the package start the system nginx: stop what the install started.
    if ((system_nginx_was_running == 0)) && [[ -s /run/nginx.pid ]]; then
        say "stopping the system nginx that the package installation started"
        PATH="$PATH:/usr/sbin" nginx -s quit 2>/dev/null || true
    fi
fi
have curl || apt_install curl || die "cannot install curl"
have aria2c || apt_install aria2 || die "cannot install aria2"
[[ -x /usr/bin/time ]] || apt_install time || die "cannot install GNU time"
have sha256sum || apt_install coreutils || die "cannot install coreutils"
if [[ $SKIP_BUILD != 1 ]] && ! pkg-config --exists libsystemd 2>/dev/null; then
    apt_install libsystemd-dev pkg-config || die "cannot install libsystemd-dev"
fi
NGINX=$(command -v nginx 2>/dev/null || true)
if [[ -z $NGINX && -x /usr/sbin/nginx ]]; then NGINX=/usr/sbin/nginx; fi
if [[ -z $NGINX && -x /sbin/nginx ]]; then NGINX=/sbin/nginx; fi
[[ -n $NGINX ]] || die "nginx is installed but not found on PATH or in /usr/sbin"
/usr/bin/time -f '%M' -o /dev/null true 2>/dev/null || die "/usr/bin/time is not GNU time (no -f/-o)"

# ---------------------------------------------------------------------------- helpers
now_ns() { date +%s%N; }
secs() { awk -v ns="$1" 'BEGIN { printf "%.3f", ns / 1e9 }'; }           # ns -> seconds
mib_of_kib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }      # KiB -> MiB
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
max_of() { printf '%s\n' "$@" | sort -g | tail -n 1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
mbps() { awk -v bytes="$SIZE_BYTES" -v ns="$1" 'BEGIN { if (ns > 0) printf "%.1f", bytes / 1e6 / (ns / 1e9); else print "n/a" }'; }
proc_kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status" 2>/dev/null; } # PID VmHWM|VmRSS -> KiB

SRC_SHA=""
verify() { # FILE LABEL CHECK_HASH(0|1)
    local file=$1 label=$2 check_hash=$3 size hash
    [[ -f $file ]] || die "$label: $file was not created"
    size=$(stat -c %s -- "$file")
    if ((size != SIZE_BYTES)); then
        if ((size > SIZE_BYTES)) && cmp -s -n "$SIZE_BYTES" -- "$file" "$SRC"; then
            printf 'bench: the first %s bytes equal the source; the %s extra bytes at the end begin with:\n' \
                "$SIZE_BYTES" $((size - SIZE_BYTES)) >&2
            tail -c +$((SIZE_BYTES + 1)) -- "$file" | head -c 300 | tr -c '[:print:]\n' '.' >&2 || true
            echo >&2
        fi
        die "$label: $file has $size bytes, expected $SIZE_BYTES"
    fi
    if ((check_hash)); then
        hash=$(sha256sum -- "$file" | cut -d' ' -f1)
        [[ $hash == "$SRC_SHA" ]] || die "$label: sha256 of $file is $hash, expected $SRC_SHA"
        say "$label: size and sha256 match the source"
    fi
}

# Runs a command under GNU time; sets WALL_NS, RSS_KIB and CPU_S (user + system seconds). The
# command's output goes to LOG.
WALL_NS=0
RSS_KIB=0
CPU_S=0
timed() { # LABEL LOG COMMAND...
    local label=$1 log=$2 t0 t1 rc=0
    shift 2
    t0=$(now_ns)
    /usr/bin/time -f '%M %U %S' -o "$SCRATCH/time.out" "$@" >"$log" 2>&1 || rc=$?
    t1=$(now_ns)
    if ((rc != 0)); then
        tail -n 20 "$log" >&2 || true
        die "$label exited with status $rc: $*"
    fi
    WALL_NS=$((t1 - t0))
    read -r RSS_KIB user_s sys_s < <(tail -n 1 "$SCRATCH/time.out")
    CPU_S=$(awk -v u="$user_s" -v s="$sys_s" 'BEGIN { printf "%.2f", u + s }')
}

# fsync one file (coreutils sync FILE), returning the nanoseconds it took.
fsync_ns() { local t0 t1; t0=$(now_ns); sync -- "$1"; t1=$(now_ns); echo $((t1 - t0)); }

between_runs() { rm -f -- "$@"; sync; }

# ---------------------------------------------------------------------------- build
BUILD_S="skipped (BENCH_SKIP_BUILD=1)"
[[ -z ${BENCH_BIN_DIR:-} ]] || SKIP_BUILD=1
if [[ $SKIP_BUILD != 1 ]]; then
    say "building transferd, transferctl and transferd-bench (release); this takes a few minutes on 2 cores"
    t0=$(now_ns)
    for product in transferd transferctl transferd-bench; do
        "$SWIFT" build -c release --static-swift-stdlib --product $product >&2 || die "swift build --product $product failed"
    done
    BUILD_S="$(secs $(($(now_ns) - t0)))s"
fi
BIN_DIR=${BENCH_BIN_DIR:-$("$SWIFT" build -c release --show-bin-path)}
TRANSFERD=$BIN_DIR/transferd
TRANSFERCTL=$BIN_DIR/transferctl
BENCH_TOOL=$BIN_DIR/transferd-bench
[[ -x $TRANSFERD && -x $TRANSFERCTL ]] || die "release binaries not found in $BIN_DIR (unset BENCH_SKIP_BUILD to build them)"
[[ -x $BENCH_TOOL ]] || say "no transferd-bench in $BIN_DIR: the small row runs without its URLSession floor"

# ---------------------------------------------------------------------------- scratch and test file
BASE_DIR=${BENCH_DIR:-/tmp}
mkdir -p -- "$BASE_DIR"
SCRATCH=$(mktemp -d "$BASE_DIR/transferd-bench.XXXXXX")
SCRATCH=$(cd "$SCRATCH" && pwd -P)
mkdir -p "$SCRATCH/www" "$SCRATCH/out" "$SCRATCH/nginx" "$SCRATCH/put"
SRC="$SCRATCH/www/test.bin"
OUT="$SCRATCH/out"
PUT_DIR="$SCRATCH/put" # where nginx writes the files PUT to /upload/

avail_kib=$(df -Pk -- "$SCRATCH" | awk 'NR == 2 { print $4 }')
need_kib=$((SIZE_MIB * 1024 * 3))
((avail_kib > need_kib)) || die "$SCRATCH has $((avail_kib / 1024)) MiB free; the benchmark needs about $((need_kib / 1024)) MiB"

say "creating a ${SIZE_MIB} MiB test file of random data in $SCRATCH"
t0=$(now_ns)
head -c "$SIZE_BYTES" /dev/urandom >"$SRC"
say "test file created in $(secs $(($(now_ns) - t0))) s"
SRC_SHA=$(sha256sum -- "$SRC" | cut -d' ' -f1)
sync

# ---------------------------------------------------------------------------- nginx
port_in_use() { (: </dev/tcp/127.0.0.1/"$1") 2>/dev/null; }

nginx_config() { # PORT
    local ngx=$SCRATCH/nginx temps="" module
    temps+="    client_body_temp_path $ngx/tmp/body;"$'\n'
    for module in proxy fastcgi uwsgi scgi; do
        if ! "$NGINX" -V 2>&1 | grep -q -- "--without-http_${module}_module"; then
            temps+="    ${module}_temp_path $ngx/tmp/$module;"$'\n'
        fi
    done
    cat <<EOF
daemon off;
worker_processes 1;
user root;
pid $ngx/nginx.pid;
error_log $ngx/error.log warn;
events { worker_connections 64; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    default_type application/octet-stream;
$temps    server {
        listen 127.0.0.1:$1;
        root $SCRATCH/www;
        location / { }
        location /capped/ { alias $SCRATCH/www/; limit_rate $CAPPED_RATE; }
        # The upload row PUTs here (ngx_http_dav_module: 201 Created, 204 when the file existed).
        # The body goes to a temporary file on the same filesystem, then is renamed into place.
        location /upload/ {
            alias $PUT_DIR/;
            dav_methods PUT;
            create_full_put_path on;
            client_max_body_size 0;
            client_body_temp_path $ngx/tmp/put;
        }
    }
}
EOF
}

start_nginx() {
    local attempt port i e_flag=()
    mkdir -p "$SCRATCH/nginx/tmp"
    "$NGINX" -h 2>&1 | grep -qE '^ +-e ' && e_flag=(-e "$SCRATCH/nginx/error.log")
    for attempt in 1 2 3 4 5; do
        port=$((20000 + RANDOM % 40000))
        port_in_use "$port" && continue
        nginx_config "$port" >"$SCRATCH/nginx/nginx.conf"
        "$NGINX" -p "$SCRATCH/nginx" "${e_flag[@]}" -c "$SCRATCH/nginx/nginx.conf" >>"$SCRATCH/nginx/error.log" 2>&1 &
        NGINX_PID=$!
        for ((i = 0; i < 100; i++)); do
            kill -0 "$NGINX_PID" 2>/dev/null || break
            if curl -sf -o /dev/null -r 0-0 "http://127.0.0.1:$port/test.bin"; then
                URL="http://127.0.0.1:$port/test.bin"
                say "nginx $("$NGINX" -v 2>&1 | sed 's/.*nginx\///') serving $URL (pid $NGINX_PID)"
                return 0
            fi
            sleep 0.1
        done
        say "nginx did not come up on port $port (attempt $attempt)"
        stop_pid "$NGINX_PID" 5
        NGINX_PID=""
    done
    die "cannot start nginx"
}
URL=""
start_nginx
served=$(curl -sfI "$URL" | tr -d '\r' | awk 'tolower($1) == "content-length:" { print $2 }')
[[ $served == "$SIZE_BYTES" ]] || die "nginx reports Content-Length '$served', expected $SIZE_BYTES"
curl -s -o /dev/null "$URL" # read the file once so that every tool finds it in the page cache

# ---------------------------------------------------------------------------- small files
SMALL_BYTES=$((SMALL_KIB * 1024))
if want_row small; then
    say "creating $SMALL_FILES files of $SMALL_KIB KiB in $SCRATCH/www/small"
    mkdir -p "$SCRATCH/www/small"
    head -c $((SMALL_FILES * SMALL_BYTES)) /dev/urandom >"$SCRATCH/small.all"
    (cd "$SCRATCH/www/small" && split -a 5 -d -b "$SMALL_BYTES" "$SCRATCH/small.all" f)
    rm -f "$SCRATCH/small.all"
    # One list for aria2c -i and transferctl submit -i (aria2's input-file format), one for curl -K.
    base_url=${URL%/test.bin}/small
    for f in "$SCRATCH"/www/small/f*; do
        name=${f##*/}
        printf '%s/%s\n  out=%s\n' "$base_url" "$name" "$name" >>"$SCRATCH/small.list"
        printf 'url = "%s/%s"\noutput = "%s"\n' "$base_url" "$name" "$name" >>"$SCRATCH/small.curl"
    done
    cat "$SCRATCH"/www/small/f* >/dev/null # into the page cache
fi

# ---------------------------------------------------------------------------- a server that waits
# Python's http.server, answering each request WAITING_SECONDS after it came (a slow API, an
# object store under load, a server far away): what each tool costs while it waits.
WAITING_PID=""
WAITING_FILES=16
if want_row waiting; then
    have python3 || apt_install python3
    mkdir -p "$SCRATCH/waiting-www"
    head -c 4096 /dev/urandom >"$SCRATCH/waiting-www/w.bin"
    python3 -c '
import functools, http.server, sys, time
class Waiting(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args): pass
    def do_GET(self):
        time.sleep(float(sys.argv[2]))
        self.path = self.path.split("?")[0]
        return super().do_GET()
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Waiting, directory=sys.argv[1]))
print(server.server_address[1], flush=True)
server.serve_forever()' "$SCRATCH/waiting-www" "$WAITING_SECONDS" >"$SCRATCH/waiting.port" 2>"$SCRATCH/waiting.log" &
    WAITING_PID=$!
    for _ in $(seq 100); do [[ -s $SCRATCH/waiting.port ]] && break; sleep 0.05; done
    [[ -s $SCRATCH/waiting.port ]] || die "the waiting server did not start: $(tail -3 "$SCRATCH/waiting.log")"
    waiting_url="http://127.0.0.1:$(cat "$SCRATCH/waiting.port")/w.bin"
    for ((i = 1; i <= WAITING_FILES; i++)); do
        printf '%s?%d\n  out=w%d\n' "$waiting_url" "$i" "$i" >>"$SCRATCH/waiting.list"
        printf 'url = "%s?%d"\noutput = "w%d"\n' "$waiting_url" "$i" "$i" >>"$SCRATCH/waiting.curl"
    done
fi

# ---------------------------------------------------------------------------- transferd
# As aria2c -j16 and curl --parallel-max 16 in the small row.
DAEMON_CONCURRENCY=16
DAEMON_PID=""
DAEMON_SOCKET=""
start_daemon() { # NAME [ENV=VALUE...]: sets DAEMON_PID and DAEMON_SOCKET
    local name=$1 i
    shift
    local dir=$SCRATCH/$name
    mkdir -p "$dir/state"
    DAEMON_SOCKET=$dir/transferd.sock
    if ((${#DAEMON_SOCKET} > 100)); then
        DAEMON_SOCKET=$(mktemp -u /tmp/transferd-bench.XXXXXX.sock)
    fi
    # Downloads land in the scratch directory, which must be an allowed root.
    # Every file of the small row comes from one host: 16 to it at once, as curl and aria2c are given
    # (the default max_connections_per_host, 2, would run two at a time).
    printf '{"max_concurrent_transfers": %s, "max_connections_per_host": %s, "log_level": "info", "allowed_roots": ["%s"]}\n' \
        "$DAEMON_CONCURRENCY" "$DAEMON_CONCURRENCY" "$SCRATCH" >"$dir/transferd.json"
    # Keep TRANSFERD_* settings of the caller's environment out of the daemon's configuration.
    local unset_env=() var
    for var in $(compgen -e); do [[ $var == TRANSFERD_* ]] && unset_env+=(-u "$var"); done
    env "${unset_env[@]}" "$@" "${DAEMON_BIN:-$TRANSFERD}" --socket "$DAEMON_SOCKET" --state-dir "$dir/state" \
        --config "$dir/transferd.json" >"$SCRATCH/$name.log" 2>&1 &
    DAEMON_PID=$!
    DAEMON_PIDS+=("$DAEMON_PID")
    for ((i = 0; i < 300; i++)); do
        kill -0 "$DAEMON_PID" 2>/dev/null || die "transferd ($name) exited during startup"
        if [[ -S $DAEMON_SOCKET ]] && "$TRANSFERCTL" status --socket "$DAEMON_SOCKET" >/dev/null 2>&1; then
            sleep 1 # let startup settle before reading the baseline RSS
            return 0
        fi
        sleep 0.1
    done
    die "transferd ($name) did not answer on $DAEMON_SOCKET within 30 s"
}

json_field() { sed -n "s/.*\"$1\":\"\\([^\"]*\\)\".*/\\1/p" "$2"; }
iso_ns() { date -d "$1" +%s%N; }

CAN_RESET_HWM=0
reset_hwm() { # PID: resets VmHWM to the current RSS (Linux clear_refs 5)
    if echo 5 >"/proc/$1/clear_refs" 2>/dev/null; then CAN_RESET_HWM=1; else CAN_RESET_HWM=0; fi
}

# The daemon's own memory (RssAnon: the mapped static binary is not counted) has no high-water
# mark of its own: a sampler reads it every 10 ms while a job runs and keeps the largest.
start_anon_sampler() { # PID: sets ANON_SAMPLER
    local pid=$1
    # What it is now, should the job end before the sampler has read it once.
    proc_kib "$pid" RssAnon >"$SCRATCH/anon-peak"
    (
        peak=$(cat "$SCRATCH/anon-peak")
        # The peak is written once, when the sampler is stopped (or the daemon is gone): never
        # read half-written.
        trap 'echo "$peak" >"$SCRATCH/anon-peak"; exit 0' TERM
        while kill -0 "$pid" 2>/dev/null; do
            kib=$(proc_kib "$pid" RssAnon) || true
            if [[ -n $kib ]] && ((kib > peak)); then peak=$kib; fi
            sleep 0.01
        done
        echo "$peak" >"$SCRATCH/anon-peak"
    ) &
    ANON_SAMPLER=$!
}
stop_anon_sampler() { # sets ANON_PEAK_KIB
    kill "$ANON_SAMPLER" 2>/dev/null || true
    wait "$ANON_SAMPLER" 2>/dev/null || true
    ANON_PEAK_KIB=$(cat "$SCRATCH/anon-peak")
}

# The CPU time (user + system, in clock ticks) a process has used.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
cpu_since() { awk -v a="$2" -v b="$(cpu_ticks "$1")" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", (b - a) / hz }'; } # PID TICKS0

# Submits one download and waits; sets WALL_NS (submit to exit), DAEMON_NS (started_at to
# finished_at as the daemon recorded them), PEAK_KIB (the daemon's VmHWM during the run),
# ANON_PEAK_KIB (its largest RssAnon sampled) and CPU_S (the daemon's CPU seconds during the run).
DAEMON_NS=0
PEAK_KIB=0
BEFORE_KIB=0
transferd_run() { # LABEL PID SOCKET DEST [URL [SUBMIT OPTION...]]
    local label=$1 pid=$2 socket=$3 dest=$4 url=${5:-$URL}
    shift $(($# < 5 ? $# : 5))
    transferctl_job_run "$label" "$pid" download submit --socket "$socket" --wait --json "$@" "$url" "$dest"
}

# Runs one `transferctl ... --wait --json` job (the download or upload of WHAT) against the daemon
# PID and measures it: WALL_NS (start to exit), DAEMON_NS (started_at to finished_at), PEAK_KIB,
# ANON_PEAK_KIB, BEFORE_KIB and CPU_S; stops the benchmark unless the job completed.
transferctl_job_run() { # LABEL PID WHAT TRANSFERCTL-ARGUMENT...
    local label=$1 pid=$2 what=$3 t0 t1 rc=0 state started finished cpu0
    shift 3
    BEFORE_KIB=$(proc_kib "$pid" VmRSS)
    reset_hwm "$pid"
    start_anon_sampler "$pid"
    cpu0=$(cpu_ticks "$pid")
    t0=$(now_ns)
    "$TRANSFERCTL" "$@" >"$SCRATCH/job.json" 2>"$SCRATCH/transferctl.err" || rc=$?
    t1=$(now_ns)
    stop_anon_sampler
    PEAK_KIB=$(proc_kib "$pid" VmHWM)
    CPU_S=$(cpu_since "$pid" "$cpu0")
    kill -0 "$pid" 2>/dev/null || die "$label: transferd exited during the $what"
    state=$(json_field state "$SCRATCH/job.json")
    if ((rc != 0)) || [[ $state != completed ]]; then
        cat "$SCRATCH/job.json" "$SCRATCH/transferctl.err" >&2 || true
        die "$label: transferctl $1 --wait exited $rc, job state '$state'"
    fi
    WALL_NS=$((t1 - t0))
    started=$(json_field started_at "$SCRATCH/job.json")
    finished=$(json_field finished_at "$SCRATCH/job.json")
    if [[ -n $started && -n $finished ]]; then
        DAEMON_NS=$(($(iso_ns "$finished") - $(iso_ns "$started")))
    else
        DAEMON_NS=0
    fi
}

# Submits the small files in one `submit -i` and waits for all; sets WALL_NS, CPU_S, PEAK_KIB.
transferd_small_run() { # LABEL PID SOCKET DIR [LIST]
    local label=$1 pid=$2 socket=$3 dir=$4 list=${5:-$SCRATCH/small.list} t0 t1 rc=0 cpu0
    reset_hwm "$pid"
    cpu0=$(cpu_ticks "$pid")
    t0=$(now_ns)
    "$TRANSFERCTL" submit --socket "$socket" --wait -i "$list" -d "$dir" >"$SCRATCH/small.out" 2>"$SCRATCH/transferctl.err" || rc=$?
    t1=$(now_ns)
    PEAK_KIB=$(proc_kib "$pid" VmHWM)
    CPU_S=$(cpu_since "$pid" "$cpu0")
    if ((rc != 0)); then
        tail -n 20 "$SCRATCH/transferctl.err" >&2 || true
        die "$label: transferctl submit -i --wait exited $rc"
    fi
    WALL_NS=$((t1 - t0))
}

# Uploads FILE to URL with `transferctl upload --wait` (a plain PUT); measures as transferd_run does,
# WALL_NS covering the hand-off into the spool and the upload.
transferd_upload_run() { # LABEL PID SOCKET FILE URL
    transferctl_job_run "$1" "$2" upload upload --socket "$3" --resumable off --wait --json "$4" "$5"
}

# The spool hand-off alone: `transferctl upload` without --wait returns once the daemon has copied
# FILE into its spool (copy_file_range) and synced the copy. Sets WALL_NS (start to exit), CPU_S,
# BEFORE_KIB and PEAK_KIB (the daemon's, until transferctl exits), then waits for the upload to end
# so that it does not overlap the next run.
transferd_handoff_run() { # LABEL PID SOCKET FILE URL
    local label=$1 pid=$2 socket=$3 file=$4 url=$5 t0 t1 rc=0 id state cpu0
    BEFORE_KIB=$(proc_kib "$pid" VmRSS)
    reset_hwm "$pid"
    cpu0=$(cpu_ticks "$pid")
    t0=$(now_ns)
    "$TRANSFERCTL" upload --socket "$socket" --resumable off "$file" "$url" >"$SCRATCH/handoff.out" 2>"$SCRATCH/transferctl.err" || rc=$?
    t1=$(now_ns)
    PEAK_KIB=$(proc_kib "$pid" VmHWM)
    CPU_S=$(cpu_since "$pid" "$cpu0")
    id=$(head -n 1 "$SCRATCH/handoff.out")
    if ((rc != 0)) || [[ -z $id ]]; then
        cat "$SCRATCH/handoff.out" "$SCRATCH/transferctl.err" >&2 || true
        die "$label: transferctl upload exited $rc without a job id"
    fi
    WALL_NS=$((t1 - t0))
    rc=0
    "$TRANSFERCTL" wait --socket "$socket" --json "$id" >"$SCRATCH/job.json" 2>"$SCRATCH/transferctl.err" || rc=$?
    kill -0 "$pid" 2>/dev/null || die "$label: transferd exited during the upload"
    state=$(json_field state "$SCRATCH/job.json")
    if ((rc != 0)) || [[ $state != completed ]]; then
        cat "$SCRATCH/job.json" "$SCRATCH/transferctl.err" >&2 || true
        die "$label: transferctl wait $id exited $rc, job state '$state'"
    fi
}

# Checks that DIR holds the small files with their sizes (and, when CHECK_HASH, their bytes).
verify_small() { # DIR LABEL CHECK_HASH
    local dir=$1 label=$2 check_hash=$3 count
    count=$(find "$dir" -maxdepth 1 -type f -size "${SMALL_BYTES}c" | wc -l)
    ((count == SMALL_FILES)) || die "$label: $dir holds $count files of $SMALL_BYTES bytes, expected $SMALL_FILES"
    if ((check_hash)); then
        diff -r -q "$SCRATCH/www/small" "$dir" >/dev/null || die "$label: the files in $dir differ from the source"
        say "$label: all $SMALL_FILES files match the source"
    fi
}

# Whether this transferctl knows --segments (one file over several connections).
HAS_SEGMENTS=0
# (The help is read whole: grep -q would stop reading early, and pipefail would count the broken pipe.)
SUBMIT_HELP=$("$TRANSFERCTL" submit --help 2>&1 || true)
if [[ $SUBMIT_HELP == *--segments* ]]; then HAS_SEGMENTS=1; fi

say "starting transferd (release) for the benchmark"
start_daemon transferd
MAIN_PID=$DAEMON_PID
MAIN_SOCKET=$DAEMON_SOCKET
BASE_RSS_KIB=$(proc_kib "$MAIN_PID" VmRSS)
BASE_HWM_KIB=$(proc_kib "$MAIN_PID" VmHWM)
BASE_ANON_KIB=$(proc_kib "$MAIN_PID" RssAnon)
BASE_FILE_KIB=$(proc_kib "$MAIN_PID" RssFile)
say "transferd pid $MAIN_PID: baseline VmRSS $(mib_of_kib "$BASE_RSS_KIB") MiB, VmHWM $(mib_of_kib "$BASE_HWM_KIB") MiB"
if [[ -n $BASELINE_DIR ]]; then
    [[ -x $BASELINE_DIR/transferd ]] || die "BENCH_BASELINE=$BASELINE_DIR holds no transferd binary"
    say "starting the baseline transferd from $BASELINE_DIR"
    DAEMON_BIN=$BASELINE_DIR/transferd start_daemon transferd-baseline
    BL_PID=$DAEMON_PID
    BL_SOCKET=$DAEMON_SOCKET
    BL_BASE_RSS_KIB=$(proc_kib "$BL_PID" VmRSS)
    BL_BASE_ANON_KIB=$(proc_kib "$BL_PID" RssAnon)
    BL_BASE_FILE_KIB=$(proc_kib "$BL_PID" RssFile)
fi

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
REPORT=() # the lines of each row, printed at the end
GOALS=()  # the issue's goals this run measured: "measure|value|goal|met"
goal() { # NAME VALUE LIMIT UNIT
    local met
    met=$(awk -v v="$2" -v g="$3" 'BEGIN { print (v <= g) ? "met" : "NOT met" }')
    GOALS+=("$(printf '%-52s %10s %-5s (goal <= %s %s) %s' "$1" "$2" "$4" "$3" "$4" "$met")")
}
if_baseline() { [[ -z $BASELINE_DIR ]] || echo "$1"; } # TEXT: printed only when a baseline runs
join_secs() { local v out=""; for v in "$@"; do out+="$(secs "$v") "; done; echo "${out% }"; }

# ---------------------------------------------------------------------------- row: idle
if want_row idle; then
    REPORT+=("" "== idle: RSS of a freshly started daemon, 1 s after it answers =="
        "$(printf '%-30s %10s %10s %10s' "daemon" "rss_MiB" "anon_MiB" "file_MiB")"
        "$(printf '%-30s %10s %10s %10s' "transferd" "$(mib_of_kib "$BASE_RSS_KIB")" "$(mib_of_kib "$BASE_ANON_KIB")" "$(mib_of_kib "$BASE_FILE_KIB")")")
    if [[ -n $BASELINE_DIR ]]; then
        REPORT+=("$(printf '%-30s %10s %10s %10s' "baseline" "$(mib_of_kib "$BL_BASE_RSS_KIB")" "$(mib_of_kib "$BL_BASE_ANON_KIB")" "$(mib_of_kib "$BL_BASE_FILE_KIB")")")
    fi
    REPORT+=("file = pages of the executable and libraries mapped (shared, clean); anon = the daemon's own memory")
    goal "idle RSS after start (MiB)" "$(mib_of_kib "$BASE_RSS_KIB")" 24 MiB
fi

# ---------------------------------------------------------------------------- row: big
row() { # TOOL NS CPU RSS_KIB RATIO
    printf '%-30s %10s %10s %8s %14s %10s\n' "$1" "$(secs "$2")" "$(mbps "$2")" "$3" "$4" "$5"
}
if want_row big; then
    declare -a CURL_NS=() CURL_RSS=() CURL_SYNC=() CURL_CPU=() ARIA_NS=() ARIA_RSS=() ARIA_SYNC=() ARIA_CPU=()
    declare -a ARIAD_NS=() ARIAD_RSS=() ARIAD_CPU=() TD_NS=() TD_DAEMON_NS=() TD_RSS=() TD_CPU=() TD_ANON=()
    declare -a BL_NS=() BL_DAEMON_NS=() BL_RSS=() BL_CPU=() BL_ANON=()
    # One function per tool, run in an order that changes from run to run: each run starts with
    # the next tool in turn, and every other run goes backwards, so that no tool always runs first
    # or always after the same one. The state one run leaves (freed page cache, ext4's freed blocks)
    # changed the next one's CPU by up to 2x on the virtual machine these figures come from.
    big_curl() {
        dest=$OUT/curl.bin
        between_runs "$dest"
        timed "curl" "$SCRATCH/curl.log" curl -s -S -f -o "$dest" "$URL"
        sync_ns=$(fsync_ns "$dest")
        verify "$dest" "curl ($tag)" "$first"
        CURL_NS+=("$WALL_NS"); CURL_RSS+=("$RSS_KIB"); CURL_SYNC+=("$sync_ns"); CURL_CPU+=("$CPU_S")
        echo "$tag: curl wall_s=$(secs "$WALL_NS") cpu_s=$CPU_S fsync_after_s=$(secs "$sync_ns") peak_rss_mib=$(mib_of_kib "$RSS_KIB")"
    }
    big_aria2() {
        dest=$OUT/aria2.bin
        between_runs "$dest" "$dest.aria2"
        timed "aria2c" "$SCRATCH/aria2.log" aria2c -x1 -s1 --file-allocation=none --allow-overwrite=true \
            --summary-interval=0 --console-log-level=warn -d "$OUT" -o aria2.bin "$URL"
        sync_ns=$(fsync_ns "$dest")
        verify "$dest" "aria2c ($tag)" "$first"
        ARIA_NS+=("$WALL_NS"); ARIA_RSS+=("$RSS_KIB"); ARIA_SYNC+=("$sync_ns"); ARIA_CPU+=("$CPU_S")
        echo "$tag: aria2c wall_s=$(secs "$WALL_NS") cpu_s=$CPU_S fsync_after_s=$(secs "$sync_ns") peak_rss_mib=$(mib_of_kib "$RSS_KIB")"
    }
    big_aria2_defaults() {
        dest=$OUT/aria2-defaults.bin
        between_runs "$dest" "$dest.aria2"
        timed "aria2c (defaults)" "$SCRATCH/aria2-defaults.log" aria2c \
            --summary-interval=0 --console-log-level=warn -d "$OUT" -o aria2-defaults.bin "$URL"
        verify "$dest" "aria2c defaults ($tag)" "$first"
        ARIAD_NS+=("$WALL_NS"); ARIAD_RSS+=("$RSS_KIB"); ARIAD_CPU+=("$CPU_S")
        echo "$tag: aria2c_defaults wall_s=$(secs "$WALL_NS") cpu_s=$CPU_S peak_rss_mib=$(mib_of_kib "$RSS_KIB")"
    }
    big_daemon() { # NAME PID SOCKET ARRAY_PREFIX (TD or BL)
        local -n d_ns=${4}_NS d_daemon_ns=${4}_DAEMON_NS d_rss=${4}_RSS d_cpu=${4}_CPU d_anon=${4}_ANON
        dest=$OUT/$1.bin
        between_runs "$dest"
        transferd_run "$1 ($tag)" "$2" "$3" "$dest"
        verify "$dest" "$1 ($tag)" "$first"
        d_ns+=("$WALL_NS"); d_daemon_ns+=("$DAEMON_NS"); d_rss+=("$PEAK_KIB"); d_cpu+=("$CPU_S"); d_anon+=("$ANON_PEAK_KIB")
        echo "$tag: $1 wall_s=$(secs "$WALL_NS") daemon_s=$(secs "$DAEMON_NS") cpu_s=$CPU_S rss_before_mib=$(mib_of_kib "$BEFORE_KIB") peak_rss_mib=$(mib_of_kib "$PEAK_KIB") peak_anon_mib=$(mib_of_kib "$ANON_PEAK_KIB")"
    }
    big_transferd() { big_daemon transferd "$MAIN_PID" "$MAIN_SOCKET" TD; }
    big_baseline() { big_daemon baseline "$BL_PID" "$BL_SOCKET" BL; }
    BIG_TOOLS=(curl aria2 aria2_defaults transferd)
    [[ -z $BASELINE_DIR ]] || BIG_TOOLS+=(baseline)
    for ((run = 1; run <= RUNS; run++)); do
        first=$((run == 1 ? 1 : 0))
        tag="big run $run/$RUNS"
        for ((i = 0; i < ${#BIG_TOOLS[@]}; i++)); do
            step=$((run % 2 ? i : ${#BIG_TOOLS[@]} - 1 - i))
            "big_${BIG_TOOLS[(step + run - 1) % ${#BIG_TOOLS[@]}]}"
        done
        between_runs "$OUT"/*.bin
    done
    # transferd hashes every download as it arrives (the job's sha256); curl and aria2c do not. The
    # user CPU of OpenSSL's SHA-256 over the same page-cached file is that share (coreutils'
    # sha256sum does not use the CPU's SHA instructions and takes several times longer).
    SHA_CPU=()
    if have openssl; then
        for ((run = 1; run <= RUNS; run++)); do
            timed "openssl dgst -sha256" "$SCRATCH/sha256.log" openssl dgst -sha256 -- "$SRC"
            SHA_CPU+=("$user_s")
        done
    else
        SHA_CPU=(0)
    fi
    m_sha_cpu=$(median "${SHA_CPU[@]}")
    m_curl=$(median "${CURL_NS[@]}")
    m_curl_sync=$(median "${CURL_SYNC[@]}")
    m_aria=$(median "${ARIA_NS[@]}")
    m_aria_sync=$(median "${ARIA_SYNC[@]}")
    m_ariad=$(median "${ARIAD_NS[@]}")
    m_td=$(median "${TD_NS[@]}")
    m_td_daemon=$(median "${TD_DAEMON_NS[@]}")
    m_td_cpu=$(median "${TD_CPU[@]}")
    m_curl_cpu=$(median "${CURL_CPU[@]}")
    curl_plus_sync=$(awk -v a="$m_curl" -v b="$m_curl_sync" 'BEGIN { printf "%.0f", a + b }')
    aria_plus_sync=$(awk -v a="$m_aria" -v b="$m_aria_sync" 'BEGIN { printf "%.0f", a + b }')
    if ((CAN_RESET_HWM)); then hwm_note="per-run VmHWM, reset to the current RSS before each run"; else hwm_note="VmHWM is cumulative: max since start"; fi
    td_peak=$(max_of "${TD_RSS[@]}")
    REPORT+=("" "== big: one ${SIZE_MIB} MiB file, $RUNS runs (median), nginx on 127.0.0.1, page-cached =="
        "MB/s = 10^6 bytes/s; cpu_s = CPU seconds of the process (transferd: the daemon's); peak RSS = max over runs (curl/aria2: GNU time; transferd: daemon $hwm_note)"
        "$(printf '%-30s %10s %10s %8s %14s %10s' "tool" "median_s" "MB/s" "cpu_s" "peak_rss_MiB" "vs_curl")"
        "$(row "curl" "$m_curl" "$m_curl_cpu" "$(mib_of_kib "$(max_of "${CURL_RSS[@]}")")" "1.00")"
        "$(row "aria2c -x1 -s1 (no prealloc)" "$m_aria" "$(median "${ARIA_CPU[@]}")" "$(mib_of_kib "$(max_of "${ARIA_RSS[@]}")")" "$(ratio "$m_aria" "$m_curl")")"
        "$(row "aria2c (defaults)" "$m_ariad" "$(median "${ARIAD_CPU[@]}")" "$(mib_of_kib "$(max_of "${ARIAD_RSS[@]}")")" "$(ratio "$m_ariad" "$m_curl")")"
        "$(row "transferd (submit->completed)" "$m_td" "$m_td_cpu" "$(mib_of_kib "$td_peak")" "$(ratio "$m_td" "$m_curl")")"
        "$(row "transferd (daemon-side)" "$m_td_daemon" "-" "-" "$(ratio "$m_td_daemon" "$m_curl")")")
    if [[ -n $BASELINE_DIR ]]; then
        m_bl=$(median "${BL_NS[@]}")
        m_bl_daemon=$(median "${BL_DAEMON_NS[@]}")
        REPORT+=("$(row "baseline (submit->completed)" "$m_bl" "$(median "${BL_CPU[@]}")" "$(mib_of_kib "$(max_of "${BL_RSS[@]}")")" "$(ratio "$m_bl" "$m_curl")")"
            "$(row "baseline (daemon-side)" "$m_bl_daemon" "-" "-" "$(ratio "$m_bl_daemon" "$m_curl")")")
    fi
    REPORT+=("$(row "curl + fsync of the file" "$curl_plus_sync" "-" "-" "$(ratio "$curl_plus_sync" "$m_curl")")"
        "$(row "aria2c -x1 -s1 + fsync" "$aria_plus_sync" "-" "-" "$(ratio "$aria_plus_sync" "$m_curl")")"
        "per-run wall seconds: curl=[$(join_secs "${CURL_NS[@]}")] aria2c=[$(join_secs "${ARIA_NS[@]}")] aria2c_defaults=[$(join_secs "${ARIAD_NS[@]}")] transferd=[$(join_secs "${TD_NS[@]}")]"
        "per-run CPU seconds: curl=[${CURL_CPU[*]}] aria2c=[${ARIA_CPU[*]}] transferd=[${TD_CPU[*]}]$(if_baseline " baseline=[${BL_CPU[*]}]")"
        "transferd peak RSS per run: [$(for v in "${TD_RSS[@]}"; do printf '%s ' "$(mib_of_kib "$v")"; done | sed 's/ $//')] MiB$(if_baseline "; baseline [$(for v in "${BL_RSS[@]}"; do printf '%s ' "$(mib_of_kib "$v")"; done | sed 's/ $//')] MiB")"
        "transferd peak RssAnon per run (its own memory, sampled every 10 ms): [$(for v in "${TD_ANON[@]}"; do printf '%s ' "$(mib_of_kib "$v")"; done | sed 's/ $//')] MiB$(if_baseline "; baseline [$(for v in "${BL_ANON[@]}"; do printf '%s ' "$(mib_of_kib "$v")"; done | sed 's/ $//')] MiB")"
        "SHA-256 of the file (openssl dgst, user CPU): ${m_sha_cpu} s (median of [${SHA_CPU[*]}]); transferd computes it while downloading"
        "ratios: transferd/curl time $(ratio "$m_td" "$m_curl"), transferd/(curl+fsync) $(ratio "$m_td" "$curl_plus_sync"), transferd/curl CPU $(ratio "$m_td_cpu" "$m_curl_cpu"), transferd/(curl + SHA-256) CPU $(ratio "$m_td_cpu" "$(awk -v a="$m_curl_cpu" -v b="$m_sha_cpu" 'BEGIN { print a + b }')")")
    goal "$SIZE_MIB MiB download: daemon CPU, x curl's (medians)" "$(ratio "$m_td_cpu" "$m_curl_cpu")" 1.5 x
    goal "$SIZE_MIB MiB download: wall, x aria2c's (medians)" "$(ratio "$m_td" "$m_aria")" 1.0 x
    goal "$SIZE_MIB MiB download: daemon peak RssAnon (max)" "$(mib_of_kib "$(max_of "${TD_ANON[@]}")")" 32 MiB
fi

# ---------------------------------------------------------------------------- row: small
if want_row small; then
    declare -a SA_NS=() SA_CPU=() SC_NS=() SC_CPU=() ST_NS=() ST_CPU=() ST_RSS=() SB_NS=() SB_CPU=()
    declare -a SP_NS=() SP_CPU=() SD_NS=() SD_CPU=()
    for ((run = 1; run <= RUNS; run++)); do
        first=$((run == 1 ? 1 : 0))
        tag="small run $run/$RUNS"

        # Each run lands in a directory of its own, and none is removed until the row ends: on ext4
        # without a journal, creating a file skips every inode freed in the last 30 s, one by one,
        # so files removed just before a run would make that run measure the filesystem.
        dir=$OUT/small-aria2-$run
        sync
        timed "aria2c -j16 -i" "$SCRATCH/small-aria2.log" aria2c -j16 --file-allocation=none --allow-overwrite=true \
            --summary-interval=0 --console-log-level=warn -d "$dir" -i "$SCRATCH/small.list"
        verify_small "$dir" "aria2c ($tag)" "$first"
        SA_NS+=("$WALL_NS"); SA_CPU+=("$CPU_S")
        echo "$tag: aria2c_j16 wall_s=$(secs "$WALL_NS") cpu_s=$CPU_S"

        dir=$OUT/small-curl-$run
        mkdir -p "$dir"; sync
        timed "curl --parallel" "$SCRATCH/small-curl.log" curl -s -S -f --parallel --parallel-max 16 \
            --output-dir "$dir" -K "$SCRATCH/small.curl"
        verify_small "$dir" "curl ($tag)" "$first"
        SC_NS+=("$WALL_NS"); SC_CPU+=("$CPU_S")
        echo "$tag: curl_parallel wall_s=$(secs "$WALL_NS") cpu_s=$CPU_S"

        # The floor under the premise: the same files through one bare URLSession, 16 at a time,
        # without the daemon; plain (written only, as curl) and durable (each file synced,
        # renamed and its directory synced, alone: durability rule 5 without the journal).
        if [[ -x $BENCH_TOOL ]]; then
            for mode in plain durable; do
                dir=$OUT/small-urlsession-$mode-$run
                mkdir -p "$dir"; sync
                timed "transferd-bench urlsession-fetch ($mode)" "$SCRATCH/small-urlsession.log" \
                    "$BENCH_TOOL" urlsession-fetch "$SCRATCH/small.list" "$dir" 16 $mode
                verify_small "$dir" "URLSession $mode ($tag)" "$first"
                if [[ $mode == plain ]]; then SP_NS+=("$WALL_NS"); SP_CPU+=("$CPU_S"); else SD_NS+=("$WALL_NS"); SD_CPU+=("$CPU_S"); fi
                echo "$tag: urlsession_$mode wall_s=$(secs "$WALL_NS") cpu_s=$CPU_S"
            done
        fi

        dir=$OUT/small-transferd-$run
        mkdir -p "$dir"; sync
        transferd_small_run "transferd ($tag)" "$MAIN_PID" "$MAIN_SOCKET" "$dir"
        verify_small "$dir" "transferd ($tag)" "$first"
        ST_NS+=("$WALL_NS"); ST_CPU+=("$CPU_S"); ST_RSS+=("$PEAK_KIB")
        echo "$tag: transferd wall_s=$(secs "$WALL_NS") cpu_s=$CPU_S peak_rss_mib=$(mib_of_kib "$PEAK_KIB")"

        if [[ -n $BASELINE_DIR ]]; then
            dir=$OUT/small-baseline-$run
            mkdir -p "$dir"; sync
            transferd_small_run "baseline ($tag)" "$BL_PID" "$BL_SOCKET" "$dir"
            verify_small "$dir" "baseline ($tag)" "$first"
            SB_NS+=("$WALL_NS"); SB_CPU+=("$CPU_S")
            echo "$tag: baseline wall_s=$(secs "$WALL_NS") cpu_s=$CPU_S"
        fi
    done
    rm -rf "$OUT"/small-*
    m_sa=$(median "${SA_NS[@]}")
    m_sc=$(median "${SC_NS[@]}")
    m_st=$(median "${ST_NS[@]}")
    srow() { printf '%-36s %10s %8s %10s %10s' "$1" "$(secs "$2")" "$3" "$(ratio "$2" "$m_sa")" "$(ratio "$2" "$m_sc")"; }
    REPORT+=("" "== small: $SMALL_FILES files of $SMALL_KIB KiB, 16 at a time, $RUNS runs (median); transferd: one submit -i, --wait until all landed =="
        "$(printf '%-36s %10s %8s %10s %10s' "tool" "median_s" "cpu_s" "vs_aria2" "vs_curl")"
        "$(srow "aria2c -j16 -i LIST" "$m_sa" "$(median "${SA_CPU[@]}")")"
        "$(srow "curl --parallel --parallel-max 16" "$m_sc" "$(median "${SC_CPU[@]}")")")
    if ((${#SP_NS[@]} > 0)); then
        REPORT+=("$(srow "URLSession alone, 16 tasks" "$(median "${SP_NS[@]}")" "$(median "${SP_CPU[@]}")")"
            "$(srow "URLSession alone + rule 5 per file" "$(median "${SD_NS[@]}")" "$(median "${SD_CPU[@]}")")")
    fi
    REPORT+=("$(srow "transferd (submit -i --wait)" "$m_st" "$(median "${ST_CPU[@]}")")")
    if [[ -n $BASELINE_DIR ]]; then
        REPORT+=("$(srow "baseline (submit -i --wait)" "$(median "${SB_NS[@]}")" "$(median "${SB_CPU[@]}")")")
    fi
    REPORT+=("per-run wall seconds: aria2c=[$(join_secs "${SA_NS[@]}")] curl=[$(join_secs "${SC_NS[@]}")] transferd=[$(join_secs "${ST_NS[@]}")]$(if_baseline " baseline=[$(join_secs "${SB_NS[@]}")]")"
        "transferd: max_concurrent_transfers and max_connections_per_host $DAEMON_CONCURRENCY; the daemon's CPU seconds; each file is synced before it lands")
    if ((${#SP_NS[@]} > 0)); then
        REPORT+=("URLSession alone: transferd-bench urlsession-fetch, one URLSession and its delegate, no daemon, no journal; its CPU is the process's."
            "per-run wall seconds: URLSession alone=[$(join_secs "${SP_NS[@]}")] + rule 5=[$(join_secs "${SD_NS[@]}")]"
            "ratios: transferd/(URLSession + rule 5) $(ratio "$m_st" "$(median "${SD_NS[@]}")"), URLSession alone/curl $(ratio "$(median "${SP_NS[@]}")" "$m_sc")")
    fi
    goal "$SMALL_FILES x $SMALL_KIB KiB: submit to all landed, x curl's" "$(ratio "$m_st" "$m_sc")" 2.0 x
fi

# ---------------------------------------------------------------------------- row: waiting
verify_waiting() { # DIR LABEL
    local f
    (($(find "$1" -type f | wc -l) == WAITING_FILES)) || die "$2: $(find "$1" -type f | wc -l) files instead of $WAITING_FILES"
    for f in "$1"/*; do cmp -s "$f" "$SCRATCH/waiting-www/w.bin" || die "$2: $f differs from what the server sent"; done
}
waiting_daemon_run() { # NAME PID SOCKET: one run of the waiting list on that daemon; sets WALL_NS and CPU_S
    local dir=$OUT/waiting-$1
    rm -rf "$dir"; mkdir -p "$dir"
    transferd_small_run "$1 ($tag)" "$2" "$3" "$dir" "$SCRATCH/waiting.list"
    verify_waiting "$dir" "$1 ($tag)"
    echo "$tag: $1 wall_s=$(secs "$WALL_NS") cpu_s=$CPU_S"
}
if want_row waiting; then
    declare -a WC_NS=() WC_CPU=() WT_NS=() WT_CPU=() WB_NS=() WB_CPU=()
    for ((run = 1; run <= RUNS; run++)); do
        tag="waiting run $run/$RUNS"
        dir=$OUT/waiting-curl
        rm -rf "$dir"; mkdir -p "$dir"
        timed "curl --parallel" "$SCRATCH/waiting-curl.log" curl -s -S -f --parallel --parallel-max 16 --output-dir "$dir" -K "$SCRATCH/waiting.curl"
        verify_waiting "$dir" "curl ($tag)"
        WC_NS+=("$WALL_NS"); WC_CPU+=("$CPU_S")
        echo "$tag: curl_parallel wall_s=$(secs "$WALL_NS") cpu_s=$CPU_S"
        waiting_daemon_run transferd "$MAIN_PID" "$MAIN_SOCKET"
        WT_NS+=("$WALL_NS"); WT_CPU+=("$CPU_S")
        if [[ -n $BASELINE_DIR ]]; then
            waiting_daemon_run baseline "$BL_PID" "$BL_SOCKET"
            WB_NS+=("$WALL_NS"); WB_CPU+=("$CPU_S")
        fi
        rm -rf "$OUT"/waiting-*
    done
    m_wt_cpu=$(median "${WT_CPU[@]}")
    wrow() { printf '%-36s %10s %8s' "$1" "$(secs "$2")" "$3"; }
    REPORT+=("" "== waiting: $WAITING_FILES files of 4 KiB from a server that answers each request after $WAITING_SECONDS s (Python's http.server), 16 at a time, $RUNS runs (median) =="
        "$(printf '%-36s %10s %8s' "tool" "median_s" "cpu_s")"
        "$(wrow "curl --parallel --parallel-max 16" "$(median "${WC_NS[@]}")" "$(median "${WC_CPU[@]}")")"
        "$(wrow "transferd (submit -i --wait)" "$(median "${WT_NS[@]}")" "$m_wt_cpu")")
    if [[ -n $BASELINE_DIR ]]; then
        REPORT+=("$(wrow "baseline (submit -i --wait)" "$(median "${WB_NS[@]}")" "$(median "${WB_CPU[@]}")")")
    fi
    REPORT+=("per-run CPU seconds: curl=[${WC_CPU[*]}] transferd=[${WT_CPU[*]}]$(if_baseline " baseline=[${WB_CPU[*]}]")"
        "transferd: the daemon's CPU seconds from submit to the last file landed; it should sleep while the server thinks")
    goal "$WAITING_FILES files, server waits ${WAITING_SECONDS} s: daemon CPU seconds" "$m_wt_cpu" 0.25 s
fi

# ---------------------------------------------------------------------------- row: capped
if want_row capped; then
    CAPPED_URL=${URL%/test.bin}/capped/test.bin
    declare -a CC_NS=() CA_NS=() CT_NS=() CS_NS=() CT_CPU=() CS_CPU=() CA_CPU=()
    for ((run = 1; run <= CAPPED_RUNS; run++)); do
        first=$((run == 1 ? 1 : 0))
        tag="capped run $run/$CAPPED_RUNS"

        dest=$OUT/curl.bin
        between_runs "$dest"
        timed "curl (capped)" "$SCRATCH/curl.log" curl -s -S -f -o "$dest" "$CAPPED_URL"
        verify "$dest" "curl ($tag)" "$first"
        CC_NS+=("$WALL_NS")
        echo "$tag: curl wall_s=$(secs "$WALL_NS")"

        dest=$OUT/aria2.bin
        between_runs "$dest" "$dest.aria2"
        timed "aria2c -x$SEGMENTS -s$SEGMENTS (capped)" "$SCRATCH/aria2.log" aria2c -x"$SEGMENTS" -s"$SEGMENTS" -k1M \
            --file-allocation=none --allow-overwrite=true --summary-interval=0 --console-log-level=warn -d "$OUT" -o aria2.bin "$CAPPED_URL"
        verify "$dest" "aria2c -x$SEGMENTS ($tag)" "$first"
        CA_NS+=("$WALL_NS"); CA_CPU+=("$CPU_S")
        echo "$tag: aria2c_x$SEGMENTS wall_s=$(secs "$WALL_NS") cpu_s=$CPU_S"

        dest=$OUT/transferd.bin
        between_runs "$dest"
        transferd_run "transferd ($tag)" "$MAIN_PID" "$MAIN_SOCKET" "$dest" "$CAPPED_URL"
        verify "$dest" "transferd ($tag)" "$first"
        CT_NS+=("$WALL_NS"); CT_CPU+=("$CPU_S")
        echo "$tag: transferd wall_s=$(secs "$WALL_NS") cpu_s=$CPU_S"

        if ((HAS_SEGMENTS)); then
            dest=$OUT/transferd-segments.bin
            between_runs "$dest"
            transferd_run "transferd --segments $SEGMENTS ($tag)" "$MAIN_PID" "$MAIN_SOCKET" "$dest" "$CAPPED_URL" --segments "$SEGMENTS"
            verify "$dest" "transferd --segments ($tag)" "$first"
            CS_NS+=("$WALL_NS"); CS_CPU+=("$CPU_S")
            echo "$tag: transferd_segments wall_s=$(secs "$WALL_NS") cpu_s=$CPU_S"
        fi
        between_runs "$OUT"/*.bin
    done
    m_ca=$(median "${CA_NS[@]}")
    crow() { printf '%-36s %10s %10s %10s' "$1" "$(secs "$2")" "$(mbps "$2")" "$(ratio "$2" "$m_ca")"; }
    REPORT+=("" "== capped: one ${SIZE_MIB} MiB file, nginx limit_rate $CAPPED_RATE per connection, $CAPPED_RUNS run(s) (median) =="
        "$(printf '%-36s %10s %10s %10s' "tool" "median_s" "MB/s" "vs_aria2")"
        "$(crow "curl (one connection)" "$(median "${CC_NS[@]}")")"
        "$(crow "aria2c -x$SEGMENTS -s$SEGMENTS -k1M" "$m_ca")"
        "$(crow "transferd (one connection)" "$(median "${CT_NS[@]}")")")
    if ((HAS_SEGMENTS)); then
        REPORT+=("$(crow "transferd --segments $SEGMENTS" "$(median "${CS_NS[@]}")")")
    else
        REPORT+=("transferd --segments: not supported by this transferctl")
    fi
fi

# ---------------------------------------------------------------------------- row: upload
if want_row upload; then
    UPLOAD_URL=${URL%/test.bin}/upload
    declare -a UC_NS=() UC_CPU=() UC_RSS=() UT_NS=() UT_DAEMON_NS=() UT_CPU=() UT_RSS=()
    declare -a UH_NS=() UH_CPU=() UH_RSS=() UB_NS=() UB_DAEMON_NS=() UB_CPU=() UB_RSS=()
    for ((run = 1; run <= RUNS; run++)); do
        first=$((run == 1 ? 1 : 0))
        tag="upload run $run/$RUNS"

        between_runs "$PUT_DIR"/*
        timed "curl -T" "$SCRATCH/curl-put.log" curl -s -S -f -T "$SRC" "$UPLOAD_URL/curl.bin"
        verify "$PUT_DIR/curl.bin" "curl -T ($tag)" "$first"
        UC_NS+=("$WALL_NS"); UC_CPU+=("$CPU_S"); UC_RSS+=("$RSS_KIB")
        echo "$tag: curl wall_s=$(secs "$WALL_NS") cpu_s=$CPU_S peak_rss_mib=$(mib_of_kib "$RSS_KIB")"

        between_runs "$PUT_DIR"/*
        transferd_upload_run "transferd upload ($tag)" "$MAIN_PID" "$MAIN_SOCKET" "$SRC" "$UPLOAD_URL/transferd.bin"
        verify "$PUT_DIR/transferd.bin" "transferd upload ($tag)" "$first"
        UT_NS+=("$WALL_NS"); UT_DAEMON_NS+=("$DAEMON_NS"); UT_CPU+=("$CPU_S"); UT_RSS+=("$PEAK_KIB")
        echo "$tag: transferd wall_s=$(secs "$WALL_NS") daemon_s=$(secs "$DAEMON_NS") cpu_s=$CPU_S rss_before_mib=$(mib_of_kib "$BEFORE_KIB") peak_rss_mib=$(mib_of_kib "$PEAK_KIB")"

        between_runs "$PUT_DIR"/*
        transferd_handoff_run "transferd hand-off ($tag)" "$MAIN_PID" "$MAIN_SOCKET" "$SRC" "$UPLOAD_URL/handoff.bin"
        verify "$PUT_DIR/handoff.bin" "transferd hand-off ($tag)" "$first"
        UH_NS+=("$WALL_NS"); UH_CPU+=("$CPU_S"); UH_RSS+=("$PEAK_KIB")
        echo "$tag: spool_handoff wall_s=$(secs "$WALL_NS") cpu_s=$CPU_S rss_before_mib=$(mib_of_kib "$BEFORE_KIB") peak_rss_mib=$(mib_of_kib "$PEAK_KIB")"

        if [[ -n $BASELINE_DIR ]]; then
            between_runs "$PUT_DIR"/*
            transferd_upload_run "baseline upload ($tag)" "$BL_PID" "$BL_SOCKET" "$SRC" "$UPLOAD_URL/baseline.bin"
            verify "$PUT_DIR/baseline.bin" "baseline upload ($tag)" "$first"
            UB_NS+=("$WALL_NS"); UB_DAEMON_NS+=("$DAEMON_NS"); UB_CPU+=("$CPU_S"); UB_RSS+=("$PEAK_KIB")
            echo "$tag: baseline wall_s=$(secs "$WALL_NS") daemon_s=$(secs "$DAEMON_NS") cpu_s=$CPU_S peak_rss_mib=$(mib_of_kib "$PEAK_KIB")"
        fi
        between_runs "$PUT_DIR"/*
    done
    m_uc=$(median "${UC_NS[@]}")
    m_ut=$(median "${UT_NS[@]}")
    m_ut_daemon=$(median "${UT_DAEMON_NS[@]}")
    m_uh=$(median "${UH_NS[@]}")
    ut_peak=$(max_of "${UT_RSS[@]}")
    if ((CAN_RESET_HWM)); then hwm_note="per-run VmHWM, reset to the current RSS before each run"; else hwm_note="VmHWM is cumulative: max since start"; fi
    REPORT+=("" "== upload: PUT of one ${SIZE_MIB} MiB file to nginx (dav_methods PUT), $RUNS runs (median), page-cached source =="
        "MB/s = 10^6 bytes/s; cpu_s = CPU seconds of the process (transferd: the daemon's); peak RSS = max over runs (curl: GNU time; transferd: daemon $hwm_note)"
        "$(printf '%-30s %10s %10s %8s %14s %10s' "tool" "median_s" "MB/s" "cpu_s" "peak_rss_MiB" "vs_curl")"
        "$(row "curl -T" "$m_uc" "$(median "${UC_CPU[@]}")" "$(mib_of_kib "$(max_of "${UC_RSS[@]}")")" "1.00")"
        "$(row "transferd (upload --wait)" "$m_ut" "$(median "${UT_CPU[@]}")" "$(mib_of_kib "$ut_peak")" "$(ratio "$m_ut" "$m_uc")")"
        "$(row "transferd (daemon-side)" "$m_ut_daemon" "-" "-" "$(ratio "$m_ut_daemon" "$m_uc")")")
    if [[ -n $BASELINE_DIR ]]; then
        m_ub=$(median "${UB_NS[@]}")
        REPORT+=("$(row "baseline (upload --wait)" "$m_ub" "$(median "${UB_CPU[@]}")" "$(mib_of_kib "$(max_of "${UB_RSS[@]}")")" "$(ratio "$m_ub" "$m_uc")")"
            "$(row "baseline (daemon-side)" "$(median "${UB_DAEMON_NS[@]}")" "-" "-" "$(ratio "$(median "${UB_DAEMON_NS[@]}")" "$m_uc")")")
    fi
    REPORT+=("$(row "spool hand-off (no --wait)" "$m_uh" "$(median "${UH_CPU[@]}")" "$(mib_of_kib "$(max_of "${UH_RSS[@]}")")" "$(ratio "$m_uh" "$m_uc")")"
        "spool hand-off: transferctl upload without --wait, until the daemon has copied the file into its spool (copy_file_range) and synced it; the upload that follows is waited for before the next run"
        "per-run wall seconds: curl=[$(join_secs "${UC_NS[@]}")] transferd=[$(join_secs "${UT_NS[@]}")] hand-off=[$(join_secs "${UH_NS[@]}")]$(if_baseline " baseline=[$(join_secs "${UB_NS[@]}")]")"
        "per-run CPU seconds: curl=[${UC_CPU[*]}] transferd=[${UT_CPU[*]}] hand-off=[${UH_CPU[*]}]$(if_baseline " baseline=[${UB_CPU[*]}]")"
        "transferd peak RSS per run: [$(for v in "${UT_RSS[@]}"; do printf '%s ' "$(mib_of_kib "$v")"; done | sed 's/ $//')] MiB$(if_baseline "; baseline [$(for v in "${UB_RSS[@]}"; do printf '%s ' "$(mib_of_kib "$v")"; done | sed 's/ $//')] MiB")")
    goal "$SIZE_MIB MiB upload: upload --wait to done, x curl -T's" "$(ratio "$m_ut" "$m_uc")" 1.5 x
    goal "$SIZE_MIB MiB upload: daemon peak RSS (max)" "$(mib_of_kib "$ut_peak")" 48 MiB
fi

LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
AFTER_RSS_KIB=$(proc_kib "$MAIN_PID" VmRSS)
stop_pid "$MAIN_PID" 25
if [[ -n $BASELINE_DIR ]]; then stop_pid "$BL_PID" 25; fi

# ---------------------------------------------------------------------------- slow disk
SLOW_LINE=""
if [[ -n $SLOW_USEC ]]; then
    say "slow-disk run: TRANSFERD_TEST_WRITE_DELAY_USEC=$SLOW_USEC (per 16 KiB chunk written)"
    start_daemon transferd-slow "TRANSFERD_TEST_WRITE_DELAY_USEC=$SLOW_USEC"
    slow_base=$(proc_kib "$DAEMON_PID" VmRSS)
    dest=$OUT/transferd-slow.bin
    between_runs "$dest"
    transferd_run "transferd slow disk" "$DAEMON_PID" "$DAEMON_SOCKET" "$dest"
    verify "$dest" "transferd slow disk" 1
    slow_peak=$PEAK_KIB
    between_runs "$dest"
    stop_pid "$DAEMON_PID" 25
    SLOW_LINE="transferd slow-disk (${SLOW_USEC} us/16KiB): wall_s=$(secs "$WALL_NS") baseline_rss_mib=$(mib_of_kib "$slow_base") peak_rss_mib=$(mib_of_kib "$slow_peak") growth_mib=$(mib_of_kib $((slow_peak - slow_base))) file_mib=$SIZE_MIB"
fi

# ---------------------------------------------------------------------------- report
total_s=$(secs $(($(now_ns) - BENCH_START_NS)))
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
mem=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
fs=$(df -PT -- "$SCRATCH" | awk 'NR == 2 { print $2 }')

echo
echo "== transferd benchmark suite: rows $ROWS =="
echo "machine: nproc=$(nproc) kernel=$(uname -r) arch=$(uname -m) cpu='${cpu:-unknown}' mem=$mem"
echo "load average (1/5/15 min): start $LOAD_START, end $LOAD_END"
echo "destination filesystem: $fs ($SCRATCH), sync between runs; release build time: ${BUILD_S}; total ${total_s}s"
printf '%s\n' "${REPORT[@]}"
echo "transferd daemon RSS after the rows: $(mib_of_kib "$AFTER_RSS_KIB") MiB (at start $(mib_of_kib "$BASE_RSS_KIB") MiB)"
if [[ -n $SLOW_LINE ]]; then echo "$SLOW_LINE"; fi
echo
echo "== goals =="
if ((${#GOALS[@]} == 0)); then echo "(no row with a goal ran)"; else printf '%s\n' "${GOALS[@]}"; fi

#!/usr/bin/env bash
# Builds the libFuzzer targets and runs each for FUZZ_SECONDS (default 60) from the committed seed
# corpus; exits non-zero when a target finds a crash. See Tests/Fuzz/README.md.
#
#   FUZZ_SECONDS   seconds per target (default 60)
#   FUZZ_TARGETS   which targets (default: all, e.g. FUZZ_TARGETS=FuzzJournalRecovery)
#   FUZZ_CONFIG    release (default) or debug
#   FUZZ_ARGS      extra libFuzzer flags, e.g. FUZZ_ARGS='-jobs=2 -workers=2'
set -euo pipefail
cd "$(dirname "$0")/../.."

SWIFT=${SWIFT:-swift}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_CONFIG=${FUZZ_CONFIG:-release}
# Apart from the plain build, so that instrumented objects never mix with its objects.
FUZZ_DIR=.build-fuzz
read -r -a targets <<<"${FUZZ_TARGETS:-FuzzRequestDecoder FuzzJournalRecovery FuzzSubmitToEngine}"
read -r -a extra_args <<<"${FUZZ_ARGS:-}"

# libFuzzer ships with the swift.org toolchain for Linux (not with distribution clang packages).
swiftc_path=$(command -v swiftc || true)
toolchain=$(dirname "$(readlink -f "${swiftc_path:-/nonexistent}")")/..
if ! ls "$toolchain"/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a >/dev/null 2>&1 \
    && ! ls "$toolchain"/lib/swift/clang/lib/linux/libclang_rt.fuzzer-*.a >/dev/null 2>&1; then
    echo "fuzz: no libFuzzer runtime (libclang_rt.fuzzer) in the Swift toolchain at $toolchain:" \
        "install the swift.org toolchain for Linux, which includes it, and put its usr/bin first on PATH" >&2
    exit 2
fi
# Readable stack traces from AddressSanitizer.
if [ -x "$toolchain/bin/llvm-symbolizer" ]; then
    export ASAN_SYMBOLIZER_PATH="$toolchain/bin/llvm-symbolizer"
fi
# Let libFuzzer, not Swift's backtracer, catch a crash, so that it saves the input.
export SWIFT_BACKTRACE=enable=no
# Leaks LeakSanitizer reports of values that live for the whole process (see the file).
export LSAN_OPTIONS="suppressions=$PWD/Tests/Fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

corpus_name() {  # FuzzRequestDecoder -> request-decoder
    sed -e 's/^Fuzz//' -e 's/\([a-z]\)\([A-Z]\)/\1-\2/g' <<<"$1" | tr '[:upper:]' '[:lower:]'
}

failed=()
summary=()
for target in "${targets[@]}"; do
    name=$(corpus_name "$target")
    seeds=Tests/Fuzz/corpus/$name
    if [ ! -d "$seeds" ]; then
        echo "fuzz: unknown target $target (no seed corpus $seeds)" >&2
        exit 2
    fi
    echo "== building $target ($FUZZ_CONFIG, -sanitize=fuzzer,address)"
    # One scratch path per target: building another product in the same one makes SwiftPM plan
    # again and rebuild everything, and left binaries without coverage instrumentation.
    scratch=$FUZZ_DIR/$name
    # `--sanitize=fuzzer` makes SwiftPM build executable targets for libFuzzer's `main`. Not
    # `--sanitize=address` besides: SwiftPM would pass two `-sanitize=` flags in no fixed order, and
    # swiftc heeds only the last, so half the builds lacked coverage or AddressSanitizer. One flag
    # with both, after SwiftPM's, is what swiftc uses. gold warns once per AddressSanitizer helper
    # symbol at the link; those lines say nothing.
    "$SWIFT" build -c "$FUZZ_CONFIG" --scratch-path "$scratch" --sanitize=fuzzer \
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING --product "$target" 2>&1 \
        | sed '/Cannot export local symbol/d'
    binary=$scratch/$FUZZ_CONFIG/$target

    # New inputs go to a working corpus outside the repository; the seeds stay as committed.
    work=$FUZZ_DIR/corpus/$name
    artifacts=$FUZZ_DIR/artifacts/$name
    log=$FUZZ_DIR/logs/$name.log
    mkdir -p "$work" "$artifacts" "$(dirname "$log")"
    marker=$FUZZ_DIR/logs/$name.started
    touch "$marker"
    echo "== running $target for ${FUZZ_SECONDS}s (log: $log)"
    status=0
    "$binary" "$work" "$seeds" -dict="Tests/Fuzz/$name.dict" -max_total_time="$FUZZ_SECONDS" \
        -max_len=4096 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$artifacts/" "${extra_args[@]}" >"$log" 2>&1 || status=$?
    # The last progress line has the coverage and the speed; the final stats the totals.
    progress=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
    echo "   $progress"
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' "$log" | sed 's/^/   /' || true
    summary+=("$target: ${progress:-no progress line}")
    # A build without coverage instrumentation fuzzes blind and never finds anything: say so.
    if [ "$status" -eq 0 ] && ! grep -qE '^#[0-9]+[[:space:]]+INITED cov: ' "$log"; then
        echo "== $target reported no coverage: the binary is not instrumented (see $log)" >&2
        status=3
    fi
    if [ "$status" -ne 0 ]; then
        failed+=("$target")
        echo "== $target FAILED (exit $status): the end of $log:" >&2
        tail -40 "$log" >&2
        find "$artifacts" -type f -newer "$marker" | while read -r crash; do
            echo "   input: $crash  (replay: $binary $crash)" >&2
        done
        echo "   Turn the input into a unit test next to the code it broke, fix it, and add it to $seeds." >&2
    fi
done

echo "== fuzz summary (${FUZZ_SECONDS}s per target)"
printf '   %s\n' "${summary[@]}"
if [ "${#failed[@]}" -ne 0 ]; then
    echo "fuzz: crash found in ${failed[*]}" >&2
    exit 1
fi
echo "fuzz: no crash found"

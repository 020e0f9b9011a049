#!/bin/sh
# The whole test suite: install what is missing, build with -Werror, run
# every test, then again in an ASan+UBSan build. Ends with one line
# "N passed, N failed" (both builds together); exit status 0 only if all pass.
# A build that fails shows its errors and counts as a failure; the other
# build still runs.
set -eu
cd "$(dirname "$0")/.."
. ./scripts/build-lib.sh
./scripts/install-deps.sh --tests
jobs=$(nproc 2>/dev/null || echo 2)
status=0
run() { # build-dir meson-options...
    dir=$1; shift
    # a test log from an earlier run must not count for this one
    rm -f "$dir/meson-logs/testlog.json"
    if ! gp_build "$dir" "" --werror "$@"; then
        status=1
        return 0
    fi
    meson test -C "$dir" --num-processes "$jobs" --print-errorlogs \
        >"$dir/test-output.txt" 2>&1 || status=1
    tail -n 12 "$dir/test-output.txt"
}
echo "== build and test (gcc, -Werror)"
run build-test -Dbuildtype=debugoptimized
echo "== build and test (ASan + UBSan)"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    run build-asan -Dbuildtype=debug -Db_sanitize=address,undefined \
        -Dc_args=-fno-sanitize-recover=all
python3 - build-test build-asan <<'PY'
import json, sys
passed = failed = skipped = 0
for d in sys.argv[1:]:
    try:
        lines = open(d + "/meson-logs/testlog.json").read().splitlines()
    except OSError:
        failed += 1
        continue
    for line in lines:
        r = json.loads(line).get("result")
        if r in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif r == "SKIP":
            skipped += 1
        else:
            failed += 1
print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
sys.exit(1 if failed else 0)
PY
[ $? -eq 0 ] || status=1
exit $status

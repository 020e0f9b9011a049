#!/bin/sh
# build_lib_test.sh BUILD_LIB - scripts/build-lib.sh on a one-file Meson
# project: a half-configured build folder is mended and built; a compile
# error shows the compiler's message and fails; a failed setup shows its
# log and leaves no half-made folder; a folder that is not Meson's is left
# alone.
set -u
lib=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
cd "$tmp" || exit 1
# shellcheck disable=SC1090
. "$lib"
echo "project('t', 'c')" >meson.build
echo "executable('t', 't.c')" >>meson.build
echo 'int main(void) { return 0; }' >t.c

mkdir -p b/meson-logs # what an interrupted setup leaves
gp_build b "" 2>err || fail "half-configured folder: not mended ($(cat err))"
grep -q "half-configured" err || fail "half-configured folder: not said"
[ -x b/t ] || fail "half-configured folder: nothing built"

echo 'int main(void) { return nosuch; }' >t.c
if gp_build b "" 2>err; then fail "compile error: succeeded"; fi
grep -q "nosuch" err || fail "compile error: the compiler's message not shown"
[ -f b/build.log ] || fail "compile error: log not kept"

rm -rf b
if gp_build b "" -Dnosuchoption=1 2>err; then fail "bad setup: succeeded"; fi
grep -q "nosuchoption" err || fail "bad setup: meson's message not shown"
grep -q "install-deps.sh" err || fail "bad setup: no hint"
[ -d b ] && fail "bad setup: left a half-made folder"

mkdir -p notmeson && echo keep >notmeson/file
if gp_build notmeson "" 2>err; then fail "foreign folder: succeeded"; fi
[ -f notmeson/file ] || fail "foreign folder: removed"

[ "$fails" -eq 0 ] || exit 1
echo "ok: build-lib"

#!/bin/sh
# Install what gpupool needs to build and run on Debian 12 (with --tests:
# also what its tests need), if missing.
# Runs apt-get as root, or through sudo for other users.
set -eu
PKGS="build-essential pkg-config meson ninja-build python3 xz-utils
      libjansson-dev libarchive-dev libarchive13 zlib1g-dev libcmocka-dev
      libsqlite3-dev libmicrohttpd-dev libinih-dev libcurl4-openssl-dev
      libgnutls28-dev coinor-libcbc-dev coinor-libclp-dev libglpk-dev"
# For the tests only (./scripts/install-deps.sh --tests, which
# scripts/test.sh runs): curl and Debian's Prometheus server for the
# metrics test; openssl for the TLS test's certificate; python3-torch (CPU build) for the PyTorch example job and
# its test (a skip without it) - the big one: about 143 MB to download and
# 610 MB installed with its dependencies; Slurm and munge for the Slurm
# backend's tests, which start a cluster of their own
# (scripts/slurm-cluster.sh; iproute2 for its network namespace).
TEST_PKGS="curl openssl prometheus python3-torch slurmctld slurmd
           slurm-client munge iproute2"
if [ "${1:-}" = "--tests" ]; then PKGS="$PKGS $TEST_PKGS"; fi
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
        missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
echo "gpupool: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
# shellcheck disable=SC2086
if ! { $SUDO apt-get update -qq &&
    $SUDO apt-get install -y -qq --no-install-recommends $missing; } \
    >"$log" 2>&1; then
    echo "gpupool: installing the packages failed; the last lines:" >&2
    tail -n 20 "$log" | sed 's/^/    /' >&2
    echo "gpupool: install them by hand (apt-get install$missing), then" \
        "run this again" >&2
    rm -f "$log"
    exit 1
fi
rm -f "$log"

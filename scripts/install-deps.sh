#!/bin/sh
# Install what gpupool needs to build and test on Debian 12, if missing.
# Runs apt-get as root, or through sudo for other users.
set -eu
PKGS="build-essential pkg-config meson ninja-build python3 xz-utils
      libjansson-dev libarchive-dev libarchive13 zlib1g-dev libcmocka-dev"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
        missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
echo "gpupool: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null

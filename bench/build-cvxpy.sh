#!/bin/sh
# build-cvxpy.sh CVXPY_SRC ECOS_PYTHON_SRC PREFIX - build cvxpy and its ECOS
# solver for Debian 12's own Python into PREFIX (then PYTHONPATH=PREFIX), for
# the comparisons with Gavel's cvxpy solves: bench/gavel_cvxpy.py and
# tests/sim/parity-gavel/run-peer.py with GAVEL_AS_WRITTEN=1. Debian packages
# neither; nothing is installed outside PREFIX but Debian packages.
#
# CVXPY_SRC: a checkout of github cvxpy/cvxpy at v1.5.4 (the newest release
# whose run-time requirements Debian 12's numpy 1.24 and scipy 1.10 meet);
# ECOS_PYTHON_SRC: github embotech/ecos-python at v2.0.14 with its `ecos`
# submodule (git clone --recursive). For example:
#   git clone -b v1.5.4 https://github.com/cvxpy/cvxpy
#   git clone -b v2.0.14 --recursive https://github.com/embotech/ecos-python
#   bench/build-cvxpy.sh cvxpy ecos-python /tmp/cvx
# Needs (apt-get, as root): python3-numpy python3-scipy python3-pip
# python3-pybind11 pybind11-dev (cvxpy's C++ part) and python3-cvxopt (GLPK_MI,
# the water filling's MILP solver in Gavel).
set -eu
if [ $# -ne 3 ]; then
    echo "usage: $0 CVXPY_SRC ECOS_PYTHON_SRC PREFIX" >&2
    exit 2
fi
cvxpy=$1
ecos=$2
prefix=$3
py=/usr/bin/python3
for f in "$cvxpy/setup.py" "$ecos/setup.py" "$ecos/ecos/src/ecos.c"; do
    [ -f "$f" ] || { echo "$0: $f: not found" >&2; exit 1; }
done
pkgs="python3-numpy python3-scipy python3-pip python3-pybind11 pybind11-dev
python3-cvxopt"
missing=
for p in $pkgs; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "$0: missing Debian packages:$missing (apt-get install them)" >&2
        exit 1
    fi
    # shellcheck disable=SC2086
    apt-get install -y $missing
fi
mkdir -p "$prefix"
# --no-build-isolation: Debian's numpy and setuptools, not the newer ones
# the projects' build pins name (no package index is reachable anyway)
for src in "$ecos" "$cvxpy"; do
    "$py" -m pip install --no-build-isolation --no-deps --no-index \
        --upgrade --target "$prefix" "$src"
done
PYTHONPATH=$prefix "$py" -W ignore -c '
import cvxpy as cp
x = cp.Variable(3)
p = cp.Problem(cp.Maximize(cp.min(x)), [cp.sum(x) <= 1, x >= 0])
p.solve(solver="ECOS")
assert abs(p.value - 1 / 3) < 1e-6, p.value
print("cvxpy", cp.__version__, "solvers", " ".join(cp.installed_solvers()))
'
echo "PYTHONPATH=$prefix"

#!/bin/sh
# run.sh GPUPOOL SRCDIR - Pollux workloads (the pollux trace format, jobs
# progressing by the goodput model of the bundled profiles; docs/speed.md,
# "Goodput"):
#  (a) a lone job keeping its batch size on the default 16x4 cluster takes
#      what reference.py (an independent reimplementation of the Pollux
#      artifact's Job.step, standard library only) computes from the
#      profiles in SRCDIR/data/pollux-profiles.tar.xz, to within 1 s (the
#      artifact rounds each epoch to whole seconds; gpupool and
#      reference.py do not); the same with --goodput naming the extracted
#      profiles;
#  (b) the first 30 jobs of workload-6: fifo and pollux finish every job,
#      pollux's average JCT is below 0.9 x fifo's (about 0.68 x when
#      written) and pollux resizes jobs;
#  (b2) a lone cifar10 job under pollux on 4x4 grows 1, 2, 4, 8, 16 GPUs
#      (at most twice the most it has run on) and completes;
#  (c) bad input: an application with no model, a --goodput path that is
#      not there: exit 2 with a message naming it.
# Every check runs; one FAIL line each; the last line counts them.
set -u
exe=$1
src=$2
here=$(dirname "$0")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

tar -xJf "$src/data/pollux-profiles.tar.xz" -C "$tmp" ||
    { echo "FAIL: cannot extract $src/data/pollux-profiles.tar.xz"; exit 1; }
profiles=$tmp/model-profiles
header=name,time,application,num_replicas,batch_size

# JCT of a one-row trace under fifo on 16x4; extra arguments go to sim
lone_jct() { # APP REPLICAS BSZ [SIM ARGS...]
    app=$1 replicas=$2 bsz=$3
    shift 3
    printf '%s\n%s-0,0,%s,%s,%s\n' "$header" "$app" "$app" "$replicas" \
        "$bsz" >"$tmp/lone.csv"
    "$exe" sim --trace "$tmp/lone.csv" --policy fifo "$@" \
        --jobs-csv "$tmp/lone-jobs.csv" --no-wall --no-progress \
        >/dev/null 2>"$tmp/err" || { sed 's/^/    /' "$tmp/err" >&2; return 1; }
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        $c["state"] == "completed" { print $c["jct_s"] }' "$tmp/lone-jobs.csv"
}

# (a) lone jobs: cases of the artifact's workloads, and a few off them
# (1 GPU at the smallest batch, bert on 2 GPUs, imagenet on 16)
cases="cifar10:1:128 cifar10:6:2048 cifar10:16:4096 ncf:1:32768 bert:2:384
bert:6:384 yolov3:4:64 deepspeech2:8:320 deepspeech2:12:640
imagenet:16:6400"
# shellcheck disable=SC2086
python3 "$here/reference.py" "$profiles" $cases >"$tmp/ref.txt" ||
    { echo "FAIL: reference.py failed"; exit 1; }
while read -r case conf_atomic conf_accum conf_place want; do
    IFS=: read -r app replicas bsz <<EOF
$case
EOF
    want=${want#seconds=}
    if ! got=$(lone_jct "$app" "$replicas" "$bsz") || [ -z "$got" ]; then
        fail "$case: gpupool did not complete the job"
        continue
    fi
    if awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; exit !(d < -1 || d > 1) }'; then
        fail "$case ($conf_atomic $conf_accum $conf_place): gpupool JCT $got s, reference.py $want s"
    else
        echo "$case: gpupool $got s, reference.py $want s"
    fi
done <"$tmp/ref.txt"
# the same profiles given by --goodput (a directory) give the same time
first=$(head -1 "$tmp/ref.txt")
want=${first##*seconds=}
IFS=: read -r app replicas bsz <<EOF
${first%% *}
EOF
got=$(lone_jct "$app" "$replicas" "$bsz" --goodput "$profiles") || got=
if [ -z "$got" ] || ! awk -v a="$got" -v b="$want" \
    'BEGIN { d = a - b; exit (d < -1 || d > 1) }'; then
    fail "${first%% *} with --goodput $profiles: gpupool JCT '$got' s, reference.py $want s"
fi

# (b) pollux against fifo on the first 30 jobs of workload-6
head -31 "$src/data/pollux-workloads/workload-6.csv" >"$tmp/w30.csv"
if "$exe" sim --trace "$tmp/w30.csv" --policy fifo,pollux \
    --opt pollux.population=30 --opt pollux.generations=30 --json \
    --no-wall --no-progress >"$tmp/w30.json" 2>"$tmp/err"; then
    python3 - "$tmp/w30.json" <<'PY' || fails=$((fails + 1))
import json, sys
runs = {r["policy"]: r for r in json.load(open(sys.argv[1]))}
bad = []
for pol in ("fifo", "pollux"):
    r = runs.get(pol)
    if r is None:
        bad.append(f"no {pol} run")
        continue
    if r["jobs"] != 30 or r["completed"] != 30 or r["unfinished"]:
        bad.append(f"{pol}: {r['completed']} of {r['jobs']} completed, "
                   f"{r['unfinished']} unfinished (30 expected)")
if not bad:
    f, p = runs["fifo"], runs["pollux"]
    if not p["avg_jct_s"] < 0.9 * f["avg_jct_s"]:
        bad.append(f"pollux avg JCT {p['avg_jct_s']:.1f} s not below 0.9 x "
                   f"fifo's {f['avg_jct_s']:.1f} s")
    if not p["resizes"] > 0:
        bad.append(f"pollux resized no job (resizes {p['resizes']})")
    print(f"workload-6, 30 jobs: avg JCT fifo {f['avg_jct_s']:.1f} s, "
          f"pollux {p['avg_jct_s']:.1f} s; pollux resizes {p['resizes']}")
if bad:
    print("FAIL: workload-6, 30 jobs: " + "; ".join(bad))
    sys.exit(1)
PY
else
    fail "workload-6, 30 jobs: gpupool exited non-zero:"
    sed 's/^/    /' "$tmp/err"
fi

# (b2) a lone job under pollux grows by at most twice the most GPUs it has
# run on (docs/policies/pollux.md): on 4 nodes of 4 its runs hold 1, 2, 4,
# 8 and at last all 16 GPUs, and it completes
printf '%s\ncifar10-0,0,cifar10,1,128\n' "$header" >"$tmp/grow.csv"
if "$exe" sim --trace "$tmp/grow.csv" --cluster 4x4 --policy pollux \
    --preemption free --restart-cost 30 --resize-cost 30 \
    --runs-csv "$tmp/grow-runs.csv" --no-wall --no-progress \
    >/dev/null 2>"$tmp/err"; then
    got=$(awk -F, 'NR > 1 { printf "%s%s", sep, $6; sep = " " }
        END { print "", $9 }' "$tmp/grow-runs.csv")
    [ "$got" = "1 2 4 8 16 completed" ] ||
        fail "a lone job under pollux: run sizes and end '$got', '1 2 4 8 16 completed' expected"
else
    fail "a lone job under pollux: gpupool exited non-zero:"
    sed 's/^/    /' "$tmp/err"
fi

# (c) bad input: exit 2, the message naming what is wrong
expect2() { # WHAT WORD1 WORD2 SIM ARGS...
    what=$1 w1=$2 w2=$3
    shift 3
    "$exe" sim "$@" --no-wall --no-progress >/dev/null 2>"$tmp/err"
    rc=$?
    if [ "$rc" -ne 2 ] || ! grep -q -- "$w1" "$tmp/err" ||
        ! grep -q -- "$w2" "$tmp/err"; then
        fail "$what: exit $rc (2 expected), a message naming '$w1' and '$w2' expected:"
        sed 's/^/    /' "$tmp/err"
    fi
}
printf '%s\nresnet-7,0,resnet,4,256\n' "$header" >"$tmp/resnet.csv"
expect2 "an application with no model" resnet-7 "'resnet'" \
    --trace "$tmp/resnet.csv" --policy fifo
printf '%s\ncifar10-0,0,cifar10,6,2048\n' "$header" >"$tmp/ok.csv"
expect2 "--goodput naming no file" --goodput /nonexistent/profiles \
    --trace "$tmp/ok.csv" --policy fifo --goodput /nonexistent/profiles

echo "pollux: $fails failed"
[ "$fails" -eq 0 ]

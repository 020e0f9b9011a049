#!/usr/bin/env bash
# slurm-cluster.sh - a real Slurm cluster (1 slurmctld + N slurmd, fake GPUs)
# on this one machine, everything under one directory. For gpupool's Slurm
# tests and demos; needs root (mknod, munged, network namespaces).
#
#   slurm-cluster.sh start DIR [--nodes N] [--gpus G] [--cpus C] [--mem MiB]
#                              [--per-switch K] [--gpu-type NAME] [--port P]
#                              [--net auto|netns|loopback]
#                              [--scheduler gpupool|slurm]
#   slurm-cluster.sh exec DIR -- CMD [ARGS...]   CMD with SLURM_CONF set, in
#                                                the cluster's namespace
#   slurm-cluster.sh status DIR
#   slurm-cluster.sh restart-ctld DIR            stop slurmctld (SIGTERM, as
#                                                an admin's restart does) and
#                                                start it again on its state
#   slurm-cluster.sh kill-node DIR NODE          a crash of NODE: its slurmd,
#                                                its slurmstepds and their
#                                                jobs get SIGKILL
#   slurm-cluster.sh start-node DIR NODE         NODE's slurmd again; waits
#                                                until Slurm has it back
#   slurm-cluster.sh stop DIR                    safe twice, or half-started
#
# stop ends the daemons it recorded, the job processes they left behind and,
# under netns, whatever else still runs in the cluster's namespace (clients
# started with exec included): the namespace dies with the cluster.
#
# Layout of DIR: etc/ (slurm.conf, gres.conf, topology.conf, job_submit.lua),
# munge/ (private key and socket), state/, spool/<node>/, dev/<node>/gpuK,
# log/ (daemon logs, jobcomp.log), run/ (pids, netns name).
#
# The cluster holds every submitted job (deploy/slurm/job_submit.lua), so only
# gpupool, or `scontrol release`, starts jobs. Slurm's own record of finished
# jobs is in DIR/log/jobcomp.log (jobcomp/filetxt).
set -eu

prog=slurm-cluster.sh
here=$(cd "$(dirname "$0")" && pwd)
lua_src=$here/../deploy/slurm/job_submit.lua
# Set on every daemon we start and inherited by the slurmstepds they fork, so
# stop can tell our processes from anyone else's, pid reuse included.
marker=GPSLURM_DIR

usage() {
    cat >&2 <<EOF
usage: $prog start DIR [--nodes N] [--gpus G] [--cpus C] [--mem MiB]
                       [--per-switch K] [--gpu-type NAME] [--port P]
                       [--net auto|netns|loopback]
                       [--scheduler gpupool|slurm]
       $prog stop DIR
       $prog exec DIR -- CMD [ARGS...]
       $prog status DIR
       $prog restart-ctld DIR
       $prog kill-node DIR NODE
       $prog start-node DIR NODE
EOF
    exit 2
}
die() { echo "$prog: $*" >&2; exit 1; }
now() { date +%s.%N; }

# --- processes --------------------------------------------------------------

# Alive and not a zombie: where PID 1 does not reap, stopped daemons linger
# as <defunct> and kill -0 still succeeds on them. No fork: stop polls this.
alive() {
    local stat
    read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
    stat=${stat##*) }
    case ${stat%% *} in Z | X | x | '') return 1 ;; esac
}

comm() {
    local c=
    read -r c 2>/dev/null <"/proc/$1/comm" || true
    echo "$c"
}

# Ours = carries the marker for this DIR; a recycled pid does not.
ours() {
    [ -r "/proc/$1/environ" ] &&
        tr '\0' '\n' <"/proc/$1/environ" 2>/dev/null | grep -qxF "$marker=$dir"
}

# pids of the daemons recorded under run/, those still alive and ours
recorded_pids() {
    local f p
    for f in "$dir"/run/*.fgpid; do
        [ -f "$f" ] || continue
        p=$(cat "$f" 2>/dev/null) || continue
        case $p in '' | *[!0-9]*) continue ;; esac
        alive "$p" && ours "$p" && echo "$p"
    done
    return 0
}

# ROOTS (pids, blank-separated) and everything below them, breadth first
# over the ppid table
descendants() {
    ps -e -o pid= -o ppid= 2>/dev/null | awk -v roots="$1" '
        { kids[$2] = kids[$2] " " $1 }
        END {
            n = split(roots, q, " ")
            for (i = 1; i <= n; i++) {
                print q[i]
                m = split(kids[q[i]], k, " ")
                for (j = 1; j <= m; j++) q[++n] = k[j]
            }
        }'
}

# What the daemons leave behind when killed: slurmstepds (they carry the
# marker) with the job processes below them, and under netns anything else
# still in the cluster's private namespace.
stray_pids() {
    local p steps=
    # shellcheck disable=SC2013
    for p in $(grep -lszxF "$marker=$dir" /proc/[0-9]*/environ 2>/dev/null |
        cut -d/ -f3); do
        [ "$p" = $$ ] && continue
        alive "$p" && steps="$steps $p"
    done
    [ -z "$steps" ] || descendants "$steps"
    if [ -n "${ns:-}" ] && [ -e "/run/netns/$ns" ]; then
        ip netns pids "$ns" 2>/dev/null || true
    fi
}

# the strays, less munged (it goes last, as a recorded daemon)
strays() {
    local p
    for p in $(stray_pids | sort -u); do
        [ "$(comm "$p")" = munged ] || echo "$p"
    done
    return 0
}

# TERM, up to 5 s for them to go, then KILL. slurmstepd and srun get KILL at
# once: they only pass TERM on (through slurmctld, gone by then), so waiting
# for them is 5 s lost.
term_wait_kill() {
    local p left i
    [ $# -gt 0 ] || return 0
    for p in "$@"; do
        case $(comm "$p") in
        slurmstepd | srun) kill -KILL "$p" 2>/dev/null || true ;;
        *) kill -TERM "$p" 2>/dev/null || true ;;
        esac
    done
    for i in $(seq 50); do
        left=
        for p in "$@"; do alive "$p" && left="$left $p"; done
        [ -n "$left" ] || return 0
        sleep 0.1
    done
    echo "$prog: killing$left, still there 5 s after SIGTERM" >&2
    # shellcheck disable=SC2086
    for p in $left; do kill -KILL "$p" 2>/dev/null || true; done
    return 0
}

# the namespace of DIR: one per directory, so clusters can run side by side
nsname() {
    echo "gpslurm-$(printf '%s' "$dir" | md5sum | cut -c1-10)"
}

stop_cluster() {
    local p daemons
    ns=
    if [ -f "$dir/run/netns" ]; then
        ns=$(cat "$dir/run/netns")
    elif [ -e "/run/netns/$(nsname)" ]; then
        # made, but start died before it could record it
        ns=$(nsname)
    fi
    # slurmds, slurmctld and what they left first; munged last, they talk
    # to it while they shut down
    daemons=$(for p in $(recorded_pids); do
        [ "$(comm "$p")" = munged ] || echo "$p"
    done)
    # shellcheck disable=SC2046
    term_wait_kill $( (echo "$daemons"; strays) | sort -u)
    # shellcheck disable=SC2046
    term_wait_kill $(recorded_pids)
    # a job's late children too: the namespace goes only once it is empty
    # shellcheck disable=SC2046
    term_wait_kill $(stray_pids | sort -u)
    rm -f "$dir"/run/*.fgpid
    if [ -n "$ns" ]; then
        if [ -e "/run/netns/$ns" ]; then
            ip netns del "$ns" || echo "$prog: could not delete namespace $ns" >&2
        fi
        rm -f "$dir/run/netns"
    fi
    return 0
}

# Run a command in the cluster's namespace, if it has one. nsenter rather
# than `ip netns exec`: that one also mounts a fresh /sys, which hides
# /sys/fs/cgroup, and slurmd 22.05 will not start without it.
in_ns() {
    if [ -n "$ns" ]; then
        nsenter --net="/run/netns/$ns" "$@"
    else
        "$@"
    fi
}

# start a daemon in the foreground under setsid, recording its pid as NAME;
# env, setsid and nsenter all exec, so $! ends up as the daemon itself
spawn() {
    local name=$1 log=$2
    shift 2
    if [ -n "$ns" ]; then
        env "$marker=$dir" setsid nsenter --net="/run/netns/$ns" "$@" >"$log" 2>&1 </dev/null &
    else
        env "$marker=$dir" setsid "$@" >"$log" 2>&1 </dev/null &
    fi
    echo $! >"$dir/run/$name.fgpid"
}

# the slurmd of node $1; it and the slurmstepds it forks carry
# GPSLURM_NODE=$1, so kill-node finds them
spawn_slurmd() {
    spawn "slurmd-$1" "$dir/log/slurmd-$1.out" \
        env "GPSLURM_NODE=$1" slurmd -D -N "$1" -f "$SLURM_CONF"
}

# slurmctld on $SLURM_CONF, until it answers (30 s at most); -i: it goes
# on past a state file cut short, as after a crash
start_ctld() {
    local i
    spawn slurmctld "$dir/log/slurmctld.out" slurmctld -D -i -f "$SLURM_CONF"
    for i in $(seq 300); do
        in_ns scontrol ping 2>/dev/null | grep -q UP && break
        alive "$(cat "$dir/run/slurmctld.fgpid")" || { logs_tail; die "slurmctld died"; }
        [ "$i" -lt 300 ] || { logs_tail; die "slurmctld did not answer in 30 s"; }
        sleep 0.1
    done
}

logs_tail() {
    local f
    for f in "$dir"/log/*.log "$dir"/log/*.out "$dir"/munge/munged.log; do
        [ -s "$f" ] || continue
        echo "==> $f <==" >&2
        tail -n 15 "$f" >&2
    done
}

# --- commands ----------------------------------------------------------------

need() {
    command -v "$1" >/dev/null 2>&1 ||
        die "$1 not found: apt-get install slurmctld slurmd slurm-client munge"
}

# DIR as an absolute path (it need not exist yet): the marker and the
# namespace name must not depend on how the caller spelled it
absdir() {
    realpath -m -- "$1"
}

posint() { # name value [min]
    case $2 in '' | *[!0-9]*) echo "$prog: $1 must be a number, not '$2'" >&2; usage ;; esac
    [ "$2" -ge "${3:-1}" ] || { echo "$prog: $1 must be at least ${3:-1}" >&2; usage; }
}

start_failed() {
    local st=$?
    trap - EXIT
    if [ "$st" -ne 0 ]; then
        echo "$prog: start failed; stopping what was started" >&2
        stop_cluster
    fi
    exit "$st"
}

cmd_start() {
    local nodes=4 gpus=4 cpus=8 mem=4000 per=2 gtype=v100 port=16817 net=auto
    local sched=gpupool
    while [ $# -gt 0 ]; do
        [ $# -ge 2 ] || { echo "$prog: $1 needs a value" >&2; usage; }
        case $1 in
        --nodes) nodes=$2 ;;
        --gpus) gpus=$2 ;;
        --cpus) cpus=$2 ;;
        --mem) mem=$2 ;;
        --per-switch) per=$2 ;;
        --gpu-type) gtype=$2 ;;
        --port) port=$2 ;;
        --net) net=$2 ;;
        --scheduler) sched=$2 ;;
        *) echo "$prog: unknown option $1" >&2; usage ;;
        esac
        shift 2
    done
    posint --nodes "$nodes"; posint --gpus "$gpus" 0; posint --cpus "$cpus"
    posint --mem "$mem"; posint --per-switch "$per"; posint --port "$port" 1024
    [ $((port + 10 + nodes)) -le 65535 ] || { echo "$prog: --port $port leaves no room for $nodes slurmd ports" >&2; usage; }
    case $gtype in '' | *[!A-Za-z0-9_.-]*) echo "$prog: bad --gpu-type '$gtype'" >&2; usage ;; esac
    case $net in auto | netns | loopback) ;; *) echo "$prog: --net is auto, netns or loopback" >&2; usage ;; esac
    case $sched in gpupool | slurm) ;; *) echo "$prog: --scheduler is gpupool or slurm" >&2; usage ;; esac

    [ "$(id -u)" = 0 ] || die "must run as root (mknod, munged, network namespaces)"
    local c
    for c in slurmctld slurmd sinfo scontrol munged mungekey munge unmunge; do need "$c"; done
    [ -f "$lua_src" ] || die "$lua_src not found (the job_submit plugin the cluster uses)"

    local t0 host
    t0=$(now)
    host=$(hostname -s)
    [ -n "$(recorded_pids)" ] && die "$dir already holds a running cluster; stop it first: $prog stop $dir"
    # a directory we did not make may hold anything: never clean one up
    if [ -d "$dir" ] && [ ! -f "$dir/.slurm-cluster" ] && [ -n "$(ls -A "$dir")" ]; then
        die "$dir exists, is not empty and is not a slurm-cluster.sh directory"
    fi
    # slurm.conf cannot quote a path; a unix socket path has 108 bytes
    case $dir in *[[:space:]#]*) die "DIR must not contain blanks or '#': $dir" ;; esac
    [ ${#dir} -le 80 ] || die "DIR too long for munge's socket path (80 characters at most): $dir"
    umask 022
    mkdir -p "$dir"
    : >"$dir/.slurm-cluster"
    # leftovers of an earlier run (stopped, or killed half way)
    stop_cluster
    rm -rf "${dir:?}/etc" "$dir/state" "$dir/spool" "$dir/run" "$dir/log" "$dir/munge" "${dir:?}/dev"
    mkdir -p "$dir/etc" "$dir/state" "$dir/run" "$dir/log" "$dir/munge"
    # munged refuses a socket dir others can write or list; 700 locks out
    # unprivileged clients
    chmod 711 "$dir/munge"

    # from here on a failure stops what was started
    trap start_failed EXIT
    trap 'exit 130' INT TERM

    # --- network
    ns=
    if [ "$net" != loopback ]; then
        need ip
        need nsenter
        local want
        want=$(nsname)
        if ip netns add "$want" 2>"$dir/log/netns.err"; then
            ns=$want
            echo "$ns" >"$dir/run/netns"
            # with only lo up, glibc's AI_ADDRCONFIG makes getaddrinfo fail
            # for 127.0.0.1 and slurmctld dies: give the namespace one
            # non-loopback address on a veth pair (both ends stay inside)
            ip -n "$ns" link set lo up
            ip -n "$ns" link add v0 type veth peer name v1
            ip -n "$ns" addr add 198.18.0.1/32 dev v0
            ip -n "$ns" link set v0 up
            ip -n "$ns" link set v1 up
        elif [ "$net" = netns ]; then
            die "ip netns add failed: $(cat "$dir/log/netns.err")"
        else
            echo "$prog: no network namespace ($(cat "$dir/log/netns.err")); using loopback, port $port" >&2
        fi
        rm -f "$dir/log/netns.err"
    fi

    # --- fake GPUs: char devices like /dev/nvidiaN (major 195) so slurmd sets
    # CUDA_VISIBLE_DEVICES; nothing ever opens them
    local k g minor=0 fake=0
    for k in $(seq "$nodes"); do
        mkdir -p "$dir/spool/n$k" "$dir/dev/n$k"
        for g in $(seq 0 $((gpus - 1))); do
            if ! mknod -m 666 "$dir/dev/n$k/gpu$g" c 195 "$minor" 2>/dev/null; then
                : >"$dir/dev/n$k/gpu$g"
                fake=1
            fi
            minor=$((minor + 1))
        done
    done
    [ "$fake" = 0 ] || echo "$prog: mknod failed, plain files stand in for GPUs: jobs get no CUDA_VISIBLE_DEVICES" >&2

    # --- munge: own key, own socket; /etc/munge and /run/munge stay untouched
    local sock=$dir/munge/munge.sock
    mungekey -c -k "$dir/munge/munge.key" -b 1024
    spawn munged "$dir/log/munged.out" munged -F --socket="$sock" \
        --key-file="$dir/munge/munge.key" --log-file="$dir/munge/munged.log" \
        --pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/munged.seed" \
        --num-threads=2
    local i
    for i in $(seq 100); do
        [ -S "$sock" ] && break
        alive "$(cat "$dir/run/munged.fgpid")" || { logs_tail; die "munged died"; }
        sleep 0.05
    done
    munge -S "$sock" -n | unmunge -S "$sock" >/dev/null || { logs_tail; die "munge does not work"; }

    # --- configuration
    local conf=$dir/etc/slurm.conf last=n$nodes
    [ "$nodes" = 1 ] || last="n[1-$nodes]"
    {
        cat <<EOF
# Written by gpupool's scripts/slurm-cluster.sh for $dir
ClusterName=gpslurm
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
# no cgroups, no systemd: plain process tracking, no enforcement
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
# Slurm's own line per finished job, to check gpupool's accounting against
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobcomp.log
MpiDefault=none
MailProg=/bin/true
# bind to what the host name resolves to rather than 0.0.0.0 (dropped below
# when that is not loopback)
CommunicationParameters=NoInAddrAny
SwitchType=switch/none
# advertise the configured CPUs, memory and GPUs, not this machine's
SlurmdParameters=config_overrides
ReturnToService=2
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=$((mem / cpus))
GresTypes=gpu
TopologyPlugin=topology/tree
# start a released job on the next pass, not 3 s later
SchedulerParameters=batch_sched_delay=0
PriorityType=priority/basic
JobRequeue=1
KillWait=5
# short timers: a test should not wait minutes for a dead node
SlurmdTimeout=30
SlurmctldTimeout=30
MessageTimeout=10
InactiveLimit=0
MinJobAge=300
TCPTimeout=5

EOF
        if [ "$sched" = gpupool ]; then
            echo "# every job enters held; gpupool releases it (etc/job_submit.lua)"
            echo "JobSubmitPlugins=lua"
            echo "SchedulerType=sched/builtin"
            echo "PreemptType=preempt/none"
        else
            echo "# Slurm schedules by itself: backfill, and a higher partition's"
            echo "# jobs requeue a lower one's (for comparisons with gpupool)"
            echo "SchedulerType=sched/backfill"
            echo "PreemptType=preempt/partition_prio"
            echo "PreemptMode=REQUEUE"
        fi
        local gres=
        [ "$gpus" = 0 ] || gres=" Gres=gpu:$gtype:$gpus"
        for k in $(seq "$nodes"); do
            echo "NodeName=n$k NodeHostname=$host NodeAddr=127.0.0.1 Port=$((port + 10 + k)) CPUs=$cpus RealMemory=$mem$gres State=UNKNOWN"
        done
        echo "PartitionName=gpu Nodes=$last Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO PriorityTier=1"
        [ "$sched" = gpupool ] ||
            echo "PartitionName=high Nodes=$last MaxTime=INFINITE State=UP OverSubscribe=NO PriorityTier=2"
    } >"$conf"
    # NoInAddrAny binds slurmd to the host name's address: only right when
    # that is loopback (in the namespace, only loopback is there to bind)
    if ! getent hosts "$host" | awk '{print $1}' | grep -q '^127\.'; then
        sed -i '/^CommunicationParameters=NoInAddrAny/d' "$conf"
    fi

    {
        echo "# fake GPUs: char devices under $dir/dev, never opened"
        echo "AutoDetect=off"
        if [ "$gpus" -gt 0 ]; then
            local files=gpu0
            [ "$gpus" = 1 ] || files="gpu[0-$((gpus - 1))]"
            for k in $(seq "$nodes"); do
                echo "NodeName=n$k Name=gpu Type=$gtype File=$dir/dev/n$k/$files"
            done
        fi
    } >"$dir/etc/gres.conf"

    {
        echo "# leaf switches of up to $per nodes, one spine above them"
        local leaves=0 lo hi
        for lo in $(seq 1 "$per" "$nodes"); do
            hi=$((lo + per - 1))
            [ "$hi" -le "$nodes" ] || hi=$nodes
            if [ "$lo" = "$hi" ]; then
                echo "SwitchName=leaf$leaves Nodes=n$lo"
            else
                echo "SwitchName=leaf$leaves Nodes=n[$lo-$hi]"
            fi
            leaves=$((leaves + 1))
        done
        if [ "$leaves" = 1 ]; then
            echo "SwitchName=spine Switches=leaf0"
        else
            echo "SwitchName=spine Switches=leaf[0-$((leaves - 1))]"
        fi
    } >"$dir/etc/topology.conf"

    # job_submit/lua reads job_submit.lua from slurm.conf's directory
    cp "$lua_src" "$dir/etc/job_submit.lua"
    export SLURM_CONF=$conf

    # --- daemons
    start_ctld
    for k in $(seq "$nodes"); do
        spawn_slurmd "n$k"
    done

    # --- every node idle within 30 s (counted from the start)
    local idle=0
    while :; do
        idle=$(in_ns sinfo -h -N -o '%N %T' 2>/dev/null | awk '$2 == "idle"' | wc -l)
        [ "$idle" -ge "$nodes" ] && break
        for k in slurmctld $(seq -f 'slurmd-n%g' "$nodes"); do
            alive "$(cat "$dir/run/$k.fgpid")" || { logs_tail; die "$k died"; }
        done
        if awk -v a="$t0" -v b="$(now)" 'BEGIN { exit !(b - a > 30) }'; then
            in_ns sinfo -N >&2 || true
            logs_tail
            die "only $idle of $nodes nodes idle after 30 s"
        fi
        sleep 0.1
    done
    trap - EXIT INT TERM

    in_ns sinfo -N -o '%N %T %P %c %m %G'
    echo "export SLURM_CONF=$conf"
    if [ -n "$ns" ]; then
        echo "# the cluster is in network namespace $ns: run clients with"
        echo "#   $prog exec $dir -- CMD ARGS..."
    fi
    awk -v a="$t0" -v b="$(now)" -v n="$nodes" -v g="$gpus" -v net="${ns:-loopback, port $port}" \
        'BEGIN { printf "cluster up in %.2f s: %d nodes x %d GPUs (%s)\n", b - a, n, g, net }'
}

# namespace and slurm.conf of a started cluster
load() {
    [ -f "$dir/etc/slurm.conf" ] || die "no cluster in $dir (no etc/slurm.conf); start one: $prog start $dir"
    ns=
    [ -f "$dir/run/netns" ] && ns=$(cat "$dir/run/netns")
    export SLURM_CONF="$dir/etc/slurm.conf"
}

cmd_exec() {
    [ $# -ge 1 ] || usage
    [ "$1" = -- ] || usage
    shift
    [ $# -ge 1 ] || usage
    load
    if [ -n "$ns" ]; then
        [ -e "/run/netns/$ns" ] || die "namespace $ns of $dir is gone; is the cluster up? ($prog status $dir)"
        exec nsenter --net="/run/netns/$ns" "$@"
    fi
    exec "$@"
}

cmd_restart_ctld() {
    [ $# -eq 0 ] || usage
    load
    local p='' i
    [ -f "$dir/run/slurmctld.fgpid" ] && p=$(cat "$dir/run/slurmctld.fgpid")
    if [ -n "$p" ] && alive "$p" && ours "$p"; then
        kill -TERM "$p"
        for i in $(seq 300); do
            alive "$p" || break
            [ "$i" -lt 300 ] || die "slurmctld $p did not stop in 30 s"
            sleep 0.1
        done
    fi
    start_ctld
    echo "slurmctld restarted (pid $(cat "$dir/run/slurmctld.fgpid"))"
}

node_arg() {
    [ $# -eq 1 ] || usage
    case $1 in '' | *[!A-Za-z0-9_-]*) die "bad node name '$1'" ;; esac
    grep -q "^NodeName=$1 " "$dir/etc/slurm.conf" 2>/dev/null ||
        die "no node $1 in $dir/etc/slurm.conf"
}

# A crash of one node: SIGKILL to its slurmd, its slurmstepds and the job
# processes below them; slurmctld notices only at SlurmdTimeout, or when an
# admin sets the node DOWN.
cmd_kill_node() {
    node_arg "$@"
    load
    local node=$1 p roots=
    # shellcheck disable=SC2013
    for p in $(grep -lszxF "GPSLURM_NODE=$node" /proc/[0-9]*/environ 2>/dev/null |
        cut -d/ -f3); do
        alive "$p" && ours "$p" && roots="$roots $p"
    done
    [ -n "$roots" ] || die "node $node has no slurmd running"
    # shellcheck disable=SC2046
    kill -KILL $(descendants "$roots") 2>/dev/null || true
    rm -f "$dir/run/slurmd-$node.fgpid"
    echo "node $node killed"
}

# NODE's slurmd again, until slurmctld has it back (not down) or 30 s
cmd_start_node() {
    node_arg "$@"
    load
    local node=$1 p i st
    p=
    [ -f "$dir/run/slurmd-$node.fgpid" ] && p=$(cat "$dir/run/slurmd-$node.fgpid")
    if [ -n "$p" ] && alive "$p" && ours "$p"; then
        die "node $node's slurmd already runs (pid $p)"
    fi
    spawn_slurmd "$node"
    for i in $(seq 300); do
        st=$(in_ns sinfo -h -n "$node" -N -o '%T' 2>/dev/null | head -n 1)
        case $st in '' | down* | unknown* | fail*) ;; *) break ;; esac
        alive "$(cat "$dir/run/slurmd-$node.fgpid")" || { logs_tail; die "slurmd of $node died"; }
        [ "$i" -lt 300 ] || die "node $node is still '$st' in Slurm after 30 s"
        sleep 0.1
    done
    echo "node $node back ($st)"
}

cmd_status() {
    [ $# -eq 0 ] || usage
    load
    local p ctld=
    [ -f "$dir/run/slurmctld.fgpid" ] && p=$(cat "$dir/run/slurmctld.fgpid") &&
        alive "$p" && ours "$p" && ctld=$p
    if [ -z "$ctld" ]; then
        echo "$dir: down"
        return 1
    fi
    echo "$dir: up (slurmctld pid $ctld${ns:+, namespace $ns}, SLURM_CONF=$SLURM_CONF)"
    in_ns sinfo -N
}

[ $# -ge 2 ] || usage
cmd=$1
dir=$(absdir "$2")
[ "$dir" != / ] || die "DIR must not be /"
shift 2
case $cmd in
start) cmd_start "$@" ;;
stop)
    [ $# -eq 0 ] || usage
    if [ -f "$dir/.slurm-cluster" ]; then stop_cluster; fi
    ;;
exec) cmd_exec "$@" ;;
status) cmd_status "$@" ;;
restart-ctld) cmd_restart_ctld "$@" ;;
kill-node) cmd_kill_node "$@" ;;
start-node) cmd_start_node "$@" ;;
*) usage ;;
esac

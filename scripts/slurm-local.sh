#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, from Debian's packages (slurmctld,
# slurmd, slurm-client, munge; scripts/install-deps.sh installs them), for the
# tests under tests/slurm and for trying a job script before a real cluster:
#
#   scripts/slurm-local.sh up DIR [CPUS]   start munged, slurmctld and slurmd
#   scripts/slurm-local.sh down DIR        stop them and remove DIR
#
# Everything lives in DIR (keep its path short: Slurm and munge put Unix
# sockets there): a private munge key and socket, slurm.conf, state, spool,
# logs; nothing under /etc is read or changed, and free TCP ports are chosen,
# so several such clusters (one per build tree) and a site's own Slurm can
# run side by side. The node is the machine itself, named `hostname -s`, with
# CPUS CPUs (default 16) whatever the cores: oversubscribed as `mpiexec
# --oversubscribe` is, so a test can run more ranks than there are cores.
# After `up`, `. DIR/env` sets SLURM_CONF, and srun, sbatch and sinfo talk to
# this cluster. Open MPI jobs start with `srun --mpi=pmix` (docs/slurm.md).
#
# `up` exits 0 with the node idle, or 77 (the test suite's skip code) with
# the reason on stderr and in DIR/skip-reason when it cannot come up (not
# root, packages missing, a daemon that does not start, no idle node within
# TSR_SLURM_WAIT seconds, default 60); it leaves no daemon running then.
set -euo pipefail

usage() { echo "usage: $0 up DIR [CPUS] | down DIR" >&2; exit 2; }
[ $# -ge 2 ] || usage
cmd=$1 dir=$2 cpus=${3:-16}
case $dir in /*) ;; *) dir=$PWD/$dir ;; esac

ours() {  # ours PIDFILE NAME: the pid in PIDFILE if NAME runs there
  local pid
  [ -s "$1" ] || return 0
  pid=$(cat "$1")
  # A stale file (a machine restarted since) may name someone else's process.
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] && echo "$pid"
  return 0
}

# Is DIR one of ours (or nothing yet)? `down` removes it, so never anything else.
ours_dir() {
  [ ! -e "$dir" ] || [ -f "$dir/.slurm-local" ] || [ -z "$(ls -A "$dir" 2>/dev/null)" ]
}

down() {
  ours_dir || { echo "slurm-local: $dir is not a directory of slurm-local.sh; left alone" >&2; exit 2; }
  # Jobs first (their steps run under slurmstepd, outside slurmd), then the
  # three daemons together (each takes a second or two to stop): TERM, and
  # KILL after 10 s.
  if [ -f "$dir/slurm.conf" ] && [ -s "$dir/run/slurmctld.pid" ]; then
    SLURM_CONF=$dir/slurm.conf timeout 10 scancel --quiet --user="$(id -un)" \
      >/dev/null 2>&1 || true
  fi
  local pids p=""
  pids="$(ours "$dir/run/slurmd.pid" slurmd) $(ours "$dir/run/slurmctld.pid" slurmctld)"
  pids="$pids $(ours "$dir/run/munged.pid" munged)"
  for p in $pids; do kill "$p" 2>/dev/null || true; done
  for _ in $(seq 100); do
    for p in $pids; do kill -0 "$p" 2>/dev/null && break; p=""; done
    [ -z "$p" ] && break
    sleep 0.1
  done
  for p in $pids; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}

skip() {  # skip REASON: leave nothing running, say why, exit 77
  local reason="slurm-local: cannot start Slurm in $dir: $*"
  if [ -d "$dir/log" ]; then
    for f in "$dir"/log/*.log; do
      [ -s "$f" ] && { echo "--- $(basename "$f") (last lines)"; tail -n 15 "$f"; }
    done >&2
  fi
  down
  mkdir -p "$dir"
  touch "$dir/.slurm-local"
  echo "$reason" >"$dir/skip-reason"
  echo "$reason" >&2
  exit 77
}

listening() {  # listening PORT: is a TCP socket listening on PORT?
  local hex
  hex=$(printf '%04X' "$1")
  awk -v p=":$hex" 'NR > 1 && $4 == "0A" && substr($2, length($2) - 4) == p { f = 1 }
                    END { exit !f }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

free_port() {  # free_port FROM: the first port >= FROM that nothing listens on
  local p=$1
  while listening "$p" || listening $((p + 1)); do p=$((p + 2)); done
  echo "$p"
}

up() {
  # What a killed run left in DIR (a cluster of the same build tree) goes first.
  down
  mkdir -p "$dir"
  touch "$dir/.slurm-local"
  # slurmd's step sockets, $dir/spool/<node>_<job>.<step>, must fit in 108 bytes.
  [ ${#dir} -le 64 ] || skip "the directory's path is longer than 64 characters (Unix sockets)"
  [ "$(id -u)" = 0 ] || skip "needs root (slurmd starts jobs as their user)"
  local c
  for c in munged slurmctld slurmd sinfo srun sbatch scancel; do
    command -v "$c" >/dev/null 2>&1 || skip "$c not found (scripts/install-deps.sh installs slurmctld, slurmd, slurm-client and munge)"
  done
  local node
  node=$(hostname -s)
  mkdir -p "$dir"/{run,state,spool,log}
  # munged wants every directory above its socket searchable by all.
  chmod 755 "$dir" "$dir/run"
  chmod 700 "$dir"/{state,spool,log}

  # A key of our own and munged on a socket of our own: the machine's munged,
  # if any, and /etc/munge are left alone.
  dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
  chmod 400 "$dir/munge.key"
  munged --socket="$dir/run/munge.sock" --key-file="$dir/munge.key" \
    --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/run/munged.seed" >>"$dir/log/munged.log" 2>&1 || skip "munged did not start"

  # Two consecutive free ports for slurmctld and slurmd, from a start that
  # depends on DIR, so that clusters of different build trees rarely collide.
  local base
  # Below Linux's ephemeral ports (32768 and up), which clients take at random.
  base=$((10000 + $(printf '%s' "$dir" | cksum | cut -d' ' -f1) % 22000 / 2 * 2))
  base=$(free_port "$base")
  cat >"$dir/slurm.conf" <<EOF
# Written by scripts/slurm-local.sh: a one-node cluster on $node.
ClusterName=tessera
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/run/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
# No cgroups in a container or small VM: plain process tracking, no binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# Open MPI needs a PMI; the plugin is named on srun's command line (--mpi=pmix)
# as on most sites, where MpiDefault varies.
MpiDefault=none
SchedulerType=sched/builtin
ReturnToService=2
# The node's CPUs are the configured ones, not the cores found: ranks
# oversubscribe the cores as mpiexec --oversubscribe does.
SlurmdParameters=config_overrides
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
MinJobAge=300
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=1024 State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
  printf 'export SLURM_CONF=%s\n' "$dir/slurm.conf" >"$dir/env.tmp"
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -f "$SLURM_CONF" -i >>"$dir/log/slurmctld.log" 2>&1 || skip "slurmctld did not start"
  slurmd -f "$SLURM_CONF" -N "$node" >>"$dir/log/slurmd.log" 2>&1 || skip "slurmd did not start"

  local wait=${TSR_SLURM_WAIT:-60} state="" t0=$SECONDS
  while [ $((SECONDS - t0)) -lt "$wait" ]; do
    state=$(timeout 10 sinfo -h -N -n "$node" -o %t 2>/dev/null || true)
    [ "$state" = idle ] && break
    # A daemon that died after forking (a port taken meanwhile, a bad
    # setting) will not come back: say so now, not after the whole wait.
    if [ $((SECONDS - t0)) -ge 5 ]; then
      [ -n "$(ours "$dir/run/slurmctld.pid" slurmctld)" ] || skip "slurmctld stopped"
      [ -n "$(ours "$dir/run/slurmd.pid" slurmd)" ] || skip "slurmd stopped"
    fi
    sleep 0.5
  done
  [ "$state" = idle ] || skip "node $node not idle after ${wait} s (state: '${state:-no answer}')"
  mv "$dir/env.tmp" "$dir/env"
  echo "slurm-local: up in $dir: node $node idle with $cpus CPUs after $((SECONDS - t0)) s" \
       "(slurmctld port $base, slurmd $((base + 1))); . $dir/env to use it"
}

case $cmd in
  up) up ;;
  down) down ;;
  *) usage ;;
esac

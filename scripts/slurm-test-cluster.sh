#!/usr/bin/env bash
# A throwaway two-node Slurm cluster on one machine, for tests and for trying
# `stepscope-cli sweep --slurm` (also a point whose ranks go over two nodes):
# munged, slurmctld and two slurmd (stepscope-node1 and -node2, each with
# half the CPUs) from Debian's packages, started without systemd, each with
# its own config, ports, state, spool and logs under DIR. Nothing outside DIR
# is touched.
#
#   scripts/slurm-test-cluster.sh install     # the Debian packages (root or sudo)
#   scripts/slurm-test-cluster.sh start DIR   # prints SLURM_CONF=DIR/slurm.conf
#   SLURM_CONF=DIR/slurm.conf sbatch …        # use it
#   scripts/slurm-test-cluster.sh stop DIR    # stops the daemons start started, by PID
#
# `start` exits 77 (and stops what it started) where the cluster cannot be had
# here: the packages are missing or a daemon does not come up. Tests skip then.
set -euo pipefail

packages=(munge slurmctld slurmd slurm-client)
daemons=(munged slurmctld slurmd)

usage() {
  echo "usage: $0 install | start DIR | stop DIR" >&2
  exit 2
}

install_packages() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo_cmd=""
  [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  echo "slurm-test-cluster: installing ${missing[*]}" >&2
  $sudo_cmd apt-get update -qq
  # RUNLEVEL=1: the packages' scripts start no system-wide daemons.
  RUNLEVEL=1 DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq \
    --no-install-recommends "${missing[@]}" >/dev/null
}

# Stops each daemon this script started in DIR: TERM, then KILL after 10 s.
stop_cluster() {
  local dir="$1" name pid
  for name in slurmd1 slurmd2 slurmctld munged; do
    [ -f "$dir/pids/$name" ] || continue
    pid="$(cat "$dir/pids/$name")"
    # Only the process we started: a pid that was reused is left alone.
    if grep -q "${name%[12]}" "/proc/$pid/cmdline" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$dir/pids/$name"
  done
}

# Fails the start: says why, shows the daemons' logs, stops what runs, exit 77.
give_up() {
  local dir="$1" why="$2" log
  echo "slurm-test-cluster: $why" >&2
  for log in "$dir"/log/*.log; do
    [ -f "$log" ] && { echo "--- $log" >&2; tail -n 15 "$log" >&2; }
  done
  stop_cluster "$dir"
  exit 77
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Starts `name` in the background in its own session; its PID goes to DIR/pids.
launch() {
  local dir="$1" name="$2"
  shift 2
  setsid "$@" </dev/null >>"$dir/log/$name.out" 2>&1 &
  echo $! >"$dir/pids/$name"
}

start_cluster() {
  local dir tool
  mkdir -p "$1"
  dir="$(cd "$1" && pwd)"
  for tool in "${daemons[@]}" sbatch sinfo squeue; do
    command -v "$tool" >/dev/null || PATH="$PATH:/usr/sbin" command -v "$tool" >/dev/null ||
      { echo "slurm-test-cluster: '$tool' is not installed ($0 install)" >&2; exit 77; }
  done
  export PATH="$PATH:/usr/sbin"
  mkdir -p "$dir"/{munge,state,log,pids} "$dir"/spool/stepscope-node{1,2}
  chmod 700 "$dir" "$dir/munge"

  # munge: its own key and socket; --force because it runs as root here.
  head -c 1024 /dev/urandom >"$dir/munge/munge.key"
  chmod 600 "$dir/munge/munge.key"
  launch "$dir" munged munged --foreground --force --socket="$dir/munge/munge.socket" \
    --key-file="$dir/munge/munge.key" --log-file="$dir/log/munged.log" \
    --pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/munged.seed"
  for _ in $(seq 100); do
    [ -S "$dir/munge/munge.socket" ] && break
    sleep 0.1
  done
  [ -S "$dir/munge/munge.socket" ] || give_up "$dir" "munged did not start"

  local host cpus
  host="$(hostname -s)"
  cpus=$(($(nproc) / 2))
  [ "$cpus" -ge 1 ] || cpus=1
  touch "$dir/plugstack.conf"
  cat >"$dir/slurm.conf" <<EOF
ClusterName=stepscope-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$(free_port)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
SlurmUser=$(id -un)
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
PlugStackConfig=$dir/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
MailProg=/bin/true
NodeName=stepscope-node[1-2] NodeHostname=$host NodeAddr=127.0.0.1 Port=$(free_port),$(free_port) CPUs=$cpus RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=stepscope-node[1-2] Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF="$dir/slurm.conf"
  launch "$dir" slurmctld slurmctld -D -c -i
  # Two slurmd on one host, a node each (Debian's is built for it: -N).
  launch "$dir" slurmd1 slurmd -D -N stepscope-node1
  launch "$dir" slurmd2 slurmd -D -N stepscope-node2
  local state=""
  for _ in $(seq 150); do
    state="$(sinfo -h -N -o %T 2>/dev/null | tr '\n' ' ' || true)"
    [ "$state" = "idle idle " ] && break
    sleep 0.2
  done
  [ "$state" = "idle idle " ] ||
    give_up "$dir" "the nodes did not become idle in 30 s (states: '${state:-no answer}')"
  echo "SLURM_CONF=$dir/slurm.conf"
}

[ $# -ge 1 ] || usage
case "$1" in
  install) install_packages ;;
  start) [ $# -eq 2 ] || usage; start_cluster "$2" ;;
  stop) [ $# -eq 2 ] || usage; stop_cluster "$(cd "$2" && pwd)" ;;
  *) usage ;;
esac

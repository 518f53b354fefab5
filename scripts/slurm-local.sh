# A one-node Slurm on this machine, as the current user, for trying scripts/grade-slurm and for
# measuring it (bench/slurm_grade_class.sh) and testing it (tests/slurm_test.sh). Sourced:
#   . scripts/slurm-local.sh
#   slurm_local_start DIR || { echo "no Slurm here: $slurm_local_why"; ...; }
#   ... sbatch, squeue, scripts/grade-slurm (SLURM_CONF is exported) ...
#   slurm_local_stop
# slurm_local_start starts munged (its own key, socket, pid and log in DIR), slurmctld and slurmd
# (-D, a generated slurm.conf: one node with nproc CPUs, free ports from 16817 on, state and
# spool in DIR, proctrack/linuxproc, task/none, no cgroups) and waits until the node is idle.
# It returns 1 with slurm_local_why set where munge or Slurm is not installed or does not start
# (what it had started is stopped). DIR must exist; it is made searchable by all (munged wants
# its socket's folder so). slurm_local_stop cancels the user's jobs and stops the daemons.

slurm_local_ctld=0 slurm_local_slurmd=0 slurm_local_dir="" slurm_local_why=""

slurm_local_stop_pid() {  # pid: TERM, then KILL after 5 s
  [ "$1" -gt 0 ] && kill -0 "$1" 2>/dev/null || return 0
  kill "$1" 2>/dev/null
  for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$1" 2>/dev/null
}

slurm_local_stop() {
  if [ "$slurm_local_ctld" -gt 0 ] && kill -0 "$slurm_local_ctld" 2>/dev/null; then
    scancel --user="$(id -un)" 2>/dev/null  # no job step left behind
    for _ in $(seq 50); do [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break; sleep 0.2; done
  fi
  slurm_local_stop_pid "$slurm_local_slurmd"
  slurm_local_stop_pid "$slurm_local_ctld"
  [ -n "$slurm_local_dir" ] && [ -f "$slurm_local_dir/munged.pid" ] &&
    slurm_local_stop_pid "$(cat "$slurm_local_dir/munged.pid")"
  slurm_local_ctld=0 slurm_local_slurmd=0
}

slurm_local_fail() {  # why: stop what was started, say why, return 1
  slurm_local_why=$*
  slurm_local_stop
  return 1
}

slurm_local_logs() {
  tail -n 4 "$slurm_local_dir"/slurmctld.out "$slurm_local_dir"/slurmd.out 2>/dev/null |
    tr '\n' ' '
}

slurm_local_start() {  # DIR
  local d=$1 c ports ctld_port slurmd_port node
  slurm_local_dir=$d
  chmod 755 "$d"
  for c in munged munge slurmctld slurmd sbatch squeue scontrol scancel sinfo; do
    command -v $c >/dev/null ||
      { slurm_local_fail "$c not found: install slurm-wlm and munge (scripts/install-deps.sh)"
        return 1; }
  done
  head -c 1024 /dev/urandom >"$d/munge.key" && chmod 600 "$d/munge.key"
  munged --force --key-file="$d/munge.key" --socket="$d/munge.socket" \
    --pid-file="$d/munged.pid" --log-file="$d/munged.log" --seed-file="$d/munged.seed" \
    >"$d/munged.out" 2>&1 ||
    { slurm_local_fail "munged does not start here:" \
        "$(tail -3 "$d/munged.out" "$d/munged.log" 2>/dev/null)"; return 1; }
  munge -S "$d/munge.socket" -n | unmunge -S "$d/munge.socket" >/dev/null 2>&1 ||
    { slurm_local_fail "munge does not encode and decode a credential here:" \
        "$(tail -3 "$d/munged.log")"; return 1; }
  # Two free TCP ports in a row from 16817 on (slurmctld, slurmd).
  ports=$(python3 -c '
import socket
for p in range(16817, 17817, 2):
    try:
        for q in (p, p + 1):
            with socket.socket() as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("", q))
        print(p, p + 1)
        break
    except OSError:
        pass')
  read -r ctld_port slurmd_port <<<"$ports"
  [ -n "${slurmd_port:-}" ] ||
    { slurm_local_fail "no two free TCP ports from 16817 to 17817"; return 1; }
  node=$(hostname -s)
  mkdir -p "$d/state" "$d/spool"
  cat >"$d/slurm.conf" <<EOF
ClusterName=rsblocal
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
AuthType=auth/munge
AuthInfo=socket=$d/munge.socket
CredType=cred/munge
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MailProg=/bin/true
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$d/slurm.conf
  slurmctld -D -c -f "$SLURM_CONF" >"$d/slurmctld.out" 2>&1 &
  slurm_local_ctld=$!
  slurmd -D -N "$node" -f "$SLURM_CONF" >"$d/slurmd.out" 2>&1 &
  slurm_local_slurmd=$!
  for _ in $(seq 100); do
    [ "$(sinfo -h -n "$node" -o %t 2>/dev/null)" = idle ] && return 0
    kill -0 $slurm_local_ctld 2>/dev/null && kill -0 $slurm_local_slurmd 2>/dev/null || break
    sleep 0.2
  done
  slurm_local_fail "slurmctld and slurmd did not bring node $node up within 20 s:" \
    "$(slurm_local_logs)"
}

#!/usr/bin/env bash
# Stop exactly the processes hack/cluster/up.sh (and start-scheduler.sh) started, by the
# PIDs in $PHALANX_CLUSTER_DIR/pids (verified against /proc start times, so a recycled PID
# is never signalled), newest first: SIGTERM, then SIGKILL after a timeout. Then remove
# the state dir (set PHALANX_KEEP_DIR=1 to keep it, e.g. to read logs). Safe to run twice.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
DIR="$PHALANX_CLUSTER_DIR"
TIMEOUT=${PHALANX_STOP_TIMEOUT:-15}

if [[ ! -d $DIR ]]; then
  echo "[down] nothing to stop: $DIR does not exist"
  exit 0
fi
rc=0
if [[ -f $DIR/pids ]]; then
  # newest first (reverse start order); never ourselves (the TTL watchdog execs down.sh)
  mapfile -t lines < <(tac "$DIR/pids")
  for l in "${lines[@]}"; do
    read -r name pid st <<<"$l"
    [[ -n ${pid:-} ]] || continue
    if [[ $pid == "$$" ]]; then continue; fi
    if phx_alive "$pid" "$st"; then
      echo "[down] stopping $name (pid $pid)"
      phx_stop_pid "$pid" "$TIMEOUT" "$st" || { echo "[down] FAILED to stop $name (pid $pid)" >&2; rc=1; }
    fi
  done
fi
if [[ $rc != 0 ]]; then
  echo "[down] some processes could not be stopped; keeping $DIR" >&2
  exit 1
fi
if [[ ${PHALANX_KEEP_DIR:-0} == 1 ]]; then
  : >"$DIR/pids"
  echo "[down] stopped; kept $DIR"
else
  rm -rf "$DIR"
  echo "[down] stopped; removed $DIR"
fi

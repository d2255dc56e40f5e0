#!/usr/bin/env bash
# Stop everything hack/phalanx-up.sh started (phalanx-scheduler, phalanx-operator, kube-scheduler
# and the control plane), by the PIDs recorded in $PHALANX_CLUSTER_DIR/pids, and remove the state
# dir (PHALANX_KEEP_DIR=1 keeps it, e.g. to read logs/). Safe to run twice.
set -uo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/cluster/down.sh" "$@"

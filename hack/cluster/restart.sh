#!/usr/bin/env bash
# Restart one component of the running local cluster with the exact same flags and ports.
# Usage: hack/cluster/restart.sh <component> [--down-for SECONDS] [--kill]
#   component: etcd | kube-apiserver | kube-controller-manager | kwok | kube-scheduler |
#              phalanx-scheduler | phalanx-operator (started by hack/phalanx-up.sh)
#   --down-for N: keep it stopped N seconds before starting it again (default 0)
#   --kill: SIGKILL it (a crash) instead of a graceful SIGTERM shutdown
# Waits until it is healthy again. Used by integration tests ("a watch survives a
# kube-apiserver restart").
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
DIR="$PHALANX_CLUSTER_DIR"
name=${1:?usage: restart.sh <component> [--down-for SECONDS]}; shift
down_for=0 kill=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --down-for) down_for=$2; shift 2 ;;
    --kill) kill=1; shift ;;
    *) echo "restart.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -f $DIR/env && -f $DIR/run/$name.sh ]] || { echo "[restart] FAILED: no running cluster with component '$name' in $DIR" >&2; exit 1; }
# shellcheck disable=SC1091
source "$DIR/env"
if [[ $kill == 1 ]]; then
  read -r pid st <<<"$(phx_pid_of "$name")"
  if [[ -n ${pid:-} ]] && phx_alive "$pid" "$st"; then
    echo "[restart] killing $name (pid $pid, SIGKILL)" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
fi
echo "[restart] stopping $name" >&2
phx_stop "$name" 30 || { echo "[restart] FAILED to stop $name" >&2; exit 1; }
sleep "$down_for"
echo "[restart] starting $name" >&2
pid=$(phx_start "$name")
curl_api() { curl -sf --max-time 3 --cacert "$CA_CERT" --cert "$ADMIN_CERT" --key "$ADMIN_KEY" "$APISERVER_URL$1"; }
case $name in
  etcd) phx_wait 30 etcd etcd curl -sf --max-time 2 "$ETCD_ENDPOINTS/health" ;;
  kube-apiserver) phx_wait 90 "kube-apiserver /readyz" kube-apiserver curl_api /readyz ;;
  kube-controller-manager) phx_wait 60 kube-controller-manager kube-controller-manager curl -skf --max-time 2 "https://127.0.0.1:$KCM_PORT/healthz" ;;
  kwok) phx_wait 60 kwok kwok curl -sf --max-time 2 "http://127.0.0.1:$KWOK_PORT/healthz" ;;
  kube-scheduler) phx_wait 60 kube-scheduler kube-scheduler curl -skf --max-time 2 "https://127.0.0.1:$SCHEDULER_PORT/healthz" ;;
  phalanx-scheduler) phx_wait 120 "phalanx-scheduler /readyz" phalanx-scheduler curl -sf --max-time 2 "http://127.0.0.1:$PHALANX_SCHEDULER_HEALTH_PORT/readyz" ;;
  # After a kill -9 the new replica waits out the old holder's Lease (15 s) before it leads.
  phalanx-operator) phx_wait 120 "phalanx-operator /readyz" phalanx-operator curl -sf --max-time 2 "http://127.0.0.1:$PHALANX_OPERATOR_HEALTH_PORT/readyz" ;;
esac
echo "[restart] $name running again (pid $pid)" >&2

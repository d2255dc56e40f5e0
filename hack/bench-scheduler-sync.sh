#!/usr/bin/env bash
# Times phalanx-scheduler's initial sync from a real kube-apiserver and measures its memory
# (issue #10: "10,000 nodes + 100,000 pods held in < 500 MB RSS; initial sync timed").
#
# Usage: hack/bench-scheduler-sync.sh [--nodes N] [--pods M] [--concurrency C]
#                                     [--timeout SECONDS] [--apiserver-rss] [--keep-cluster]
#   --nodes N          Node objects to create (default 10000)
#   --pods M           bound Pods to create, spread over the nodes (default 100000)
#   --concurrency C    concurrent creators in the loader (default 16)
#   --timeout SECONDS  give up after this long in all (default 2400)
#   --apiserver-rss    also report kube-apiserver's and etcd's VmRSS once the scheduler is ready
#   --keep-cluster     leave the loaded control plane running afterwards (to run phalanx-scheduler
#                      against it again); its TTL watchdog still stops it after TIMEOUT+1200 s
# Env: PHALANX_BUILD_DIR (default build): phalanx-scheduler and phalanx_cluster_loader.
#
# On a PRIVATE control plane (hack/cluster/up.sh in a fresh state dir) it installs crds/, runs
# tests/bench/cluster_loader.cc (N nodes, M pods bound at create, ~70% of GPUs requested), then
# starts phalanx-scheduler (--topology-preset eks, free loopback ports) and measures the time
# from its start to /readyz 200, its VmRSS and VmHWM then, and checks that /metrics shows
# phalanx_snapshot_nodes == N and phalanx_snapshot_pods == M. Stops the scheduler by PID and
# the cluster with hack/cluster/down.sh. Progress goes to stderr; the LAST line of stdout is:
#   {"nodes":..,"pods":..,"load_s":..,"sync_to_ready_s":..,"informers_synced_s":..,
#    "scheduler_cpu_s":..,"rss_mb":..,"peak_rss_mb":..,"snapshot_nodes":..,"snapshot_pods":..
#    [,"apiserver_rss_mb":..,"etcd_rss_mb":..]}
# Exit 0 when the snapshot holds exactly N nodes and M pods, 1 otherwise, 2 on bad arguments.
# The nodes have no kubelet: kube-controller-manager marks them Ready=Unknown after ~50 s (and
# may taint them unreachable); the scheduler holds them all the same.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NODES=10000 PODS=100000 CONCURRENCY=16 TIMEOUT=2400 APISERVER_RSS=0 KEEP=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --nodes) NODES=$2; shift 2 ;;
    --pods) PODS=$2; shift 2 ;;
    --concurrency) CONCURRENCY=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --apiserver-rss) APISERVER_RSS=1; shift ;;
    --keep-cluster) KEEP=1; shift ;;
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    *) echo "bench-scheduler-sync.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for v in NODES PODS CONCURRENCY TIMEOUT; do
  [[ ${!v} =~ ^[0-9]+$ ]] || { echo "bench-scheduler-sync.sh: --${v,,} wants a count, got '${!v}'" >&2; exit 2; }
done
((NODES >= 1 && TIMEOUT >= 60)) || { echo "bench-scheduler-sync.sh: --nodes must be >= 1 and --timeout >= 60" >&2; exit 2; }

BUILD="${PHALANX_BUILD_DIR:-build}"
[[ $BUILD == /* ]] || BUILD="$ROOT/$BUILD"
SCHED_BIN="$BUILD/scheduler/server/phalanx-scheduler"
LOADER_BIN="$BUILD/tests/bench/phalanx_cluster_loader"
for b in "$SCHED_BIN" "$LOADER_BIN"; do
  [[ -x $b ]] || { echo "[bench-sync] FAILED: $b is not built (cmake --build $BUILD --target phalanx-scheduler phalanx_cluster_loader)" >&2; exit 1; }
done

export PHALANX_CLUSTER_DIR
PHALANX_CLUSTER_DIR=$(mktemp -d /tmp/phalanx-bench-sync.XXXXXX)
source "$ROOT/hack/cluster/lib.sh"
DIR=$PHALANX_CLUSTER_DIR
log() { echo "[bench-sync] $*" >&2; }
deadline=$((SECONDS + TIMEOUT))
remaining() { local r=$((deadline - SECONDS)); ((r > 0)) && echo "$r" || echo 1; }
now() { echo "$EPOCHREALTIME"; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
# MB of 10^6 bytes, as the target is stated (MiB would read as less).
kb_to_mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }'; }
vm() { # pid field -> kB
  awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null
}

SCHED_PID="" SCHED_ST="" ok=0
cleanup() {
  if [[ -n $SCHED_PID ]]; then phx_stop_pid "$SCHED_PID" 15 "$SCHED_ST" || true; fi
  if [[ $KEEP == 1 ]]; then
    log "cluster kept: KUBECONFIG=$DIR/kubeconfig; stop it with PHALANX_CLUSTER_DIR=$DIR hack/cluster/down.sh"
  elif [[ $ok == 1 ]]; then
    "$ROOT/hack/cluster/down.sh" >/dev/null 2>&1 || true
  else
    log "failed; logs kept in $DIR/logs (remove the directory when done)"
    PHALANX_KEEP_DIR=1 "$ROOT/hack/cluster/down.sh" >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT

# The watchdog bounds the cluster's life even if this script is killed.
log "starting a private control plane in $DIR"
KUBECONFIG_PATH=$("$ROOT/hack/cluster/up.sh" --ttl $((TIMEOUT + 1200 > 3600 ? TIMEOUT + 1200 : 3600)) | tail -1)
export KUBECONFIG="$KUBECONFIG_PATH"
kubectl apply --server-side -f "$ROOT/crds/" >/dev/null
kubectl wait --for condition=established --timeout=60s -f "$ROOT/crds/" >/dev/null

log "loading $NODES nodes and $PODS pods (concurrency $CONCURRENCY)"
t_load=$(now)
if ! loader_out=$("$LOADER_BIN" --kubeconfig "$KUBECONFIG_PATH" --nodes "$NODES" --pods "$PODS" \
  --concurrency "$CONCURRENCY" --timeout-seconds "$(remaining)" | tail -1); then
  log "FAILED: phalanx_cluster_loader did not create everything (its message is above)"
  exit 1
fi
load_s=$(elapsed "$t_load" "$(now)")
log "loaded in ${load_s}s: $loader_out"

EXT_PORT=$(phx_free_port); GRPC_PORT=$(phx_free_port); HEALTH_PORT=$(phx_free_port)
SCHED_LOG="$DIR/logs/phalanx-scheduler.log"
log "starting phalanx-scheduler (health port $HEALTH_PORT)"
t_start=$(now)
"$SCHED_BIN" --kubeconfig "$KUBECONFIG_PATH" --topology-preset eks \
  --extender-address "127.0.0.1:$EXT_PORT" --grpc-address "127.0.0.1:$GRPC_PORT" \
  --health-address "127.0.0.1:$HEALTH_PORT" --sync-timeout-seconds "$(remaining)" \
  >"$SCHED_LOG" 2>&1 </dev/null &
SCHED_PID=$!
SCHED_ST=$(phx_starttime "$SCHED_PID")
ready=0
while ((SECONDS < deadline)); do
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$HEALTH_PORT/readyz" || true)
  if [[ $code == 200 ]]; then ready=1; break; fi
  if ! phx_alive "$SCHED_PID" "$SCHED_ST"; then
    log "FAILED: phalanx-scheduler exited before /readyz turned 200; last lines of $SCHED_LOG:"
    tail -n 20 "$SCHED_LOG" >&2
    exit 1
  fi
  sleep 0.05
done
t_ready=$(now)
if [[ $ready != 1 ]]; then
  log "FAILED: phalanx-scheduler not ready before the ${TIMEOUT}s deadline; last lines of $SCHED_LOG:"
  tail -n 20 "$SCHED_LOG" >&2
  exit 1
fi
sync_s=$(elapsed "$t_start" "$t_ready")
rss_kb=$(vm "$SCHED_PID" VmRSS); hwm_kb=$(vm "$SCHED_PID" VmHWM)
# user + system CPU until ready: what the scheduler itself spent, the rest was waiting on lists
cpu_s=$(awk -v t="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$SCHED_PID/stat")
metrics=$(curl -sf --max-time 10 "http://127.0.0.1:$HEALTH_PORT/metrics")
metric() { awk -v m="$1" '$1 == m { printf "%d", $2 }' <<<"$metrics"; }
snap_nodes=$(metric phalanx_snapshot_nodes); snap_pods=$(metric phalanx_snapshot_pods)
informers_s=$(sed -n 's/.*informers synced in \([0-9.]*\) s.*/\1/p' "$SCHED_LOG" | head -1)
extra=""
if [[ $APISERVER_RSS == 1 ]]; then
  for c in kube-apiserver etcd; do
    read -r pid st <<<"$(phx_pid_of "$c")"
    extra+=",\"${c#kube-}_rss_mb\":$(kb_to_mb "$(vm "$pid" VmRSS)")"
  done
fi
log "ready after ${sync_s}s; stopping phalanx-scheduler (pid $SCHED_PID)"
phx_stop_pid "$SCHED_PID" 15 "$SCHED_ST" || log "phalanx-scheduler did not stop on SIGTERM"
SCHED_PID=""

printf '{"nodes":%s,"pods":%s,"load_s":%s,"sync_to_ready_s":%s,"informers_synced_s":%s,' \
  "$NODES" "$PODS" "$load_s" "$sync_s" "${informers_s:-null}"
printf '"scheduler_cpu_s":%s,"rss_mb":%s,"peak_rss_mb":%s,"snapshot_nodes":%s,"snapshot_pods":%s%s}\n' \
  "$cpu_s" "$(kb_to_mb "$rss_kb")" "$(kb_to_mb "$hwm_kb")" "${snap_nodes:-null}" "${snap_pods:-null}" "$extra"
if [[ ${snap_nodes:-} != "$NODES" || ${snap_pods:-} != "$PODS" ]]; then
  log "FAILED: the snapshot holds ${snap_nodes:-?} nodes and ${snap_pods:-?} pods; $NODES and $PODS were created"
  exit 1
fi
ok=1

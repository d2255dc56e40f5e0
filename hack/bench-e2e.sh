#!/usr/bin/env bash
# End-to-end throughput of Phalanx against plain kube-scheduler, side by side in one run on one
# machine, plus an admission burst and the daemons' footprint (issue #12).
#
# Usage: hack/bench-e2e.sh [--nodes N] [--pods P] [--burst-jobs B] [--gpus-per-node G]
#                          [--scheduler-qps Q] [--operator-args "FLAGS"] [--timeout SECONDS]
#                          [--keep-cluster]
#        hack/bench-e2e.sh --ladder [N1,N2,...] [same flags]   (default 100,1000,5000)
#   --nodes N          kwok fake p5.48xlarge nodes (default 1000)
#   --pods P           pods scheduled in each of the two throughput phases (default 10000)
#   --burst-jobs B     1-pod TrainingJobs in the admission burst (default min(1000, free GPUs
#                      after the gang phase / 2); 0 skips it)
#   --gpus-per-node G  GPUs per fake node (default 16, so that 10,000 1-GPU pods fit on 1,000
#                      nodes with room for the burst; the node is otherwise a p5.48xlarge)
#   --scheduler-qps Q  kube-scheduler's clientConnection qps, burst 2Q, in both phases (default
#                      500; kube-scheduler's own default of 50 caps binding at ~50 pods/s)
#   --operator-args F  extra phalanx-operator flags (default "--workers 16")
#   --timeout SECONDS  give up after this long in all (default 3600)
#   --keep-cluster     leave the cluster running afterwards (its TTL watchdog still stops it)
#   --ladder LIST      run the whole benchmark once per node count (a fresh cluster each, pods
#                      min(P, 10 x nodes)) and print {"ladder":[...]} with each run's figures
# Env: PHALANX_BUILD_DIR (default build): phalanx-scheduler and phalanx-operator.
#      PHALANX_NODE_LEASE_SECONDS: the fake nodes' Lease duration (hack/cluster/up.sh); default
#      40 s, and nodes x 60 ms above 1,000 nodes (kwok cannot renew 5,000 40-s Leases on 2
#      cores); the JSON's node_lease_s says which.
#
# A PRIVATE hack/phalanx-up.sh cluster in a fresh state dir (kube-apiserver, etcd,
# kube-controller-manager, kwok, kube-scheduler, phalanx-scheduler, phalanx-operator), N fake
# nodes (hack/cluster/fake-nodes.sh --preset eks --gpus G), then:
#   a. plain: kube-scheduler runs a configuration with only the default profile and no extender
#      (plain kube-scheduler); P pods (1 GPU, 8 cpu, 64Gi each) are created through 16 keep-alive
#      connections; default_pods_per_s = P / (first create sent -> watch shows the last pod's
#      spec.nodeName). The pods are then deleted (grace 0).
#   b. phalanx: kube-scheduler is restarted with deploy/scheduler/kube-scheduler-config.yaml
#      (phalanx profile, phalanx-scheduler as filter/prioritize/bind extender), same qps; the
#      same P pods as TrainingJobs of sizes 1, 2, 4, ..., 64 in turn (the last cut to fit), same
#      resources per pod, created the same way on a ClusterTrainingQueue with quota twice the
#      cluster; the operator admits them and creates their pods; phalanx_pods_per_s = P / (first
#      create sent -> last pod bound). gang_bound_p50_s/p99_s: per job, its create sent -> the
#      watch event of its last pod bound. partial_gangs: jobs with some but not all pods bound
#      when every pod is bound (or at the deadline). phalanx.pods_created_s: first create sent
#      -> the watch shows the operator's last pod; phalanx.pod_bound_p50_s/p99_s: per pod, first
#      seen -> bound (kube-scheduler, the extender's filter and bind). plain.apiserver_writes and
#      phalanx.apiserver_writes: kube-apiserver's own apiserver_request_total for write verbs
#      over each phase, from every client, with every (resource, verb) written at least 10 times.
#   c. burst: B 1-pod TrainingJobs on a second ClusterTrainingQueue held with stopPolicy Hold;
#      once the operator has marked every one Queued, the queue's stopPolicy is set to None;
#      admitted_per_s = B / (release -> the watch event of the last status.admission);
#      admit_p99_s per job from the same release. The gang phase's pods stay bound meanwhile.
#   d. footprint: VmHWM/VmRSS of phalanx-operator and phalanx-scheduler at the end (the peak of
#      the whole run), the extender's latency by verb from phalanx-scheduler's /metrics
#      (mean; p99 as the bucket bound the 99th percentile falls in), the operator's admission
#      cycles (phalanx_admission_cycle_duration_seconds and its "admission cycle" log lines);
#      then both daemons are restarted with everything in place: time to /readyz, the
#      scheduler's own "informers synced in" figure, and their VmHWM after that sync.
# Every bound/admitted time is a watch event's arrival (tools: hack/bench-e2e.py).
# The LAST line of stdout is one JSON object:
#   {"nodes":..,"pods":..,"default_pods_per_s":..,"phalanx_pods_per_s":..,"ratio":..,
#    "partial_gangs":0,"gang_bound_p50_s":..,"gang_bound_p99_s":..,"burst_jobs":..,
#    "admitted_per_s":..,"admit_p99_s":.., ...more fields}
# Progress goes to stderr. Exit 0 when every pod was bound, no gang was left partial and every
# burst job admitted; 1 otherwise; 2 on bad arguments. Figures depend on the machine's load:
# load_avg_1m is sampled during the run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NODES=1000 PODS=10000 BURST="" GPUS=16 QPS=500 OP_ARGS="--workers 16" TIMEOUT=3600 KEEP=0 LADDER=""
ARGS=("$@")
while [[ $# -gt 0 ]]; do
  case $1 in
    --nodes) NODES=$2; shift 2 ;;
    --pods) PODS=$2; shift 2 ;;
    --burst-jobs) BURST=$2; shift 2 ;;
    --gpus-per-node) GPUS=$2; shift 2 ;;
    --scheduler-qps) QPS=$2; shift 2 ;;
    --operator-args) OP_ARGS=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --keep-cluster) KEEP=1; shift ;;
    --ladder)
      if [[ ${2:-} =~ ^[0-9,]+$ ]]; then LADDER=$2; shift 2; else LADDER=100,1000,5000; shift; fi ;;
    -h|--help) sed -n '2,/^# load_avg_1m is sampled/p' "$0"; exit 0 ;;
    *) echo "bench-e2e.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for v in NODES PODS GPUS QPS TIMEOUT; do
  [[ ${!v} =~ ^[0-9]+$ ]] || { echo "bench-e2e.sh: --${v,,} wants a count, got '${!v}'" >&2; exit 2; }
done
[[ -z $BURST || $BURST =~ ^[0-9]+$ ]] || { echo "bench-e2e.sh: --burst-jobs wants a count" >&2; exit 2; }

if [[ -n $LADDER ]]; then
  # One fresh cluster per rung; the rung's own flags follow the user's (the last --nodes wins).
  rest=() skip=0
  for a in "${ARGS[@]}"; do
    if ((skip)); then skip=0; continue; fi
    case $a in --ladder) [[ ${ARGS[*]} =~ --ladder\ [0-9,]+ ]] && skip=1; continue ;; esac
    rest+=("$a")
  done
  outs=()
  IFS=, read -ra rungs <<<"$LADDER"
  for n in "${rungs[@]}"; do
    p=$((PODS < 10 * n ? PODS : 10 * n))
    echo "[bench-e2e] ladder: $n nodes, $p pods" >&2
    out=$("$0" "${rest[@]}" --nodes "$n" --pods "$p" | tail -1) || { echo "[bench-e2e] FAILED: the $n-node rung" >&2; exit 1; }
    outs+=("$out")
  done
  printf '%s\n' "${outs[@]}" | jq -cs '{ladder: .}'
  exit 0
fi

((NODES >= 1 && PODS >= 1 && GPUS >= 1 && QPS >= 1 && TIMEOUT >= 120)) ||
  { echo "bench-e2e.sh: need --nodes, --pods, --gpus-per-node, --scheduler-qps >= 1 and --timeout >= 120" >&2; exit 2; }
FREE=$((NODES * GPUS - PODS))
((FREE >= 0)) || { echo "bench-e2e.sh: $PODS 1-GPU pods do not fit on $NODES nodes of $GPUS GPUs" >&2; exit 2; }
[[ -n $BURST ]] || BURST=$((FREE / 2 < 1000 ? FREE / 2 : 1000))
((BURST <= FREE)) || { echo "bench-e2e.sh: --burst-jobs $BURST do not fit beside the gangs ($FREE GPUs free)" >&2; exit 2; }

BUILD="${PHALANX_BUILD_DIR:-build}"
[[ $BUILD == /* ]] || BUILD="$ROOT/$BUILD"
export PHALANX_BUILD_DIR="$BUILD"
for b in scheduler/server/phalanx-scheduler operator/phalanx-operator; do
  [[ -x $BUILD/$b ]] || { echo "[bench-e2e] FAILED: $BUILD/$b is not built (cmake --build $BUILD --target phalanx-scheduler phalanx-operator)" >&2; exit 1; }
done
for t in jq curl python3 kubectl; do
  command -v "$t" >/dev/null || { echo "[bench-e2e] FAILED: $t is not installed (hack/setup.sh)" >&2; exit 1; }
done

BENCH_TAG=bench-e2e
# shellcheck source=hack/bench-lib.sh
source "$ROOT/hack/bench-lib.sh"
vm_mb() { # component field -> MB (10^6 bytes)
  local pid st
  read -r pid st <<<"$(phx_pid_of "$1")"
  awk -v f="$2:" '$1 == f { printf "%.1f", $2 * 1024 / 1e6 }' "/proc/$pid/status" 2>/dev/null || echo null
}
bench_cleanup_trap

sample_load
log "private cluster with $NODES nodes x $GPUS GPUs in $DIR (load average $(cut -d' ' -f1-3 /proc/loadavg))"
export PHALANX_OPERATOR_ARGS="$OP_ARGS"
# kwok renews every fake node's Lease each lease/4 s; at 40 s (a kubelet's) 5,000 nodes need
# 500 renewals a second, and on 2 cores kwok managed ~32: the nodes went NotReady. Above 1,000
# nodes the Leases last nodes x 60 ms (300 s at 5,000), with kube-controller-manager's grace
# period to match (hack/cluster/up.sh), unless PHALANX_NODE_LEASE_SECONDS says otherwise.
if [[ -z ${PHALANX_NODE_LEASE_SECONDS:-} ]] && ((NODES > 1000)); then
  export PHALANX_NODE_LEASE_SECONDS=$((NODES * 60 / 1000))
fi
bench_cluster_up "$NODES" --gpus "$GPUS"

# The two kube-scheduler configurations, same client qps: plain (default profile, no extender,
# every other setting kube-scheduler's default) and Phalanx's (deploy/scheduler/).
PLAIN_CONFIG="$DIR/plain-kube-scheduler-config.yaml" PHX_CONFIG="$DIR/phalanx-kube-scheduler-config.yaml"
cat >"$PLAIN_CONFIG" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: "@PHALANX_SCHEDULER_KUBECONFIG@"
  qps: $QPS
  burst: $((2 * QPS))
leaderElection:
  leaderElect: false
YAML
sed -i "s|^clientConnection:|clientConnection:\n  qps: $QPS\n  burst: $((2 * QPS))|" "$PHX_CONFIG"
grep -q "^  qps: $QPS" "$PHX_CONFIG" || { log "FAILED: could not set qps in $PHX_CONFIG"; exit 1; }

PLAIN_NS=bench-plain GANG_NS=bench-gang BURST_NS=bench-burst
queue_yaml() { # name quota-multiplier stopPolicy
  cat <<YAML
---
apiVersion: phalanx.dev/v1alpha1
kind: ClusterTrainingQueue
metadata: {name: $1}
spec:
  stopPolicy: $3
  namespaceSelector:
    matchLabels: {phalanx.dev/bench-queue: "$1"}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu, cpu, memory]
    flavors:
    - name: bench-p5
      resources:
      - {name: nvidia.com/gpu, nominalQuota: $((NODES * GPUS * 2))}
      - {name: cpu, nominalQuota: $((NODES * 384))}
      - {name: memory, nominalQuota: $((NODES * 4096))Gi}
---
apiVersion: v1
kind: Namespace
metadata:
  name: $4
  labels: {phalanx.dev/bench-queue: "$1"}
---
apiVersion: phalanx.dev/v1alpha1
kind: TrainingQueue
metadata: {name: bench, namespace: $4}
spec: {clusterQueue: $1}
YAML
}
kc apply -f - >/dev/null <<YAML
$(bench_flavor_yaml)
---
apiVersion: v1
kind: Namespace
metadata: {name: $PLAIN_NS}
$(queue_yaml bench 2 None "$GANG_NS")
$(queue_yaml bench-burst 2 Hold "$BURST_NS")
YAML
for ns in $PLAIN_NS $GANG_NS $BURST_NS; do
  phx_wait 60 "serviceaccount $ns/default" kube-controller-manager kc -n "$ns" get serviceaccount default
done
py() { BENCH_DEADLINE_S=$(remaining) python3 "$ROOT/hack/bench-e2e.py" "$@"; }

# ---------------------------------------------------------------- a. plain kube-scheduler
"$ROOT/hack/cluster/start-scheduler.sh" "$PLAIN_CONFIG" 2>/dev/null
sample_load
log "a. plain kube-scheduler: $PODS pods"
PLAIN_OUT=$(py plain "$PLAIN_NS" "$PODS") || exit 1
log "a. $(jq -c . <<<"$PLAIN_OUT")"
sample_load
WIPE_OUT=$(py wipe "$PLAIN_NS") || exit 1

# ---------------------------------------------------------------- b. Phalanx
"$ROOT/hack/cluster/start-scheduler.sh" "$PHX_CONFIG" 2>/dev/null
sample_load
log "b. Phalanx: $PODS pods as TrainingJobs"
GANG_OUT=$(py gangs "$GANG_NS" "$PODS" bench) || { log "FAILED: the Phalanx phase"; echo "$GANG_OUT"; exit 1; }
log "b. $(jq -c . <<<"$GANG_OUT")"
sample_load

# ---------------------------------------------------------------- c. admission burst
BURST_OUT='{}'
if ((BURST > 0)); then
  log "c. admission burst: $BURST jobs on held ClusterTrainingQueue bench-burst"
  BURST_OUT=$(py burst "$BURST_NS" "$BURST" bench bench-burst) || exit 1
  log "c. $(jq -c . <<<"$BURST_OUT")"
  sample_load
fi

# ---------------------------------------------------------------- d. footprint
SCHED_METRICS=$(curl -sf --max-time 10 "http://127.0.0.1:$PHALANX_SCHEDULER_HEALTH_PORT/metrics" || true)
OP_METRICS=$(curl -sf --max-time 10 "http://127.0.0.1:$PHALANX_OPERATOR_HEALTH_PORT/metrics" || true)
RUN_MEM=$(jq -cn --argjson a "$(vm_mb phalanx-operator VmHWM)" --argjson b "$(vm_mb phalanx-operator VmRSS)" \
  --argjson c "$(vm_mb phalanx-scheduler VmHWM)" --argjson d "$(vm_mb phalanx-scheduler VmRSS)" \
  '{operator_peak_rss_mb: $a, operator_rss_mb: $b, scheduler_peak_rss_mb: $c, scheduler_rss_mb: $d}')
CYCLE_LOG=$(sed -n 's/.*admission cycle: [0-9]* workloads, \([0-9]*\) admitted,.* \([0-9.]*\) ms$/\1 \2/p' \
  "$DIR/logs/phalanx-operator.log")
# Restart both daemons with every node, pod and job in place: sync time and memory after it.
restart_ready() { # component health-port -> seconds to /readyz
  local t0
  t0=$(now)
  "$ROOT/hack/cluster/restart.sh" "$1" >/dev/null 2>&1 || { echo null; return; }
  phx_wait 300 "$1 /readyz" "$1" curl -sf --max-time 2 "http://127.0.0.1:$2/readyz" >/dev/null 2>&1 || { echo null; return; }
  elapsed "$t0" "$(now)"
}
sched_lines=$(wc -l <"$DIR/logs/phalanx-scheduler.log")
sched_ready=$(restart_ready phalanx-scheduler "$PHALANX_SCHEDULER_HEALTH_PORT")
sched_sync=$(tail -n "+$((sched_lines + 1))" "$DIR/logs/phalanx-scheduler.log" | sed -n 's/.*informers synced in \([0-9.]*\) s.*/\1/p' | head -1)
op_ready=$(restart_ready phalanx-operator "$PHALANX_OPERATOR_HEALTH_PORT")
SYNC=$(jq -cn --argjson a "${sched_ready:-null}" --argjson b "${sched_sync:-null}" --argjson c "${op_ready:-null}" \
  --argjson d "$(vm_mb phalanx-scheduler VmHWM)" --argjson e "$(vm_mb phalanx-operator VmHWM)" \
  '{scheduler_restart_to_ready_s: $a, scheduler_informers_synced_s: $b, operator_restart_to_ready_s: $c,
    scheduler_peak_rss_after_sync_mb: $d, operator_peak_rss_after_sync_mb: $e}')
sample_load

python3 - "$NODES" "$PODS" "$GPUS" "$QPS" "$OP_ARGS" "$PLAIN_OUT" "$WIPE_OUT" "$GANG_OUT" "$BURST_OUT" \
  "$RUN_MEM" "$SYNC" "$SCHED_METRICS" "$OP_METRICS" "$CYCLE_LOG" "${LOADS[*]}" <<'PY'
import json, os, re, sys
(nodes, pods, gpus, qps, op_args, plain, wipe, gang, burst, mem, sync, smetrics, ometrics, cycles,
 loads) = sys.argv[1:16]
plain, gang, burst = json.loads(plain), json.loads(gang), json.loads(burst)

def histogram(text, name, labels=""):
    """(count, sum, p99 bucket bound) of a Prometheus histogram, by a label filter."""
    buckets, count, total = [], 0, 0.0
    for line in text.splitlines():
        m = re.match(r'^%s_(bucket|count|sum)\{?([^}]*)\}? (\S+)$' % name, line)
        if not m or labels not in m.group(2):
            continue
        kind, lab, value = m.groups()
        if kind == "bucket":
            le = re.search(r'le="([^"]+)"', lab).group(1)
            buckets.append((float("inf") if le == "+Inf" else float(le), float(value)))
        elif kind == "count":
            count = float(value)
        else:
            total = float(value)
    p99 = next((le for le, c in sorted(buckets) if count and c >= 0.99 * count), None)
    return count, total, p99

def latency(text, name, labels=""):
    n, s, p99 = histogram(text, name, labels)
    return {"count": int(n), "mean_ms": round(1e3 * s / n, 3) if n else None,
            "p99_le_ms": None if p99 in (None, float("inf")) else round(1e3 * p99, 3)}

extender = {v: latency(smetrics, "phalanx_extender_request_duration_seconds", 'verb="%s"' % v)
            for v in ("filter", "prioritize", "bind")}
cyc = latency(ometrics, "phalanx_admission_cycle_duration_seconds")
admitting = [(int(a), float(ms)) for a, ms in (l.split() for l in cycles.splitlines() if l.strip())]
loads = [float(x) for x in loads.split()]
d, p = plain.get("pods_per_s"), gang.get("pods_per_s")
out = {"nodes": int(nodes), "pods": int(pods),
       "default_pods_per_s": d, "phalanx_pods_per_s": p,
       "ratio": round(p / d, 3) if d and p else None,
       "partial_gangs": gang["partial_gangs"],
       "gang_bound_p50_s": gang["gang_bound_p50_s"], "gang_bound_p99_s": gang["gang_bound_p99_s"],
       "burst_jobs": burst.get("jobs", 0),
       "admitted_per_s": burst.get("admitted_per_s"), "admit_p99_s": burst.get("admit_p99_s"),
       "admit_p50_s": burst.get("admit_p50_s"),
       "gpus_per_node": int(gpus), "kube_scheduler_qps": int(qps), "operator_args": op_args,
       "node_lease_s": int(os.environ.get("PHALANX_NODE_LEASE_SECONDS", "40")),
       "jobs": gang["jobs"], "gang_bound_p50_s_by_size": gang["gang_bound_p50_s_by_size"],
       "plain": plain, "phalanx": {k: v for k, v in gang.items() if k != "gang_bound_p50_s_by_size"},
       "burst": burst, "plain_wipe_s": json.loads(wipe)["wipe_s"],
       "extender_latency": extender,
       "admission_cycles": dict(cyc, admitting=len(admitting),
                                admitting_max_ms=max((ms for _, ms in admitting), default=None),
                                admitted_by_largest=max((a for a, _ in admitting), default=None))}
out.update(json.loads(mem))
out.update(json.loads(sync))
out["load_avg_1m"] = round(sum(loads) / len(loads), 2)
out["load_avg_1m_range"] = [min(loads), max(loads)]
print(json.dumps(out))
PY
gang_ok=$(jq -r '.ok and .partial_gangs == 0' <<<"$GANG_OUT")
[[ $gang_ok == true ]] || { log "FAILED: not every gang was bound whole"; exit 1; }
ok=1

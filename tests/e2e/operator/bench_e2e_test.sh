#!/usr/bin/env bash
# hack/bench-e2e.sh at a small size (20 kwok nodes, 200 pods each way, its default burst of 60
# held jobs) on its own private cluster: the side-by-side benchmark of issue #12 must run both
# phases and the burst, bind every pod, leave no gang partly bound, admit every released job,
# and print one JSON object with the interface fields. No timing thresholds: figures are
# printed, not judged.
# Needs hack/cluster/build.sh binaries and PHALANX_BUILD_DIR (phalanx-scheduler,
# phalanx-operator).
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
NODES=20 PODS=200

run_bench bench-e2e.sh --nodes $NODES --pods $PODS --timeout 300

check=$(python3 - "$BENCH_JSON" "$NODES" "$PODS" <<'PY'
import json, sys
try:
    r = json.loads(sys.argv[1])
except ValueError as e:
    print("FAIL the last line is not JSON: %s" % e)
    sys.exit(0)
nodes, pods = int(sys.argv[2]), int(sys.argv[3])
def num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)
def check(ok, what):
    print("%s %s" % ("PASS" if ok else "FAIL", what))
keys = ["nodes", "pods", "default_pods_per_s", "phalanx_pods_per_s", "ratio", "partial_gangs",
        "gang_bound_p50_s", "gang_bound_p99_s"]
check(list(r)[:len(keys)] == keys, "the JSON starts with the issue's fields in order (%s)" % ",".join(list(r)[:8]))
check((r.get("nodes"), r.get("pods")) == (nodes, pods), "nodes/pods echo the request (%r, %r)" % (r.get("nodes"), r.get("pods")))
check(r.get("partial_gangs") == 0, "partial_gangs is 0 (%r)" % r.get("partial_gangs"))
for k in ("default_pods_per_s", "phalanx_pods_per_s", "ratio", "gang_bound_p50_s", "gang_bound_p99_s",
          "admitted_per_s", "admit_p99_s", "load_avg_1m"):
    check(num(r.get(k)) and r[k] > 0, "%s is a positive number (%r)" % (k, r.get(k)))
check(num(r.get("ratio")) and abs(r["ratio"] - r["phalanx_pods_per_s"] / r["default_pods_per_s"]) < 0.01,
      "ratio is phalanx_pods_per_s / default_pods_per_s")
check(r.get("gang_bound_p50_s", 1) <= r.get("gang_bound_p99_s", 0), "gang_bound p50 <= p99")
check(r.get("plain", {}).get("pods") == pods and r.get("phalanx", {}).get("pods") == pods,
      "both phases scheduled %d pods" % pods)
check(r.get("phalanx", {}).get("gangs_without_pods_bound") == 0, "every gang has its pods bound")
check(r.get("burst_jobs") == min(1000, (nodes * 16 - pods) // 2), "burst_jobs is the default (%r)" % r.get("burst_jobs"))
check(r.get("node_lease_s") == 40, "up to 1,000 nodes the fake nodes keep a kubelet's 40-s Lease (%r)" % r.get("node_lease_s"))
check({"1", "2", "4", "8", "16", "32", "64"} <= set(r.get("gang_bound_p50_s_by_size", {})),
      "gangs of every size 1..64 were timed (%s)" % ",".join(r.get("gang_bound_p50_s_by_size", {})))
ext = r.get("extender_latency", {})
check(ext.get("filter", {}).get("count", 0) >= pods and ext.get("bind", {}).get("count", 0) >= pods,
      "phalanx-scheduler counted a filter and a bind per Phalanx pod (%r)" % {k: v.get("count") for k, v in ext.items()})
for k in ("operator_peak_rss_mb", "scheduler_peak_rss_mb", "scheduler_restart_to_ready_s",
          "scheduler_informers_synced_s", "operator_restart_to_ready_s",
          "scheduler_peak_rss_after_sync_mb", "operator_peak_rss_after_sync_mb"):
    check(num(r.get(k)) and r[k] > 0, "%s is a positive number (%r)" % (k, r.get(k)))
check(r.get("admission_cycles", {}).get("admitting", 0) >= 1, "admission cycles were logged")
# kube-apiserver's own write counts per phase: at least one pod create and one bind per pod.
for phase in ("plain", "phalanx"):
    w = r.get(phase, {}).get("apiserver_writes", {}).get("by_request", {})
    check(w.get("pods POST", 0) >= pods and w.get("pods/binding POST", 0) >= pods,
          "%s: the API server counted >= %d pod creates and binds (%r)" % (phase, pods, w))
# The operator creates each pod once: no create repeated because the pod informer had not shown
# it yet (operator/server/create_expectations.h); nothing in this run deletes or restarts a pod.
w = r.get("phalanx", {}).get("apiserver_writes", {}).get("by_request", {})
check(w.get("pods POST") == pods,
      "phalanx: exactly %d pod creates, one per pod (%r)" % (pods, w.get("pods POST")))
PY
)
while read -r verdict what; do
  [[ -n $verdict ]] || continue
  if [[ $verdict == PASS ]]; then pass "$what"; else fail "$what"; fi
done <<<"$check"
finish

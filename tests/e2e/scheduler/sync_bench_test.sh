#!/usr/bin/env bash
# hack/bench-scheduler-sync.sh at a small size (200 nodes, 2,000 bound pods) on its own private
# control plane: the benchmark a user runs for issue #10's sync and memory figures must work,
# print one well-formed JSON line, and phalanx-scheduler's snapshot must hold exactly the nodes
# and pods the loader created. No timing thresholds: the figures are printed, not judged.
# Needs hack/cluster/build.sh binaries and PHALANX_BUILD_DIR (phalanx-scheduler,
# phalanx_cluster_loader).
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
NODES=200 PODS=2000

run_bench bench-scheduler-sync.sh --nodes $NODES --pods $PODS --timeout 600 --apiserver-rss

check=$(python3 - "$BENCH_JSON" "$NODES" "$PODS" <<'PY'
import json, sys
try:
    r = json.loads(sys.argv[1])
except ValueError as e:
    print("FAIL the last line is not JSON: %s" % e)
    sys.exit(0)
nodes, pods = int(sys.argv[2]), int(sys.argv[3])
for key in ("nodes", "pods", "load_s", "sync_to_ready_s", "rss_mb", "peak_rss_mb",
            "snapshot_nodes", "snapshot_pods", "scheduler_cpu_s", "apiserver_rss_mb",
            "etcd_rss_mb"):
    v = r.get(key)
    # CPU time is in clock ticks (10 ms): a fast small run may read 0.
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and (
        v >= 0 if key == "scheduler_cpu_s" else v > 0)
    print("%s %s is %r" % ("PASS" if ok else "FAIL", key, v))
print("%s nodes/pods echo the request (%r, %r)" % (
    "PASS" if (r.get("nodes"), r.get("pods")) == (nodes, pods) else "FAIL", r.get("nodes"), r.get("pods")))
print("%s snapshot_nodes == %d (got %r)" % ("PASS" if r.get("snapshot_nodes") == nodes else "FAIL", nodes, r.get("snapshot_nodes")))
print("%s snapshot_pods == %d (got %r)" % ("PASS" if r.get("snapshot_pods") == pods else "FAIL", pods, r.get("snapshot_pods")))
rss, peak = r.get("rss_mb") or 0, r.get("peak_rss_mb") or 0
print("%s peak_rss_mb (%r) >= rss_mb (%r)" % ("PASS" if peak >= rss > 0 else "FAIL", peak, rss))
PY
)
while read -r verdict what; do
  [[ -n $verdict ]] || continue
  if [[ $verdict == PASS ]]; then pass "$what"; else fail "$what"; fi
done <<<"$check"
finish

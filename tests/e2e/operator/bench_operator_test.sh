#!/usr/bin/env bash
# hack/bench-operator.sh at a small size (32 kwok nodes, 2 gangs of 32 pods, 50 queued jobs) on
# its own private cluster: the benchmark a user runs for issue #11's figures must work, print one
# well-formed JSON object, time every gang it was asked for and see every queued job admitted
# and its pod bound. No timing thresholds: the figures are printed, not judged.
# Needs hack/cluster/build.sh binaries and PHALANX_BUILD_DIR (phalanx-scheduler,
# phalanx-operator).
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
NODES=32 JOBS=2 QUEUED=50

run_bench bench-operator.sh --nodes $NODES --jobs $JOBS --queued $QUEUED --timeout 600 --json

check=$(python3 - "$BENCH_JSON" "$NODES" "$JOBS" "$QUEUED" <<'PY'
import json, sys
try:
    r = json.loads(sys.argv[1])
except ValueError as e:
    print("FAIL the last line is not JSON: %s" % e)
    sys.exit(0)
nodes, jobs, queued = (int(a) for a in sys.argv[2:5])
def num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)
def check(ok, what):
    print("%s %s" % ("PASS" if ok else "FAIL", what))
check((r.get("nodes"), r.get("jobs"), r.get("queued_jobs")) == (nodes, jobs, queued),
      "nodes/jobs/queued_jobs echo the request (%r, %r, %r)" % (r.get("nodes"), r.get("jobs"), r.get("queued_jobs")))
check(r.get("gang_pods") == min(nodes, 64), "gang_pods is min(64, nodes) (%r)" % r.get("gang_pods"))
a = r.get("apply_to_bound_s") or {}
check(a.get("samples") == jobs, "apply_to_bound_s has %d samples (%r)" % (jobs, a.get("samples")))
check(all(num(a.get(k)) and a[k] > 0 for k in ("p50", "p99", "max", "min")) and
      a.get("min", 0) <= a.get("p50", 0) <= a.get("p99", 0) <= a.get("max", 0),
      "apply_to_bound_s min <= p50 <= p99 <= max, all > 0 (%r)" % a)
phases = r.get("phases_s") or {}
check(sorted(phases) == ["admit_s", "apply_s", "bind_s", "pods_created_s"] and
      all((p or {}).get("samples") == jobs for p in phases.values()),
      "phases_s splits every sample into apply, admit, pods_created, bind")
check(r.get("admitted") == queued, "every queued job has status.admission (%r of %d)" % (r.get("admitted"), queued))
check(r.get("queued_pods_bound") == queued, "every queued job's pod is bound (%r of %d)" % (r.get("queued_pods_bound"), queued))
for key in ("admissions_per_s", "admission_s", "queued_create_s", "operator_start_to_ready_s",
            "queued_pods_bound_s", "load_avg_1m"):
    check(num(r.get(key)) and r[key] > 0, "%s is %r" % (key, r.get(key)))
check(isinstance(r.get("admission_cycles"), int) and r["admission_cycles"] >= 1,
      "admission_cycles is %r" % r.get("admission_cycles"))
cpu = r.get("cpu_s") or {}
check(sorted(cpu) == ["admission", "gang", "idle"] and
      all(num(c.get("wall")) and c["wall"] > 0 and "kube-apiserver" in c and "machine" in c for c in cpu.values()),
      "cpu_s has the idle, gang and admission phases, each with its wall time, kube-apiserver and machine")
api = (r.get("apiserver_requests") or {}).get("admission") or {}
check(api.get("APPLY trainingjobs/status", 0) >= queued,
      "kube-apiserver counted at least one status write per admission (%r)" % api.get("APPLY trainingjobs/status"))
cycles = r.get("admitting_cycles")
check(isinstance(cycles, list) and sum(c.get("admitted", 0) for c in cycles) == queued,
      "the logged admission cycles admitted %r in all" % (sum(c.get("admitted", 0) for c in cycles or [])))
PY
)
while read -r verdict what; do
  [[ -n $verdict ]] || continue
  if [[ $verdict == PASS ]]; then pass "$what"; else fail "$what"; fi
done <<<"$check"
finish

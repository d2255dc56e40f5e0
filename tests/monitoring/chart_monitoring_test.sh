#!/usr/bin/env bash
# The chart's monitoring templates, rendered with `helm template` (ctest monitoring_chart):
#   - by default neither a ServiceMonitor, a PrometheusRule nor the dashboard ConfigMap;
#   - enabled but without monitoring.coreos.com/v1 served: still no ServiceMonitor or
#     PrometheusRule (a cluster without the Prometheus Operator installs cleanly);
#   - enabled with it: a ServiceMonitor whose selector picks exactly the Services
#     <fullname>-operator and <fullname>-scheduler and scrapes their port named "metrics"; a
#     PrometheusRule whose spec is files/monitoring/alerts.yaml unchanged (runbookBaseURL
#     prefixes the runbook links); a ConfigMap carrying the sidecar label and the dashboard JSON.
# helm comes from hack/cluster/build.sh (~/.cache/phalanx).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CHART="${PHALANX_CHART_DIR:-$ROOT/charts/phalanx}"
source "$ROOT/hack/cluster/lib.sh"
HELM=$(phx_bin helm)
PASSED=0 FAILED=0
pass() { PASSED=$((PASSED + 1)); echo "PASS: $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL: $*"; }
finish() { echo "chart_monitoring_test: $PASSED passed, $FAILED failed"; [[ $FAILED == 0 ]]; exit $?; }
[[ -x $HELM ]] || { fail "helm is not built at $HELM (run hack/cluster/build.sh)"; finish; }
[[ -f $CHART/Chart.yaml ]] || { fail "no chart at $CHART"; finish; }
python3 -c 'import yaml' 2>/dev/null || { fail "python3-yaml is not installed (hack/setup.sh installs it)"; finish; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
ON=(--set metrics.serviceMonitor.enabled=true --set metrics.prometheusRule.enabled=true --set grafanaDashboard.enabled=true)
render() { # out-file helm-args...
  local out=$1; shift
  "$HELM" template phx "$CHART" --namespace phalanx-system "$@" >"$out" 2>"$out.err" || { fail "helm template $*: $(cat "$out.err")"; return 1; }
}
kinds() { python3 -c 'import sys, yaml; print(" ".join(sorted(d["kind"] for d in yaml.safe_load_all(open(sys.argv[1])) if d)))' "$1"; }
has() { [[ " $(kinds "$1") " == *" $2 "* ]]; }

out=$("$HELM" lint --strict "$CHART" "${ON[@]}" 2>&1) && pass "helm lint --strict with the monitoring values on" ||
  fail "helm lint --strict with the monitoring values on: $out"
render "$TMP/default.yaml" && {
  ! has "$TMP/default.yaml" ServiceMonitor && ! has "$TMP/default.yaml" PrometheusRule && [[ $(grep -c 'phalanx.json' "$TMP/default.yaml") == 0 ]] &&
    pass "defaults: no ServiceMonitor, PrometheusRule or dashboard" || fail "defaults render monitoring objects: $(kinds "$TMP/default.yaml")"
}
render "$TMP/no-crds.yaml" "${ON[@]}" && {
  ! has "$TMP/no-crds.yaml" ServiceMonitor && ! has "$TMP/no-crds.yaml" PrometheusRule &&
    pass "enabled without monitoring.coreos.com/v1: no ServiceMonitor or PrometheusRule" ||
    fail "rendered without the CRDs: $(kinds "$TMP/no-crds.yaml")"
}
render "$TMP/on.yaml" "${ON[@]}" --api-versions monitoring.coreos.com/v1 \
  --set metrics.prometheusRule.runbookBaseURL=https://example.com/phalanx/blob/main/ || finish
out=$(python3 - "$TMP/on.yaml" "$CHART/files/monitoring/alerts.yaml" "$CHART/files/monitoring/dashboard.json" <<'PY'
import json, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
alerts = yaml.safe_load(open(sys.argv[2]))
dashboard = json.load(open(sys.argv[3]))
def one(kind, pred=lambda d: True):
    found = [d for d in docs if d["kind"] == kind and pred(d)]
    if len(found) != 1:
        sys.exit(f"{len(found)} {kind} objects, want 1")
    return found[0]
ok = []
sm = one("ServiceMonitor")
sel = sm["spec"]["selector"]
def selected(labels):
    if any(labels.get(k) != v for k, v in sel.get("matchLabels", {}).items()):
        return False
    for e in sel.get("matchExpressions", []):
        v = labels.get(e["key"])
        if e["operator"] == "In" and v not in e["values"]: return False
        if e["operator"] == "Exists" and v is None: return False
    return True
services = [d for d in docs if d["kind"] == "Service"]
picked = sorted(d["metadata"]["name"] for d in services if selected(d["metadata"].get("labels", {})))
if not picked or sorted(n.rsplit("-", 1)[-1] for n in picked) != ["operator", "scheduler"]:
    sys.exit(f"ServiceMonitor selects Services {picked}, want <fullname>-operator and <fullname>-scheduler")
for d in services:
    if d["metadata"]["name"] in picked and "metrics" not in [p.get("name") for p in d["spec"]["ports"]]:
        sys.exit(f"Service {d['metadata']['name']} has no port named metrics")
if [e.get("port") for e in sm["spec"]["endpoints"]] != ["metrics"]:
    sys.exit(f"ServiceMonitor endpoints {sm['spec']['endpoints']}")
ok.append(f"ServiceMonitor selects {', '.join(picked)} on port metrics")
pr = one("PrometheusRule")
want = json.loads(json.dumps(alerts).replace('"docs/operations.md#', '"https://example.com/phalanx/blob/main/docs/operations.md#'))
if pr["spec"] != want:
    sys.exit("PrometheusRule spec differs from files/monitoring/alerts.yaml")
ok.append(f"PrometheusRule spec is alerts.yaml ({sum(len(g['rules']) for g in want['groups'])} rules, runbook links prefixed)")
cm = one("ConfigMap", lambda d: "phalanx.json" in d.get("data", {}))
if cm["metadata"]["labels"].get("grafana_dashboard") != "1":
    sys.exit(f"dashboard ConfigMap labels {cm['metadata']['labels']} lack grafana_dashboard: \"1\"")
if json.loads(cm["data"]["phalanx.json"]) != dashboard:
    sys.exit("the ConfigMap's phalanx.json differs from files/monitoring/dashboard.json")
ok.append(f"dashboard ConfigMap {cm['metadata']['name']} with grafana_dashboard: \"1\"")
print("; ".join(ok))
PY
) && pass "$out" || fail "$out"
finish

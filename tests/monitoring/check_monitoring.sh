#!/usr/bin/env bash
# Static checks of Phalanx's monitoring files, no cluster needed (ctest monitoring_alerts):
#   - charts/phalanx/files/monitoring/alerts.yaml passes `promtool check rules`, and the unit
#     tests in tests/monitoring/alerts_test.yaml pass `promtool test rules`;
#   - every alert has a severity, a summary, a description and a runbook_url pointing at a
#     heading of docs/operations.md, and the unit tests make every alert both fire and stay quiet;
#   - docs/metrics.md lists exactly the metric names operator/server and scheduler/server register;
#   - every PromQL expression of dashboard.json parses (as a recording rule, with Grafana's
#     variables replaced), and every phalanx_* metric the alerts and the dashboard use is listed
#     in docs/metrics.md.
# promtool comes from Debian's `prometheus` package (hack/setup.sh installs it).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
MON="$ROOT/charts/phalanx/files/monitoring"
PASSED=0 FAILED=0
pass() { PASSED=$((PASSED + 1)); echo "PASS: $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL: $*"; }
finish() { echo "check_monitoring: $PASSED passed, $FAILED failed"; [[ $FAILED == 0 ]]; exit $?; }
for tool in promtool jq python3; do
  command -v $tool >/dev/null || { fail "$tool is not installed (hack/setup.sh installs it: prometheus, jq, python3-yaml)"; finish; }
done
python3 -c 'import yaml' 2>/dev/null || { fail "python3-yaml is not installed (hack/setup.sh installs it)"; finish; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

out=$(promtool check rules "$MON/alerts.yaml" 2>&1) && pass "promtool check rules alerts.yaml: $(echo "$out" | grep -o '[0-9]* rules found')" ||
  fail "promtool check rules alerts.yaml: $out"
out=$(cd "$ROOT/tests/monitoring" && promtool test rules alerts_test.yaml 2>&1) && pass "promtool test rules alerts_test.yaml" ||
  fail "promtool test rules alerts_test.yaml: $out"

# Alerts: labels, annotations, runbook anchors, and a firing and a quiet unit test for each.
out=$(python3 - "$MON/alerts.yaml" "$ROOT/tests/monitoring/alerts_test.yaml" "$ROOT/docs/operations.md" <<'PY'
import re, sys, yaml
rules = yaml.safe_load(open(sys.argv[1]))
tests = yaml.safe_load(open(sys.argv[2]))
try:
    ops = open(sys.argv[3]).read()
except OSError:
    ops = ""
def anchor(heading):  # GitHub's: lower case, punctuation dropped, spaces to dashes
    return re.sub(r"[^a-z0-9 _-]", "", heading.strip().lower()).replace(" ", "-")
anchors = {anchor(h) for h in re.findall(r"^#+\s+(.*)$", ops, re.M)}
fired, quiet = set(), set()
for t in tests["tests"]:
    for a in t.get("alert_rule_test", []):
        (fired if a.get("exp_alerts") else quiet).add(a["alertname"])
bad = []
alerts = [r for g in rules["groups"] for r in g["rules"] if "alert" in r]
for r in alerts:
    name = r["alert"]
    if r.get("labels", {}).get("severity") not in ("critical", "warning", "info"):
        bad.append(f"{name}: severity label missing or not critical/warning/info")
    ann = r.get("annotations", {})
    for key in ("summary", "description", "runbook_url"):
        if not ann.get(key):
            bad.append(f"{name}: no {key} annotation")
    url = ann.get("runbook_url", "")
    m = re.fullmatch(r"docs/operations\.md#(.+)", url)
    if not m:
        bad.append(f"{name}: runbook_url {url!r} is not docs/operations.md#anchor")
    elif m.group(1) not in anchors:
        bad.append(f"{name}: docs/operations.md has no heading for #{m.group(1)}")
    if name not in fired:
        bad.append(f"{name}: no unit test in which it fires")
    if name not in quiet:
        bad.append(f"{name}: no unit test in which it stays quiet")
print("\n".join(bad) if bad else f"{len(alerts)} alerts")
sys.exit(1 if bad else 0)
PY
) && pass "every alert has severity, summary, description, a runbook heading in docs/operations.md, a firing and a quiet test ($out)" ||
  fail "alerts: $out"

# Dashboard: valid JSON, every target's PromQL parses once Grafana's variables are replaced.
if jq -e '.panels | length > 0' "$MON/dashboard.json" >/dev/null 2>&1; then
  pass "dashboard.json is JSON with $(jq '.panels | length' "$MON/dashboard.json") panels"
else
  fail "dashboard.json is not valid dashboard JSON"
fi
"$ROOT/tests/monitoring/dashboard_queries.sh" "$MON/dashboard.json" >"$TMP/queries.txt" || fail "cannot extract the dashboard's queries"
n=$(wc -l <"$TMP/queries.txt")
{ echo "groups:"; echo "- name: dashboard"; echo "  rules:"
  i=0; while IFS= read -r q; do i=$((i + 1)); printf '  - record: dashboard:query_%d\n    expr: %s\n' $i "$(jq -Rn --arg q "$q" '$q')"; done <"$TMP/queries.txt"
} >"$TMP/dashboard_rules.yaml"
out=$(promtool check rules "$TMP/dashboard_rules.yaml" 2>&1) && pass "all $n dashboard queries are valid PromQL" ||
  fail "dashboard queries: $out"

# docs/metrics.md lists exactly the metrics the binaries register (their names are string
# literals in operator/server, scheduler/server, scheduler/grpc and common/http); the e2e test
# checks labels and types.
documented=$(grep -o '^| `phalanx_[a-z_]*`' "$ROOT/docs/metrics.md" | tr -d '|` ' | sort -u)
registered=$(grep -rhoE '"phalanx_[a-z_]+"' "$ROOT/operator/server" "$ROOT/scheduler/server" "$ROOT/scheduler/grpc" "$ROOT/common/http" --include=*.cc --include=*.h | tr -d '"' | sort -u)
diff_out=$(diff <(echo "$registered") <(echo "$documented"))
[[ -z $diff_out ]] && pass "docs/metrics.md lists the $(echo "$registered" | wc -l) metrics the binaries register" ||
  fail "docs/metrics.md vs the source (< registered only, > documented only): $(echo $diff_out)"
used=$(cat "$MON/alerts.yaml" "$TMP/queries.txt" | grep -o 'phalanx_[a-z_]*' | sed -E 's/_(bucket|sum|count)$//' | sort -u)
missing=$(comm -23 <(echo "$used") <(echo "$documented"))
[[ -z $missing ]] && pass "the $(echo "$used" | wc -l) metrics the alerts and dashboard use are in docs/metrics.md" ||
  fail "used but not in docs/metrics.md: $missing"
finish

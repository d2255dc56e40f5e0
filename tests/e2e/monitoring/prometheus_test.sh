#!/usr/bin/env bash
# A real Prometheus (Debian's binary, on 127.0.0.1 with its own storage) scrapes phalanx-operator
# and phalanx-scheduler on a private control plane while TrainingJobs run through every path
# that creates a series (issue #14 "Observability"). 12 kwok p5.48xlarge nodes in three layer-3
# blocks of 4; every job is pinned to one block (topology.required = layer-3):
#   moved   (3 pods)  one node tainted NoSchedule    -> its rank moves to the block's spare
#   done    (2 pods)  every pod Succeeded             -> Succeeded
#   flaky   (2 pods)  rank 0 Failed                   -> gang restart; then suspended (eviction)
#   stretch (elastic 2..4, a whole block) a node's HyperPod health label goes
#                     UnschedulablePendingReboot      -> shrinks to 3
#   huge    (12 pods, team-vision) fits no block      -> stays pending (CannotBePlaced)
#   low, urgent (4 pods each, priority 1 and 100) -> urgent preempts low in the free block
#   scratch (a ClusterTrainingQueue) created, then deleted -> its gauge series leave the scrape
# Then:
#   - every metric in docs/metrics.md's table is in Prometheus, from the binary the table names,
#     with exactly the documented label names and type; every phalanx_* metric Prometheus has is
#     in the table (docs and code agree both ways);
#   - `promtool check metrics` passes on each binary's raw /metrics;
#   - every PromQL expression of the Grafana dashboard returns data through the HTTP API
#     ($__rate_interval and friends replaced by a window covering the test, $cluster_queue by
#     .*, $level by the layer-3 label);
#   - the alert rules load without errors and evaluate; no critical alert is active, and
#     PhalanxNodesLeftSchedulable is pending for the node that left Schedulable.
# Prometheus is stopped by PID at the end, then the cluster. Needs hack/cluster/build.sh
# binaries, $PHALANX_BUILD_DIR, and prometheus + promtool (Debian's prometheus package,
# installed by hack/setup.sh).
source "$(dirname "${BASH_SOURCE[0]}")/../operator/lib.sh"
for tool in prometheus promtool jq curl python3; do
  command -v $tool >/dev/null || die "$tool is not installed (hack/setup.sh installs Debian's prometheus package)"
done
MON="$REPO_ROOT/charts/phalanx/files/monitoring"
T0=$SECONDS

# low and urgent are ordered by spec.priority, which phalanx-operator honours only when allowed.
export PHALANX_OPERATOR_ARGS="--allow-job-priority true"
start_cluster --nodes 0 --ttl 900
export PHALANX_KUBECONFIG
[[ -n ${PHALANX_OPERATOR_HEALTH_PORT:-} && -n ${PHALANX_SCHEDULER_HEALTH_PORT:-} ]] ||
  die "hack/phalanx-up.sh wrote no health ports to $PHALANX_CLUSTER_DIR/env"
L3=topology.k8s.aws/network-node-layer-3
HEALTH=sagemaker.amazonaws.com/node-health-status

# --- Prometheus ------------------------------------------------------------------------------
PROM_DIR="$PHALANX_CLUSTER_DIR/prometheus"
mkdir -p "$PROM_DIR/data"
PROM_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$PROM_DIR/prometheus.yml" <<YAML
global:
  scrape_interval: 2s
  evaluation_interval: 2s
rule_files:
- $MON/alerts.yaml
scrape_configs:
- job_name: phalanx-operator
  static_configs: [{targets: ["127.0.0.1:$PHALANX_OPERATOR_HEALTH_PORT"]}]
- job_name: phalanx-scheduler
  static_configs: [{targets: ["127.0.0.1:$PHALANX_SCHEDULER_HEALTH_PORT"]}]
YAML
prometheus --config.file="$PROM_DIR/prometheus.yml" --storage.tsdb.path="$PROM_DIR/data" \
  --web.listen-address="127.0.0.1:$PROM_PORT" >"$PROM_DIR/prometheus.log" 2>&1 &
PROM_PID=$!
stop_all() {
  if kill -0 "$PROM_PID" 2>/dev/null; then kill "$PROM_PID"; wait "$PROM_PID" 2>/dev/null; fi
  "$REPO_ROOT/hack/phalanx-down.sh" >/dev/null 2>&1 || true
}
trap stop_all EXIT
PROM="http://127.0.0.1:$PROM_PORT"
eventually 60 curl -sf "$PROM/-/ready" || { tail -20 "$PROM_DIR/prometheus.log"; die "Prometheus did not become ready"; }
pass "Prometheus $(prometheus --version 2>&1 | head -1 | awk '{print $3}') on 127.0.0.1:$PROM_PORT (pid $PROM_PID)"
# GET /api/v1/<path> with urlencoded parameters; prints .data.
api() { # path [name=value]...
  local path=$1 args=() a; shift
  for a in "$@"; do args+=(--data-urlencode "$a"); done
  curl -sfG --max-time 20 "$PROM/api/v1/$path" "${args[@]}" | jq -c 'if .status == "success" then .data else error(.error) end'
}
targets_up() { [[ $(api targets | jq '[.activeTargets[] | select(.health=="up")] | length') == 2 ]]; }
eventually 60 targets_up && pass "both binaries are scraped (targets up)" ||
  fail "targets: $(api targets | jq -c '[.activeTargets[] | {job: .labels.job, health, lastError}]')"

# --- the workload ----------------------------------------------------------------------------
apply_example_queues
add_fake_nodes --count 12 --nodes-per-block 4 --blocks-per-spine 8
pass "12 fake nodes in 3 layer-3 blocks of 4"

nodes_of() { jq_job "$1" "$2" '.status.placement.nodes // [] | join(" ")'; }
admitted() { jq_job "$1" "$2" '.status.admission.replicas // 0'; }
admitted_is() { [[ $(admitted "$1" "$2") == "$3" ]]; }
job team-llm moved 3 "{required: $L3}"
eventually 120 all_running team-llm moved 3 || die "moved is not Running: $(cond team-llm moved Queued)"
job team-llm done 2 "{required: $L3}"
job team-llm flaky 2 "{required: $L3}"
job team-research stretch 4 "{required: $L3}" "  elastic: {minReplicas: 2, maxReplicas: 4, step: 1}"
job team-vision huge 12 "{required: $L3}"
for j in done:2 flaky:2; do
  eventually 120 all_running team-llm "${j%:*}" "${j#*:}" || die "${j%:*} is not Running: $(cond team-llm "${j%:*}" Queued)"
done
eventually 120 all_running team-research stretch 4 || die "stretch is not Running at 4: $(cond team-research stretch Queued)"
eventually 60 has_reason team-vision huge CannotBePlaced && pass "huge waits: $(cond team-vision huge Queued)" ||
  fail "huge: $(cond team-vision huge Queued)"
pass "moved, done, flaky and stretch Running"

for r in 0 1; do set_pod_phase team-llm done-$r Succeeded; done
eventually 60 phase_is team-llm done Succeeded && pass "done Succeeded" || fail "done is $(phase team-llm done)"
set_pod_phase team-llm flaky-0 Failed
restarted() { [[ $(jq_job team-llm flaky '.status.restarts // 0') -ge 1 ]]; }
eventually 60 restarted && pass "flaky restarted after a failed pod" || fail "flaky restarts: $(jq_job team-llm flaky '.status.restarts')"
read -ra moved_nodes <<<"$(nodes_of team-llm moved)"
kc taint node "${moved_nodes[1]}" example.com/maintenance=now:NoSchedule >/dev/null || fail "cannot taint ${moved_nodes[1]}"
replaced() { [[ $(nodes_of team-llm moved) != *"${moved_nodes[1]}"* && $(admitted team-llm moved) == 3 ]]; }
eventually 60 replaced && pass "moved: rank 1 left tainted ${moved_nodes[1]} for $(nodes_of team-llm moved | awk '{print $2}')" ||
  fail "moved still on ${moved_nodes[1]}: $(cond team-llm moved NodesReplaced)"
read -ra stretch_nodes <<<"$(nodes_of team-research stretch)"
kc label node "${stretch_nodes[1]}" "$HEALTH=UnschedulablePendingReboot" --overwrite >/dev/null || fail "cannot label ${stretch_nodes[1]}"
eventually 60 admitted_is team-research stretch 3 && pass "stretch shrunk to 3 when ${stretch_nodes[1]} left Schedulable" ||
  fail "stretch admitted $(admitted team-research stretch): $(cond team-research stretch Shrunk)"
kc -n team-llm patch trainingjob flaky --type=merge -p '{"spec":{"suspend":true}}' >/dev/null || fail "cannot suspend flaky"
suspended() { [[ $(jq_job team-llm flaky '.status.admission // empty') == "" ]]; }
eventually 60 suspended && pass "flaky suspended: admission released" || fail "flaky still admitted"
# A preemption: the third block is free; urgent (priority 100) needs a whole block and evicts
# low (priority 1) of the same ClusterTrainingQueue (llm: withinClusterQueue LowerPriority).
job team-llm low 4 "{required: $L3}" "  priority: 1"
eventually 120 all_running team-llm low 4 || die "low is not Running: $(cond team-llm low Queued)"
job team-llm urgent 4 "{required: $L3}" "  priority: 100"
eventually 120 all_running team-llm urgent 4 &&
  [[ $(cond team-llm low Evicted) == "True Preempted: "* ]] &&
  pass "urgent runs; low was preempted: $(cond team-llm low Evicted)" ||
  fail "urgent: $(cond team-llm urgent Queued); low: $(cond team-llm low Evicted)"

# --- a deleted queue's gauges leave the scrape (an alert on their last values would never end)
op_scrape() { curl -sf --max-time 10 "http://127.0.0.1:$PHALANX_OPERATOR_HEALTH_PORT/metrics"; }
scratch_series() { op_scrape | grep -E '^phalanx_(pending_workloads|admitted_active_workloads|cluster_queue_resource_usage|cluster_queue_nominal_quota|cluster_queue_status)\{cluster_queue="scratch"' | wc -l; }
kc apply -f - >/dev/null <<'YAML' || fail "cannot create the scratch queue"
apiVersion: phalanx.dev/v1alpha1
kind: ClusterTrainingQueue
metadata: {name: scratch}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: p5
      resources: [{name: nvidia.com/gpu, nominalQuota: 8}]
YAML
has_scratch() { [[ $(scratch_series) -ge 8 ]]; }  # pending x2, admitted, usage, quota, status x3
eventually 30 has_scratch && pass "queue scratch has its $(scratch_series) gauge series" || fail "scratch series: $(scratch_series)"
kc delete clustertrainingqueue scratch >/dev/null || fail "cannot delete the scratch queue"
no_scratch() { [[ $(scratch_series) == 0 ]]; }
eventually 30 no_scratch && pass "deleted queue scratch: its gauge series left the scrape" ||
  fail "deleted queue scratch still has $(scratch_series) gauge series"

# --- every documented metric, from the documented binary, with the documented labels --------
# docs/metrics.md's reference table: | `name` | binary | type | unit | labels | meaning |
python3 - "$REPO_ROOT/docs/metrics.md" >"$PROM_DIR/documented.tsv" <<'PY' || die "cannot read docs/metrics.md's table"
import re, sys
rows = 0
for line in open(sys.argv[1]):
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) < 6 or not re.fullmatch(r"`phalanx_[a-z_]+`", cells[0]):
        continue
    labels = sorted(re.findall(r"`([a-z_]+)`", cells[4]))
    # The cluster here serves the Placement API in plain text: TLS-only series are checked by
    # tests/e2e/chart/chart_install_test.sh instead, and only need to be listed here.
    present = "no" if "Only with TLS" in cells[5] else "yes"
    print("\t".join([cells[0].strip("`"), cells[1], cells[2], ",".join(labels), present]))
    rows += 1
sys.exit(0 if rows else 1)
PY
ndoc=$(grep -c $'\tyes$' "$PROM_DIR/documented.tsv")
# Wait for a few scrapes after the last event so every counter's first sample is in.
sleep 6
# Label names Prometheus holds for a metric from one job (histograms: their _bucket series,
# without le), sorted and comma-joined; "" if it has no series.
labels_in_prom() { # metric job type
  local name=$1
  [[ $3 == histogram ]] && name=${1}_bucket
  api series "match[]=${name}{job=\"$2\"}" "start=$(($(date +%s) - 900))" |
    jq -r '[.[] | keys[] | select(. != "__name__" and . != "job" and . != "instance" and . != "le")] | unique | join(",")'
}
missing=0 wrong=0
while IFS=$'\t' read -r metric binary type labels present; do
  [[ $present == yes ]] || continue
  got=$(labels_in_prom "$metric" "phalanx-$binary" "$type")
  if [[ -z $(api series "match[]={__name__=~\"${metric}(_bucket)?\",job=\"phalanx-$binary\"}" "start=$(($(date +%s) - 900))" | jq -r '.[0].__name__ // empty') ]]; then
    fail "$metric: no series from phalanx-$binary in Prometheus"; missing=$((missing + 1)); continue
  fi
  [[ $got == "$labels" ]] || { fail "$metric: labels {$got} in Prometheus, docs/metrics.md says {$labels}"; wrong=$((wrong + 1)); }
  ptype=$(api metadata "metric=$metric" | jq -r --arg m "$metric" '.[$m][0].type // "none"')
  [[ $ptype == "$type" ]] || { fail "$metric: type $ptype in Prometheus, docs/metrics.md says $type"; wrong=$((wrong + 1)); }
done <"$PROM_DIR/documented.tsv"
[[ $missing == 0 && $wrong == 0 ]] && pass "all $ndoc metrics of docs/metrics.md are in Prometheus from the binary named, with the documented labels and type"
# And the other way: nothing exposed that the table lacks.
exposed=$(api label/__name__/values | jq -r '.[] | select(startswith("phalanx_"))' | sed -E 's/_(bucket|sum|count)$//' | sort -u)
undocumented=$(comm -23 <(echo "$exposed") <(cut -f1 "$PROM_DIR/documented.tsv" | sort -u))
[[ -z $undocumented ]] && pass "every phalanx_* metric Prometheus scraped ($(echo "$exposed" | wc -l)) is in docs/metrics.md" ||
  fail "scraped but not in docs/metrics.md: $(echo $undocumented)"

# --- promtool check metrics on each raw scrape ----------------------------------------------
for b in operator:$PHALANX_OPERATOR_HEALTH_PORT scheduler:$PHALANX_SCHEDULER_HEALTH_PORT; do
  curl -sf --max-time 10 "http://127.0.0.1:${b#*:}/metrics" >"$PROM_DIR/${b%:*}.prom" || { fail "cannot scrape phalanx-${b%:*}"; continue; }
  out=$(promtool check metrics <"$PROM_DIR/${b%:*}.prom" 2>&1) &&
    pass "promtool check metrics: phalanx-${b%:*} ($(grep -c '^# TYPE' "$PROM_DIR/${b%:*}.prom") families)" ||
    fail "promtool check metrics phalanx-${b%:*}: $out"
done

# --- every dashboard query returns data ------------------------------------------------------
# The window covers everything since Prometheus started, so rates see this test's events.
window="$(((SECONDS - T0) / 60 + 2))m"
PHALANX_RATE_WINDOW=$window "$REPO_ROOT/tests/monitoring/dashboard_queries.sh" "$MON/dashboard.json" "$L3" >"$PROM_DIR/queries.txt" ||
  die "cannot extract the dashboard's queries"
nq=0 empty=0
while IFS= read -r q; do
  nq=$((nq + 1))
  res=$(api query "query=$q") || { fail "dashboard query failed: $q"; empty=$((empty + 1)); continue; }
  n=$(jq 'length' <<<"$(jq -c '.result' <<<"$res")")
  if [[ $n == 0 ]]; then
    fail "dashboard query returns no data: $q"; empty=$((empty + 1))
  fi
done <"$PROM_DIR/queries.txt"
[[ $empty == 0 ]] && pass "all $nq dashboard queries return data (rate window $window)"

# --- the alert rules load and evaluate ------------------------------------------------------
rules=$(api rules type=alert)
nrules=$(jq '[.groups[].rules[]] | length' <<<"$rules")
want=$(grep -c '^  - alert:' "$MON/alerts.yaml")
unhealthy=$(jq -r '[.groups[].rules[] | select(.health != "ok") | "\(.name): \(.health) \(.lastError)"] | join("; ")' <<<"$rules")
[[ $nrules == "$want" && -z $unhealthy ]] && pass "the $want alert rules loaded into Prometheus and evaluate without errors" ||
  fail "alert rules: $nrules of $want loaded; unhealthy: $unhealthy; log: $(grep -i 'rule' "$PROM_DIR/prometheus.log" | tail -3)"
critical=$(api alerts | jq -r '[.alerts[] | select(.labels.severity=="critical") | "\(.labels.alertname) \(.state)"] | join(", ")')
[[ -z $critical ]] && pass "no critical alert active (a leader, a ready scheduler)" || fail "critical alerts active: $critical"
left_pending() {
  api alerts | jq -e '[.alerts[] | select(.labels.alertname=="PhalanxNodesLeftSchedulable" and .labels.reason=="Unhealthy")] | length == 1' >/dev/null
}
eventually 30 left_pending && pass "PhalanxNodesLeftSchedulable is $(api alerts | jq -r '.alerts[] | select(.labels.alertname=="PhalanxNodesLeftSchedulable") | .state') for reason Unhealthy" ||
  fail "PhalanxNodesLeftSchedulable not active: $(api alerts | jq -c '[.alerts[] | .labels.alertname]')"

out=$(check_invariants) && pass "invariants hold" || fail "invariants broken: $out"
echo "$TEST_NAME: $((SECONDS - T0))s"
finish

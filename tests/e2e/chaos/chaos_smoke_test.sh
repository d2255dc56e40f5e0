#!/usr/bin/env bash
# hack/chaos.sh at its smallest (2 rounds, 8 jobs, 8 nodes) on a private control plane: every
# fault kind must really happen (both binaries SIGKILLed, etcd compacted, kube-apiserver
# restarted, informers relisting, watch streams cut mid-event by PHALANX_FAULTS, the extender
# stalled past kube-scheduler's timeout and back) with no invariant broken and every job
# finished. Then the checker must catch violations planted on the same cluster: a pod bound by
# hand onto a full node (node_overcommitted), and a reservation made behind the operator's back
# for a job that does not exist (reservation_orphan).
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
BUILD="${PHALANX_BUILD_DIR:-$REPO_ROOT/build}"
PHALANX="$BUILD/cli/phalanx"
[[ -x $PHALANX ]] || die "$PHALANX is not built"
export PHALANX_BUILD_DIR="$BUILD"
export PHALANX_CLUSTER_DIR="/tmp/phalanx-e2e-chaos-$$"
cleanup() { "$REPO_ROOT/hack/phalanx-down.sh" >/dev/null 2>&1 || true; rm -f "$PHALANX_CLUSTER_DIR.log"; }
trap cleanup EXIT

# Seed 7 is arbitrary; the run does not depend on it for the faults (targets alternate).
json=$("$REPO_ROOT/hack/chaos.sh" --rounds 2 --jobs 8 --nodes 8 --job-seconds 5:10 --max-pause 1 \
  --faults watch_cut_after=20 --settle 30 --seed 7 --keep 2>"$PHALANX_CLUSTER_DIR.log")
rc=$?
echo "$json"
if [[ $rc != 0 ]]; then
  grep -v '^\[\(up\|phalanx-up\|fake-nodes\|scheduler\)\]' "$PHALANX_CLUSTER_DIR.log" | tail -25
  fail "hack/chaos.sh exited $rc"
fi
jq -e . >/dev/null <<<"$json" || { tail -30 "$PHALANX_CLUSTER_DIR.log"; die "hack/chaos.sh printed no JSON"; }
field() { jq -r ".$1" <<<"$json"; }
[[ $(field invariant_violations) == 0 ]] && pass "no invariant violated" || fail "invariant_violations=$(field invariant_violations)"
[[ $(field jobs) == 8 && $(field jobs_completed) == 8 ]] && pass "8 jobs created, all Succeeded" ||
  fail "jobs=$(field jobs) jobs_completed=$(field jobs_completed) phases=$(field phases)"
[[ $(field kills_operator) -ge 1 && $(field kills_scheduler) -ge 1 ]] &&
  pass "kill -9 of phalanx-operator and of phalanx-scheduler" ||
  fail "kills: operator $(field kills_operator), scheduler $(field kills_scheduler)"
[[ $(field etcd_compactions) -ge 1 && $(field apiserver_restarts) -ge 1 ]] &&
  pass "etcd compacted and kube-apiserver restarted" ||
  fail "compactions $(field etcd_compactions), apiserver restarts $(field apiserver_restarts)"
[[ $(field relists) -ge 1 ]] && pass "informers relisted ($(field relists) times, from their logs)" ||
  fail "no relist in the binaries' logs"
[[ $(field watch_cuts) -ge 1 ]] && pass "watch streams cut mid-event ($(field watch_cuts))" ||
  fail "no watch cut in the binaries' logs"
# kube-scheduler logs a timeout only when a pod reached the extender during the stall (the CI run at
# 1aa1932 saw 0 in 1 stall, the 50-round run 2 in 25), so the count is reported, not required.
[[ $(field slow_extender_periods) -ge 1 && $(field extender_not_back) == 0 ]] &&
  pass "extender stalled past kube-scheduler's timeout and back ($(field extender_timeouts) timeouts logged)" ||
  fail "stalls $(field slow_extender_periods), timeouts $(field extender_timeouts), not back $(field extender_not_back)"

# --- planted violations on the same cluster ---------------------------------------------------
export KUBECONFIG="$PHALANX_CLUSTER_DIR/kubeconfig" PHALANX_KUBECONFIG="$PHALANX_CLUSTER_DIR/kubeconfig"
source "$PHALANX_CLUSTER_DIR/env"
"$PHALANX" check --server "$PHALANX_SCHEDULER_GRPC" >/dev/null && pass "phalanx check: clean after the run" ||
  fail "phalanx check is not clean after the run"
# A pod bound by hand (spec.nodeName, no scheduler) asking for all 8 GPUs of a node already
# holding one: the API server accepts it, kwok runs it.
node=$(kc get nodes -o jsonpath='{.items[0].metadata.name}')
kc -n team-llm apply -f - >/dev/null <<YAML || die "cannot create the planted pods"
apiVersion: v1
kind: Pod
metadata: {name: planted-1}
spec:
  nodeName: $node
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers: [{name: c, image: registry.example/x:1, resources: {limits: {nvidia.com/gpu: 1}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: planted-8}
spec:
  nodeName: $node
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers: [{name: c, image: registry.example/x:1, resources: {limits: {nvidia.com/gpu: 8}}}]
YAML
"$PHALANX" placement reserve --server "$PHALANX_SCHEDULER_GRPC" --job team-llm/no-such-job --count 1 >/dev/null ||
  fail "cannot reserve a gang for team-llm/no-such-job"
out=$("$PHALANX" check --server "$PHALANX_SCHEDULER_GRPC" --json)
rc=$?
echo "$out"
[[ $rc == 3 ]] && pass "phalanx check exits 3 on violations" || fail "phalanx check exited $rc"
jq -e --arg node "$node" '.violations | any(.invariant == "node_overcommitted" and .object == $node and (.message | contains("9 GPUs")))' <<<"$out" >/dev/null &&
  pass "node_overcommitted on $node (9 GPUs bound, 8 allocatable)" || fail "the over-committed node was not reported"
jq -e '.violations | any(.invariant == "reservation_orphan" and .object == "team-llm/no-such-job")' <<<"$out" >/dev/null &&
  pass "reservation_orphan for team-llm/no-such-job" || fail "the orphan reservation was not reported"
[[ $(jq '.invariant_violations' <<<"$out") == 2 ]] && pass "exactly the two planted violations" ||
  fail "expected 2 violations, got $(jq -c '.violations' <<<"$out")"
finish

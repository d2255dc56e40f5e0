#!/usr/bin/env bash
# phalanx-operator on a real control plane (hack/phalanx-up.sh: kube-apiserver, etcd, kwok fake
# p5.48xlarge nodes, a real kube-scheduler calling phalanx-scheduler's extender, and
# phalanx-operator from build/), on a private cluster. What issue #11 promises a user:
#   1. the example 64-GPU TrainingJob lands all 8 pods in one layer-3 block in rank order,
#      Running, with the torchrun environment right on every pod and its headless Service, whose
#      EndpointSlices (written by the operator) list every rank's hostname and IP;
#   2. two gangs that cannot both fit: one runs whole, the other waits whole with a reason, and
#      starts when the first finishes;
#   3. a failed pod restarts the gang; a pod that fails on a NotReady node restarts it without
#      counting against maxRestarts (status.nodeFaultRestarts, reason NodeFailure); after
#      maxRestarts counted restarts the job fails and frees its nodes; spec.failurePolicy.rules
#      decide by exit code (Ignore: restarted uncounted; FailJob: Failed at once), not by the
#      exit code of a native sidecar killed at the pod's end, and in a cascade by the rank that
#      failed first (an OOM kill), not by its peers' later exit 1;
#   4. bad input (missing TrainingQueue, a job larger than the cluster, an unknown topology level)
#      gets a Queued condition and an event naming the problem, and admission goes on;
#   5. suspend releases and deletes the pods, resume admits again; delete releases through the
#      finalizer;
#   6. kill -9 of the operator: the successor takes the Lease, nothing is lost or admitted twice
#      (checked against the cluster: every admitted job has exactly its pods on its nodes, no
#      node holds more GPUs than it has);
#   7. a namespace deleted with a running job: no pod re-created, no RBAC error, quota freed.
# Needs hack/cluster/build.sh binaries and build/ (phalanx-scheduler, phalanx-operator).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

start_cluster --nodes 16 --ttl 1500

apply_example_queues

# --- 1. the example 64-GPU job ------------------------------------------------------------
kc apply -f "$REPO_ROOT/deploy/examples/10-trainingjob-pretrain-64gpu.yaml" >/dev/null || die "cannot apply example 10"
J=llama-pretrain-64 NS=team-llm
eventually 90 phase_is $NS $J Running && pass "$J is Running" ||
  fail "$J not Running after 90s: phase '$(phase $NS $J)', $(cond $NS $J Queued)"
pods=$(pods_of $NS $J)
placement=$(jq_job $NS $J '.status.placement.nodes | join(" ")')
read -ra P <<<"$placement"
[[ ${#P[@]} == 8 ]] && pass "status.placement lists 8 nodes in $(jq_job $NS $J '.status.placement.level + "=" + .status.placement.domain')" ||
  fail "status.placement.nodes: '$placement'"
wrong=0 blocks=()
for r in 0 1 2 3 4 5 6 7; do
  p=$(jq -c ".items[] | select(.metadata.name==\"$J-$r\")" <<<"$pods")
  node=$(jq -r .spec.nodeName <<<"$p")
  [[ $node == "${P[$r]}" ]] || { wrong=$((wrong + 1)); echo "  rank $r on $node, placement ${P[$r]}"; }
  blocks+=("$(kc get node "$node" -o jsonpath="{.metadata.labels.topology\.k8s\.aws/network-node-layer-3}")")
  env=$(jq -r '.spec.containers[0].env[] | "\(.name)=\(.value)"' <<<"$p")
  for want in "RANK=$r" "NODE_RANK=$r" "PET_NODE_RANK=$r" "WORLD_SIZE=64" "PET_NNODES=8" "PET_NPROC_PER_NODE=8" \
              "MASTER_ADDR=$J-0.$J.$NS.svc" "MASTER_PORT=29500"; do
    grep -qx "$want" <<<"$env" || { wrong=$((wrong + 1)); echo "  rank $r lacks $want"; }
  done
done
[[ $wrong == 0 ]] && pass "rank r on placement.nodes[r] for all 8 ranks, torchrun env right on every pod" ||
  fail "$wrong rank/env mismatches"
[[ $(printf '%s\n' "${blocks[@]}" | sort -u | wc -l) == 1 ]] && pass "all 8 pods in one layer-3 block (${blocks[0]})" ||
  fail "pods span layer-3 blocks: ${blocks[*]}"
[[ $(kc -n $NS get service $J -o jsonpath='{.spec.clusterIP}') == None ]] && pass "headless Service $J exists" ||
  fail "no headless Service $J"
# The Service has no selector; the operator publishes the ranks' addresses in its EndpointSlices
# (what DNS reads for <job>-<rank>.<job>.<ns>.svc): hostname <job>-<rank> -> that pod's IP.
slice_addresses() {  # ns job -> sorted "hostname ip" of the Service's EndpointSlices
  kc -n "$1" get endpointslices -l "kubernetes.io/service-name=$2" -o json |
    jq -r '.items[].endpoints[]? | "\(.hostname) \(.addresses[0])"' | sort
}
pod_addresses() {  # ns job -> sorted "pod ip" of its pods that have an IP and still run
  pods_of "$1" "$2" | jq -r '.items[] | select(.status.podIP and .metadata.deletionTimestamp == null and
    (.status.phase == "Running" or .status.phase == "Pending")) | "\(.metadata.name) \(.status.podIP)"' | sort
}
slices_match() {  # ns job count: the slices list exactly the count running pods, by hostname and IP
  local want got
  want=$(pod_addresses "$1" "$2") got=$(slice_addresses "$1" "$2")
  [[ $(grep -c . <<<"$want") == "$3" && "$got" == "$want" ]]
}
eventually 30 slices_match $NS $J 8 && pass "the EndpointSlices of $J list its 8 ranks: $(slice_addresses $NS $J | head -2 | tr '\n' ';')..." ||
  fail "EndpointSlices of $J: '$(slice_addresses $NS $J | tr '\n' ';')' against pods '$(pod_addresses $NS $J | tr '\n' ';')'"
[[ $(kc -n $NS get service $J -o jsonpath='{.spec.selector}') == "" ]] &&
  [[ $(kc -n $NS get endpointslices -l "kubernetes.io/service-name=$J" -o jsonpath='{.items[*].metadata.labels.endpointslice\.kubernetes\.io/managed-by}') == phalanx-operator.phalanx.dev ]] &&
  pass "the Service has no selector and its only EndpointSlice is the operator's (kube-controller-manager writes none)" ||
  fail "Service selector '$(kc -n $NS get service $J -o jsonpath='{.spec.selector}')', slices managed by '$(kc -n $NS get endpointslices -l "kubernetes.io/service-name=$J" -o jsonpath='{.items[*].metadata.labels}')'"
[[ $(cond $NS $J Admitted) == "True Admitted:"* ]] && pass "Admitted condition: $(cond $NS $J Admitted)" ||
  fail "Admitted condition: '$(cond $NS $J Admitted)'"
kc -n $NS get events --field-selector involvedObject.name=$J -o jsonpath='{.items[*].reason}' | grep -qw Admitted &&
  pass "an Admitted event on the job" || fail "no Admitted event on $J"

# --- 2. two gangs that cannot both fit (8 of 16 nodes are free) ---------------------------
job team-vision big-a 8
job team-research big-b 8
sleep 2
first=""
eventually 90 bash -c "[[ \$(kubectl --kubeconfig=$PHALANX_KUBECONFIG get trainingjobs -A -o json | jq '[.items[] | select(.status.phase==\"Running\")] | length') == 2 ]]" ||
  fail "one of big-a / big-b should be Running beside $J"
if phase_is team-vision big-a Running; then first=(team-vision big-a); second=(team-research big-b)
else first=(team-research big-b); second=(team-vision big-a); fi
all_running "${first[@]}" 8 && pass "${first[1]} runs whole (8 pods Running)" || fail "${first[1]} is not whole"
npods_is "${second[@]}" 0 && pass "${second[1]} waits whole: 0 pods; $(cond "${second[@]}" Queued)" ||
  fail "${second[1]} has $(npods "${second[@]}") pods while waiting"
[[ $(cond "${second[@]}" Queued) == "True "* ]] || fail "${second[1]} has no Queued=True condition"
for r in 0 1 2 3 4 5 6 7; do set_pod_phase "${first[0]}" "${first[1]}-$r" Succeeded; done
eventually 60 phase_is "${first[@]}" Succeeded && pass "${first[1]} Succeeded when all ranks succeeded" ||
  fail "${first[1]} phase '$(phase "${first[@]}")' after its pods succeeded"
# Finished, it keeps its admission as a record, as a Kueue Workload does (Kueue turned those
# conditions False and reverted it, kubernetes-sigs/kueue#8599: the admission time was lost):
# Admitted stays True with its time; the quota is released (the next gang starts, below), and
# an edit is refused with a message that says a finished job does not run again.
admitted_since() { jq_job "${first[@]}" '.status.conditions[]? | select(.type=="Admitted") | .status + " " + .lastTransitionTime'; }
[[ $(admitted_since) == "True "* && $(jq_job "${first[@]}" '.status.admission.replicas') == 8 ]] &&
  pass "${first[1]} finished keeps its record: Admitted $(admitted_since), status.admission.replicas 8" ||
  fail "${first[1]} after it succeeded: Admitted '$(admitted_since)', admission $(jq_job "${first[@]}" '.status.admission')"
edit_refusal=$(kc -n "${first[0]}" patch trainingjob "${first[1]}" --type=merge -p '{"spec":{"replicas":4}}' 2>&1)
[[ $edit_refusal == *"a finished job"*"does not run again: create a new TrainingJob"* ]] &&
  pass "an edit of the finished job says it does not run again" || fail "edit of a finished job: $edit_refusal"
eventually 90 all_running "${second[@]}" 8 && pass "${second[1]} started once ${first[1]} finished" ||
  fail "${second[1]} did not start after ${first[1]} finished: $(cond "${second[@]}" Queued)"

# --- 3. pod failure: gang restart, then Failed after maxRestarts --------------------------
kc -n "${second[0]}" patch trainingjob "${second[1]}" --type=merge -p '{"spec":{"failurePolicy":{"maxRestarts":1}}}' >/dev/null ||
  fail "cannot set maxRestarts"
set_pod_phase "${second[0]}" "${second[1]}-3" Failed
eventually 60 bash -c "[[ \$(kubectl --kubeconfig=$PHALANX_KUBECONFIG -n ${second[0]} get trainingjob ${second[1]} -o jsonpath='{.status.restarts}') == 1 ]]" &&
  pass "a failed pod restarted the gang (status.restarts 1)" || fail "no restart after a failed pod"
restarted() { [[ $(pods_of "${second[@]}" | jq '[.items[] | select(.metadata.labels["phalanx.dev/restart"]=="1" and .status.phase=="Running")] | length') == 8 ]]; }
eventually 90 restarted && pass "the new gang (restart label 1) is Running on 8 pods" || fail "the restarted gang is not Running"
eventually 30 slices_match "${second[@]}" 8 && pass "the EndpointSlices follow the restarted gang's new pods and IPs" ||
  fail "EndpointSlices after the restart: '$(slice_addresses "${second[@]}" | tr '\n' ';')' against '$(pod_addresses "${second[@]}" | tr '\n' ';')'"
# A rank fails while its node is NotReady (kwok stops managing it, as if its kubelet died): the
# node's doing, not the job's; maxRestarts (1, used up) is not charged.
status_of() { jq_job "${second[@]}" ".status.$1 // 0"; }
lost=$(kc -n "${second[0]}" get pod "${second[1]}-2" -o jsonpath='{.spec.nodeName}')
kwok_owner=$(kc get node "$lost" -o jsonpath='{.metadata.annotations.kwok\.x-k8s\.io/node}')
kc annotate node "$lost" kwok.x-k8s.io/node- >/dev/null &&
  kc patch node "$lost" --subresource=status --type=strategic \
    -p '{"status":{"conditions":[{"type":"Ready","status":"False","reason":"KubeletDown","message":"e2e: kubelet stopped"}]}}' >/dev/null ||
  fail "cannot make $lost NotReady"
set_pod_phase "${second[0]}" "${second[1]}-2" Failed
eventually 60 bash -c "[[ \$(kubectl --kubeconfig=$PHALANX_KUBECONFIG -n ${second[0]} get trainingjob ${second[1]} -o jsonpath='{.status.restarts}/{.status.nodeFaultRestarts}') == 2/1 ]]" &&
  [[ $(cond "${second[@]}" Restarting) == "True NodeFailure:"* ]] &&
  pass "a pod failed on NotReady $lost: restarted, not counted ($(cond "${second[@]}" Restarting))" ||
  fail "after a failure on a NotReady node: restarts $(status_of restarts), nodeFaultRestarts $(status_of nodeFaultRestarts), phase $(phase "${second[@]}"), $(cond "${second[@]}" Restarting)"
[[ $(phase "${second[@]}") != Failed ]] && pass "maxRestarts 1 was not charged: the job is $(phase "${second[@]}")" ||
  fail "the job Failed after a node failure: $(cond "${second[@]}" Failed)"
kc annotate node "$lost" "kwok.x-k8s.io/node=${kwok_owner:-fake}" >/dev/null || fail "cannot hand $lost back to kwok"
restarted2() { [[ $(pods_of "${second[@]}" | jq '[.items[] | select(.metadata.labels["phalanx.dev/restart"]=="2" and .status.phase=="Running")] | length') == 8 ]]; }
eventually 120 restarted2 && pass "the gang runs again (restart label 2, 8 pods)" ||
  fail "the gang is not Running after the node-fault restart: $(phase "${second[@]}")"
set_pod_phase "${second[0]}" "${second[1]}-5" Failed
eventually 60 phase_is "${second[@]}" Failed && pass "after maxRestarts the job Failed: $(cond "${second[@]}" Failed)" ||
  fail "phase '$(phase "${second[@]}")' after a failure past maxRestarts"
[[ $(cond "${second[@]}" Failed) == *"after 1 restarts (maxRestarts 1) and 1 after node failures, not counted"* ]] &&
  pass "the Failed condition counts both kinds of restart" || fail "Failed condition: $(cond "${second[@]}" Failed)"
eventually 60 bash -c "[[ \$(kubectl --kubeconfig=$PHALANX_KUBECONFIG -n ${second[0]} get pods -l phalanx.dev/job=${second[1]} -o json | jq '[.items[] | select(.status.phase==\"Running\" or .status.phase==\"Pending\")] | length') == 0 ]]" &&
  pass "no pod of the failed job still runs" || fail "pods of the failed job still run"
eventually 30 bash -c "[[ -z \$(kubectl --kubeconfig=$PHALANX_KUBECONFIG -n ${second[0]} get endpointslices -l kubernetes.io/service-name=${second[1]} -o name) ]]" &&
  pass "the failed job's EndpointSlices are deleted" || fail "EndpointSlices of the failed job remain: $(slice_addresses "${second[@]}" | tr '\n' ';')"

# --- 3b. spec.failurePolicy.rules: the exit code decides ----------------------------------
# The kubelet's report of a failed container, as kwok's nodes have no kubelet: the trainer ended
# at `finished` (default now); with a sidecar code, the native sidecar log-shipper, which the
# kubelet then stops, ended with that code.
fail_with_exit() { # ns pod exit-code reason [finished] [sidecar-exit-code]
  local at=${5:-$(date -u +%Y-%m-%dT%H:%M:%SZ)} sidecar=""
  [[ -n ${6:-} ]] && sidecar=",\"initContainerStatuses\":[{\"name\":\"log-shipper\",\"image\":\"registry.example/fluent-bit:3\",\"imageID\":\"\",\"ready\":false,\"restartCount\":0,\"state\":{\"terminated\":{\"exitCode\":$6,\"reason\":\"Error\",\"finishedAt\":\"$at\"}}}]"
  kc -n "$1" patch pod "$2" --subresource=status --type=merge -p "{\"status\":{\"phase\":\"Failed\",\"containerStatuses\":[{\"name\":\"trainer\",\"image\":\"registry.example/trainer:1\",\"imageID\":\"\",\"ready\":false,\"restartCount\":0,\"state\":{\"terminated\":{\"exitCode\":$3,\"reason\":\"$4\",\"finishedAt\":\"$at\"}}}]$sidecar}}" >/dev/null
}
job $NS rules 2 "" "  failurePolicy:
    maxRestarts: 0
    rules:
    - {action: FailJob, onExitCodes: {containerName: trainer, operator: In, values: [42]}}
    - {action: Ignore, onExitCodes: {operator: In, values: [137]}}"
eventually 90 all_running $NS rules 2 || fail "rules is not Running: $(cond $NS rules Queued)"
fail_with_exit $NS rules-1 137 OOMKilled || fail "cannot fail rules-1"
ignored() { [[ $(jq_job $NS rules '"\(.status.restarts // 0)/\(.status.ignoredRestarts // 0)"') == 1/1 ]]; }
# The gang may be Running again by the time this looks: the Restarting event keeps the message.
restart_msg() { kc -n $NS get events --field-selector involvedObject.name=rules,reason=Restarting -o jsonpath='{.items[0].message}'; }
eventually 60 ignored &&
  [[ $(restart_msg) == "pod rules-1 (rank 1) failed: container trainer exited with code 137 (OOMKilled), which spec.failurePolicy.rules[1] (Ignore) matches; restarting the gang (restart 1, not counted against maxRestarts: 0 of at most 0 counted)" ]] &&
  pass "exit code 137 matched the Ignore rule: restarted with maxRestarts 0 ($(restart_msg))" ||
  fail "after exit code 137: status $(jq_job $NS rules '.status | {phase, restarts, ignoredRestarts}' | tr -d '\n '), event '$(restart_msg)'"
rules_restarted() { [[ $(pods_of $NS rules | jq '[.items[] | select(.metadata.labels["phalanx.dev/restart"]=="1" and .status.phase=="Running")] | length') == 2 ]]; }
eventually 90 rules_restarted || fail "rules' restarted gang is not Running: $(phase $NS rules)"
fail_with_exit $NS rules-0 42 Error || fail "cannot fail rules-0"
eventually 60 phase_is $NS rules Failed &&
  [[ $(cond $NS rules Failed) == "True PodFailurePolicy: pod rules-0 (rank 0) failed: container trainer exited with code 42 (Error), which spec.failurePolicy.rules[0] (FailJob) matches" ]] &&
  has_event $NS rules PodFailurePolicy &&
  pass "exit code 42 matched the FailJob rule: Failed at once, with an event ($(cond $NS rules Failed))" ||
  fail "after exit code 42: phase $(phase $NS rules), $(cond $NS rules Failed)"
restarts_metric=$(curl -sf "http://127.0.0.1:$PHALANX_OPERATOR_HEALTH_PORT/metrics" | grep -F 'phalanx_job_restarts_total{reason="PodFailureIgnored"}')
[[ $restarts_metric == *" 1" ]] && pass "/metrics: $restarts_metric" || fail "/metrics: '$restarts_metric'"
restarting_event() { kc -n $NS get events --field-selector "involvedObject.name=$1,reason=Restarting" -o jsonpath='{.items[0].message}'; }
restarts_are() { [[ $(jq_job $NS "$1" '"\(.status.restarts // 0)/\(.status.ignoredRestarts // 0)"') == "$2" ]]; }
# A native sidecar (an init container with restartPolicy Always) SIGKILLed at the pod's end
# exits 137: a rule that does not name it does not look at it, and the trainer's exit 1 counts.
kc -n $NS apply -f - >/dev/null <<'YAML' || fail "cannot create sidecar"
apiVersion: phalanx.dev/v1alpha1
kind: TrainingJob
metadata: {name: sidecar}
spec:
  queueName: training
  replicas: 2
  topology: {required: topology.k8s.aws/network-node-layer-2}
  failurePolicy:
    maxRestarts: 3
    rules:
    - {action: Ignore, onExitCodes: {operator: In, values: [137]}}
  template:
    spec:
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      initContainers:
      - {name: log-shipper, image: "registry.example/fluent-bit:3", restartPolicy: Always}
      containers:
      - name: trainer
        image: registry.example/trainer:1
        resources: {limits: {nvidia.com/gpu: 8}}
YAML
eventually 90 all_running $NS sidecar 2 || fail "sidecar is not Running: $(phase $NS sidecar) $(cond $NS sidecar Queued)"
fail_with_exit $NS sidecar-1 1 Error "" 137 || fail "cannot fail sidecar-1"
eventually 60 restarts_are sidecar 1/0 &&
  [[ $(restarting_event sidecar) == "pod sidecar-1 (rank 1) failed: container trainer exited with code 1 (Error); restarting the gang (restart 1 of at most 3)" ]] &&
  pass "the sidecar's 137 did not match the unnamed Ignore rule: a counted restart ($(restarting_event sidecar))" ||
  fail "after exit 1 with a sidecar's 137: status $(jq_job $NS sidecar '.status | {phase, restarts, ignoredRestarts}' | tr -d '\n '), event '$(restarting_event sidecar)'"
kc -n $NS delete trainingjob sidecar --wait=false >/dev/null
# A torchrun cascade: rank 1 OOM-killed, rank 0 exiting 1 on an NCCL error 20 s later. The
# FailJob rule (Kubeflow's restartPolicy ExitCode) matches rank 0's exit 1, but the OOM kill
# ended first and decides: a counted restart that names it, not a Failed job. Both reports land
# while phalanx-operator is down, so that its successor judges them together (paused with
# SIGSTOP instead, it reconciled between the two pod events once resumed, and judged rank 1
# alone).
job $NS cascade 2 "" "  failurePolicy:
    maxRestarts: 3
    rules:
    - {action: FailJob, onExitCodes: {containerName: trainer, operator: NotIn, values: [137, 143]}}"
eventually 90 all_running $NS cascade 2 || fail "cascade is not Running: $(phase $NS cascade) $(cond $NS cascade Queued)"
read -r op_pid op_st <<<"$(awk '$1=="phalanx-operator" {print $2, $3}' "$PHALANX_CLUSTER_DIR/pids")"
# Gone: no such process, another one under its PID (start time), or a zombie.
operator_gone() {
  local stat; stat=$(cat "/proc/$op_pid/stat" 2>/dev/null) || return 0
  read -ra f <<<"${stat##*) }"
  [[ ${f[19]} != "$op_st" || ${f[0]} == Z ]]
}
"$REPO_ROOT/hack/cluster/restart.sh" phalanx-operator --down-for 8 >"$PHALANX_CLUSTER_DIR/restart-cascade.log" 2>&1 &
restarter=$!
eventually 30 operator_gone || fail "phalanx-operator (pid $op_pid) did not stop"
t0=$(date -u +%s)
fail_with_exit $NS cascade-1 137 OOMKilled "$(date -u -d "@$t0" +%Y-%m-%dT%H:%M:%SZ)" || fail "cannot fail cascade-1"
fail_with_exit $NS cascade-0 1 Error "$(date -u -d "@$((t0 + 20))" +%Y-%m-%dT%H:%M:%SZ)" || fail "cannot fail cascade-0"
wait "$restarter" || fail "phalanx-operator did not come back: $(tail -3 "$PHALANX_CLUSTER_DIR/restart-cascade.log")"
eventually 90 restarts_are cascade 1/0 &&
  [[ $(restarting_event cascade) == "pod cascade-1 (rank 1) failed: container trainer exited with code 137 (OOMKilled); 1 other rank failed too; restarting the gang (restart 1 of at most 3)" ]] &&
  [[ $(phase $NS cascade) != Failed ]] &&
  pass "the OOM kill that ended first decided the cascade ($(restarting_event cascade))" ||
  fail "after the cascade: phase $(phase $NS cascade), restarts $(jq_job $NS cascade '.status.restarts // 0'), event '$(restarting_event cascade)', $(cond $NS cascade Failed)"
kc -n $NS delete trainingjob cascade --wait=false >/dev/null

# --- 4. bad input ------------------------------------------------------------------------
kc -n team-llm apply -f - >/dev/null <<YAML
apiVersion: phalanx.dev/v1alpha1
kind: TrainingJob
metadata: {name: no-queue}
spec:
  queueName: does-not-exist
  replicas: 1
  template:
    spec:
      containers: [{name: t, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]
YAML
job team-research too-big 40
job team-research bad-level 1 "{required: example.com/no-such-level}"
eventually 60 has_reason team-llm no-queue TrainingQueueNotFound && pass "missing TrainingQueue: $(cond team-llm no-queue Queued)" ||
  fail "missing TrainingQueue: '$(cond team-llm no-queue Queued)'"
eventually 60 bash -c "kubectl --kubeconfig=$PHALANX_KUBECONFIG -n team-research get trainingjob too-big -o json | jq -e '.status.conditions[]? | select(.type==\"Queued\" and .status==\"True\")' >/dev/null" &&
  pass "a job larger than the cluster waits: $(cond team-research too-big Queued)" || fail "too-big has no Queued condition"
eventually 60 bash -c "kubectl --kubeconfig=$PHALANX_KUBECONFIG -n team-research get trainingjob bad-level -o jsonpath='{.status.conditions[?(@.type==\"Queued\")].message}' | grep -qF 'spec.topology.required (\"example.com/no-such-level\") is not a level of the scheduler'" &&
  has_reason team-research bad-level TopologyLevelNotFound &&
  pass "unknown topology level named, by the job's field: $(cond team-research bad-level Queued)" || fail "bad-level: '$(cond team-research bad-level Queued)'"
kc -n team-llm get events --field-selector involvedObject.name=no-queue -o jsonpath='{.items[*].reason}' | grep -qw TrainingQueueNotFound &&
  pass "an event names the missing TrainingQueue" || fail "no TrainingQueueNotFound event"
job team-vision after-bad 2
eventually 90 phase_is team-vision after-bad Running && pass "a good job is still admitted beside the bad ones" ||
  fail "after-bad not Running: $(cond team-vision after-bad Queued)"
# A pod template the API server would refuse is found before admission: when the job is first
# seen, a dry run of rank 0's pod (create, dryRun=All, fieldValidation=Strict; the CRD keeps the
# template's unknown fields). The job waits, Queued=True Invalid naming the field as the job's,
# takes no quota and gets no pods (before 2026-12-01 it was admitted and failed at its first
# pod create, audit session 36, F3), and is admitted once fixed.
job team-vision typo 1 "" "" "      restartPolicyy: Never"
job team-vision bad-dns 1 "" "" "      dnsPolicy: Sometimes"
dry_run_refused() { # name what
  [[ $(cond team-vision "$1" Queued) == "True Invalid: the API server refuses its pods (a dry run of rank 0's pod): $2; it waits for the TrainingJob to be fixed" ]]
}
eventually 60 dry_run_refused typo 'spec.template: unknown field "spec.template.spec.restartPolicyy"' &&
  pass "a misspelt template field is refused before admission: $(cond team-vision typo Queued)" ||
  fail "typo: phase '$(phase team-vision typo)', $(cond team-vision typo Queued)"
eventually 60 dry_run_refused bad-dns 'spec.template.spec.dnsPolicy: Unsupported value: "Sometimes": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"' &&
  pass "an invalid template value is refused before admission: $(cond team-vision bad-dns Queued)" ||
  fail "bad-dns: phase '$(phase team-vision bad-dns)', $(cond team-vision bad-dns Queued)"
for j in typo bad-dns; do
  [[ $(jq_job team-vision $j '.status.admission // "none"') == none ]] && npods_is team-vision $j 0 &&
    pass "$j: not admitted, no pods" || fail "$j: admission $(jq_job team-vision $j '.status.admission'), $(npods team-vision $j) pods"
done
kc -n team-vision patch trainingjob typo --type=json -p '[{"op":"remove","path":"/spec/template/spec/restartPolicyy"}]' >/dev/null ||
  fail "cannot fix typo"
eventually 90 phase_is team-vision typo Running && pass "typo, fixed: checked again, admitted and Running" ||
  fail "typo fixed: phase '$(phase team-vision typo)', $(cond team-vision typo Queued)"
kc -n team-vision delete trainingjob bad-dns typo --wait=false >/dev/null
# A refusal by an admission plugin (PodSecurity here) may end without an edit of the job: it is
# asked again every 30 s.
kc label namespace team-vision pod-security.kubernetes.io/enforce=baseline >/dev/null
job team-vision host-net 1 "" "" "      hostNetwork: true"
host_net_refused() {
  [[ $(cond team-vision host-net Queued) == 'True Invalid: '*'violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)'*'; asked again every 30 s' ]]
}
eventually 60 host_net_refused &&
  pass "PodSecurity refuses for now: $(cond team-vision host-net Queued)" ||
  fail "host-net: phase '$(phase team-vision host-net)', $(cond team-vision host-net Queued)"
kc label namespace team-vision pod-security.kubernetes.io/enforce- >/dev/null
eventually 90 phase_is team-vision host-net Running &&
  pass "the namespace's policy lifted: host-net asked again, admitted and Running" ||
  fail "host-net: phase '$(phase team-vision host-net)', $(cond team-vision host-net Queued)"
kc -n team-vision delete trainingjob host-net --wait=false >/dev/null

# --- 5. suspend, resume, delete ----------------------------------------------------------
kc -n team-vision patch trainingjob after-bad --type=merge -p '{"spec":{"suspend":true}}' >/dev/null
eventually 60 phase_is team-vision after-bad Suspended && eventually 60 npods_is team-vision after-bad 0 &&
  pass "suspend: phase Suspended, pods deleted" || fail "suspend: phase '$(phase team-vision after-bad)', $(npods team-vision after-bad) pods"
eventually 30 bash -c "[[ -z \$(kubectl --kubeconfig=$PHALANX_KUBECONFIG -n team-vision get endpointslices -l kubernetes.io/service-name=after-bad -o name) ]]" &&
  pass "suspend: the EndpointSlices are deleted with the pods" || fail "suspended job's EndpointSlices remain: $(slice_addresses team-vision after-bad | tr '\n' ';')"
[[ $(jq_job team-vision after-bad '.status.admission // "none"') == none ]] && pass "suspend cleared status.admission" ||
  fail "suspended job still admitted"
kc -n team-vision patch trainingjob after-bad --type=merge -p '{"spec":{"suspend":false}}' >/dev/null
eventually 90 phase_is team-vision after-bad Running && pass "resume: admitted and Running again" ||
  fail "resume: phase '$(phase team-vision after-bad)'"
# One event per transition: it ran twice and was resumed once. Events are written by their own
# threads, so wait for the counts, then look again for late repeats.
runs_and_resumes() { echo "Running x$(event_count team-vision after-bad Running), Resumed x$(event_count team-vision after-bad Resumed)"; }
once_each() { [[ $(runs_and_resumes) == "Running x2, Resumed x1" ]]; }
eventually 30 once_each; sleep 3
once_each && pass "one event per transition: $(runs_and_resumes)" || fail "events: $(runs_and_resumes), want Running x2, Resumed x1"
# Conditions set since the resume observe the spec that has suspend false (docs/api.md).
gen=$(jq_job team-vision after-bad .metadata.generation)
observed=$(jq_job team-vision after-bad '[.status.conditions[] | select(.type=="Admitted" or .type=="Running") | .observedGeneration] | join(" ")')
[[ $observed == "$gen $gen" ]] && pass "Admitted and Running have observedGeneration $gen, the resumed spec's" ||
  fail "observedGeneration of Admitted and Running: '$observed', metadata.generation $gen"
kc -n team-vision delete trainingjob after-bad --wait=true --timeout=60s >/dev/null &&
  pass "delete: the finalizer let the job go" || fail "delete of after-bad did not finish"
eventually 60 npods_is team-vision after-bad 0 && pass "delete: its pods are gone" || fail "pods of a deleted job remain"

# --- 5b. deleted and applied again under the same name: a Service of its own ----------------
# The old job's Service may outlive it for a moment (the garbage collector removes it); the new
# job's Service create then finds it. Taken as the new job's, it would be collected under it.
svc_owner_is() { [[ $(kc -n "$1" get service "$2" -o jsonpath='{.metadata.ownerReferences[0].uid}' 2>/dev/null) == "$3" ]]; }
job team-vision reborn 1
eventually 90 phase_is team-vision reborn Running || fail "reborn not Running: $(cond team-vision reborn Queued)"
old_uid=$(jq_job team-vision reborn .metadata.uid)
kc -n team-vision delete trainingjob reborn --wait=true --timeout=60s >/dev/null || fail "delete of reborn did not finish"
job team-vision reborn 1
new_uid=$(jq_job team-vision reborn .metadata.uid)
# What to look at when the re-applied job does not run (seen once in CI, 2026-11-29, with no
# Queued condition and no Service 120 s after the apply; not reproduced since).
reborn_diagnostics() {
  echo "--- reborn (uid '$new_uid', was '$old_uid'): $(kc -n team-vision get trainingjob reborn -o json 2>&1 |
    jq -c '{uid: .metadata.uid, finalizers: .metadata.finalizers, status}' 2>&1)"
  echo "--- its events: $(kc -n team-vision get events --field-selector involvedObject.name=reborn \
    -o jsonpath='{range .items[*]}{.reason}: {.message}{"\n"}{end}' 2>&1)"
  echo "--- phalanx-operator log:"; grep -F 'reborn' "$OPLOG" | tail -20
  echo "--- phalanx-scheduler log:"; grep -F 'reborn' "$PHALANX_CLUSTER_DIR/logs/phalanx-scheduler.log" | tail -10
}
eventually 90 phase_is team-vision reborn Running && [[ $new_uid != "$old_uid" ]] &&
  pass "reborn, deleted and applied again at once, is Running again (uid $old_uid -> $new_uid)" ||
  { fail "the re-applied reborn is not Running: $(cond team-vision reborn Queued)"; reborn_diagnostics; }
eventually 30 svc_owner_is team-vision reborn "$new_uid" &&
  pass "its Service is the new job's (owner uid $new_uid), not the deleted one's" ||
  fail "Service team-vision/reborn is owned by '$(kc -n team-vision get service reborn -o jsonpath='{.metadata.ownerReferences[0].uid}' 2>&1)', not $new_uid"
kc -n team-vision delete trainingjob reborn --wait=true --timeout=60s >/dev/null || fail "cleanup of reborn"

# --- 6. kill -9 of the operator in the middle of admissions ------------------------------
service_conflicts() {
  kc get --raw /metrics | grep '^apiserver_request_total{' | grep 'resource="services"' |
    grep 'verb="POST"' | grep 'code="409"' | awk '{s += $NF} END {print s + 0}'
}
conflicts_before=$(service_conflicts)
for i in 1 2 3 4; do job team-vision burst-$i 1; done
"$REPO_ROOT/hack/cluster/restart.sh" phalanx-operator --kill >/dev/null 2>&1 &&
  pass "phalanx-operator killed with SIGKILL during a burst of applies and restarted (took the Lease)" ||
  fail "phalanx-operator did not come back after kill -9: $(tail -5 "$OPLOG")"
for i in 1 2 3 4; do
  eventually 90 phase_is team-vision burst-$i Running || fail "burst-$i not Running after the restart: $(cond team-vision burst-$i Queued)"
done
pass "all 4 jobs applied around the crash are Running"
for i in 1 2 3 4; do
  eventually 30 slices_match team-vision burst-$i 1 ||
    fail "burst-$i's EndpointSlice after the restart: '$(slice_addresses team-vision burst-$i)' against '$(pod_addresses team-vision burst-$i)'"
done
pass "their EndpointSlices list each job's pod and IP"
out=$(check_invariants) && pass "invariants hold: every admitted job has exactly its pods on its nodes, no node over-committed" ||
  fail "invariants broken: $out"
grep -q "acquired lease" "$OPLOG" && pass "the restarted operator acquired the Lease" || fail "no lease acquisition in $OPLOG"
# The restarted operator knows which Services exist (one LIST) instead of creating every admitted
# job's Service again: the API server answered no Service create with 409 Conflict since the kill.
loaded=$(grep -o '[0-9]* TrainingJob Services exist' "$OPLOG" | tail -1)
[[ ${loaded%% *} -gt 0 ]] && pass "the restarted operator read the Services that exist: '$loaded'" ||
  fail "no 'TrainingJob Services exist' line with a count > 0 in $OPLOG: '$loaded'"
loaded_slices=$(grep -o '[0-9]* TrainingJob EndpointSlices exist' "$OPLOG" | tail -1)
[[ ${loaded_slices%% *} -gt 0 ]] && pass "the restarted operator read the EndpointSlices it wrote: '$loaded_slices'" ||
  fail "no 'TrainingJob EndpointSlices exist' line with a count > 0 in $OPLOG: '$loaded_slices'"
conflicts=$(($(service_conflicts) - conflicts_before))
[[ $conflicts == 0 ]] && pass "no Service was created twice across the restart (0 more POST services answered 409; $conflicts_before before it, from 5b)" ||
  fail "$conflicts Service creates answered 409 Conflict across the restart"

# The restarted operator may have admitted nothing itself (its counters start at 0 and a series
# appears with its first admission), but it reports every queue's quota and usage each cycle.
metrics=$(curl -sf "http://127.0.0.1:$PHALANX_OPERATOR_HEALTH_PORT/metrics")
grep -q '^phalanx_cluster_queue_nominal_quota{cluster_queue="vision",flavor="p5",resource="nvidia.com/gpu"} 128' <<<"$metrics" &&
  grep -q '^phalanx_admitted_active_workloads{cluster_queue="vision"}' <<<"$metrics" &&
  pass "/metrics reports quota and admitted workloads per ClusterTrainingQueue" ||
  fail "/metrics lacks the per-ClusterTrainingQueue series: $(grep -c '^phalanx_' <<<"$metrics") phalanx_ lines"

# A sweep from one manifest shares its first job's passed dry run for 60 s (docs/operator.md):
# the second and third jobs of that pod shape send no dry run of their own.
op_counter() { # exact series name
  curl -sf "http://127.0.0.1:$PHALANX_OPERATOR_HEALTH_PORT/metrics" | awk -v s="$1" '$1 == s {print $2}'
}
# The restarted operator checks the jobs still pending (too-big, bad-level, ...) once: wait for
# that to be over, so the counts below are the sweep's.
template_counts() {
  echo "$(op_counter phalanx_template_verdicts_shared_total)/$(op_counter 'phalanx_template_dry_runs_total{result="passed"}')"
}
counts_settled() { local a; a=$(template_counts); sleep 2; [[ $(template_counts) == "$a" ]]; }
eventually 30 counts_settled || fail "the template counters kept moving: $(template_counts)"
shared_before=$(op_counter phalanx_template_verdicts_shared_total)
passed_before=$(op_counter 'phalanx_template_dry_runs_total{result="passed"}')
sweep_pod="      terminationGracePeriodSeconds: 3"   # a pod shape no other job of the test has
job team-vision sweep-1 1 "" "" "$sweep_pod"
eventually 60 phase_is team-vision sweep-1 Running || fail "sweep-1 not Running: $(cond team-vision sweep-1 Queued)"
job team-vision sweep-2 1 "" "" "$sweep_pod"
job team-vision sweep-3 1 "" "" "$sweep_pod"
eventually 60 phase_is team-vision sweep-2 Running && eventually 60 phase_is team-vision sweep-3 Running ||
  fail "sweep-2/3 not Running: $(cond team-vision sweep-2 Queued); $(cond team-vision sweep-3 Queued)"
shared=$(($(op_counter phalanx_template_verdicts_shared_total) - ${shared_before:-0}))
passed=$(($(op_counter 'phalanx_template_dry_runs_total{result="passed"}') - ${passed_before:-0}))
[[ $shared == 2 && $passed == 1 ]] &&
  pass "a sweep of three jobs of one pod shape: 1 dry run, 2 verdicts shared (phalanx_template_verdicts_shared_total)" ||
  fail "sweep of three: $passed dry runs passed, $shared verdicts shared (want 1 and 2)"
kc -n team-vision delete trainingjob sweep-1 sweep-2 sweep-3 --wait=false >/dev/null

# --- 7. a namespace deleted with a running job: the namespace controller deletes the pods before
# the job, and the API server refuses creates there; the operator does not try to rebuild the
# gang nor report the refusals as RBAC, and the job's quota is freed when it goes.
kc apply -f - >/dev/null <<'YAML' || die "cannot create namespace ns-gone and its queues"
apiVersion: v1
kind: Namespace
metadata: {name: ns-gone}
---
apiVersion: phalanx.dev/v1alpha1
kind: ClusterTrainingQueue
metadata: {name: gone-q}
spec:
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: ns-gone}}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: p5
      resources: [{name: nvidia.com/gpu, nominalQuota: 16}]
---
apiVersion: phalanx.dev/v1alpha1
kind: TrainingQueue
metadata: {name: training, namespace: ns-gone}
spec: {clusterQueue: gone-q}
YAML
eventually 60 kc -n ns-gone get serviceaccount default >/dev/null || die "no default serviceaccount in ns-gone"
gone_usage() { kc get ctq gone-q -o json | jq -r '[.status.flavorsUsage[]?.resources[]? | select(.name=="nvidia.com/gpu") | .total] | first // "0"'; }
job ns-gone doomed 2
eventually 90 all_running ns-gone doomed 2 || die "ns-gone/doomed is not Running: $(cond ns-gone doomed Queued)"
[[ $(gone_usage) == 16 ]] || fail "gone-q charges $(gone_usage) GPUs for the running job, want 16"
rbac_before=$(grep -c "check the operator's RBAC" "$OPLOG")
kc delete namespace ns-gone --wait=true --timeout=90s >/dev/null && pass "namespace ns-gone with a running job is deleted" ||
  fail "namespace ns-gone not gone after 90 s: $(kc get namespace ns-gone -o jsonpath='{.status}')"
rbac=$(($(grep -c "check the operator's RBAC" "$OPLOG") - rbac_before))
[[ $rbac == 0 ]] && pass "no 'check the operator's RBAC' error while its namespace went" ||
  fail "$rbac RBAC errors logged while ns-gone was deleted: $(grep "check the operator's RBAC" "$OPLOG" | tail -2)"
usage_freed() { [[ $(gone_usage) == 0 ]]; }
eventually 30 usage_freed && pass "the job's quota went with it (gone-q uses 0 GPUs)" || fail "gone-q still charges $(gone_usage) GPUs"
finish

#!/usr/bin/env bash
# A required node affinity in the pod template through the real phalanx-operator,
# phalanx-scheduler and kube-scheduler (docs/operator.md "Which scheduling fields of the template
# placement honours"): 8 fake p5 nodes in two layer-3 blocks of 4 and 2 fake GB200 nodes, the
# shipped queues (deploy/examples/00-05: queue llm with flavors p5 then gb200).
#   1. a 2-pod job without affinity takes two nodes of a block B; a 2-pod job with `layer-3 NotIn
#      [B]` lands in the other block (B, with exactly two free nodes, would be the best fit), and
#      its pods bind and run;
#   2. a job whose affinity asks for instance type p6e-gb200.36xlarge is admitted in flavor gb200
#      (p5, first in the queue, has quota) and runs on GB200 nodes;
#   3. an affinity kube-scheduler cannot evaluate (operator Near) is Invalid, naming the field;
#   4. a required pod anti-affinity of the gang's own pods per node puts 4 pods of 4 GPUs on 4
#      nodes (not 2), which kube-scheduler binds; one per zone is Invalid.
# Needs hack/cluster/build.sh binaries and $PHALANX_BUILD_DIR (phalanx-scheduler,
# phalanx-operator).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

start_cluster --nodes 0 --ttl 600
add_fake_nodes --preset eks --count 8 --nodes-per-block 4
add_fake_nodes --preset gb200 --count 2
apply_example_queues
NS=team-llm L3=topology.k8s.aws/network-node-layer-3 TYPE=node.kubernetes.io/instance-type

# A TrainingJob in team-llm: name replicas gpus [required level] [affinity yaml, indented 6].
affinity_job() {
  kc -n $NS apply -f - >/dev/null <<YAML
apiVersion: phalanx.dev/v1alpha1
kind: TrainingJob
metadata: {name: $1}
spec:
  queueName: training
  replicas: $2
$([[ -n ${4:-} ]] && echo "  topology: {required: $4}")
  template:
    spec:
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
${5:-}
      containers:
      - name: trainer
        image: registry.example/trainer:1
        resources: {limits: {nvidia.com/gpu: $3}}
YAML
}
node_label() { kc get node "$1" -o json | jq -r ".metadata.labels[\"$2\"] // \"\""; }
# The distinct values of label $3 over the nodes job $2's pods are bound to.
bound_values() { # ns job label
  local node
  for node in $(pods_of "$1" "$2" | jq -r '.items[].spec.nodeName // "?"'); do
    [[ $node == "?" ]] && echo "?" || node_label "$node" "$3"
  done | sort -u | paste -sd ' '
}

# --- 1. NotIn on a layer-3 block -------------------------------------------------------------
affinity_job ctl 2 8 $L3 || die "cannot create ctl"
eventually 120 all_running $NS ctl 2 && pass "ctl: 2 pods Running" ||
  fail "ctl not Running: phase '$(phase $NS ctl)', $(cond $NS ctl Queued)"
B=$(bound_values $NS ctl $L3)
[[ $B == nn-p5-l3-? ]] || die "ctl is not inside one block: '$B'"
affinity_job away 2 8 $L3 "      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: $L3, operator: NotIn, values: [$B]}" || die "cannot create away"
eventually 120 all_running $NS away 2 && pass "away: 2 pods bound and Running" ||
  fail "away not Running: phase '$(phase $NS away)', $(cond $NS away Queued); pods: $(pods_of $NS away | jq -c '[.items[] | {n: .metadata.name, node: .spec.nodeName, p: .status.phase}]')"
got=$(bound_values $NS away $L3)
[[ $got == nn-p5-l3-? && $got != "$B" ]] && pass "away runs in block $got, outside the excluded $B" ||
  fail "away runs in '$got' (excluded $B)"
[[ $(jq_job $NS away '.status.placement.domain // ""') != *"$B"* ]] && pass "its reservation avoids $B too" ||
  fail "reservation in $(jq_job $NS away '.status.placement.domain')"

# --- 2. In on an instance type picks the flavor ----------------------------------------------
affinity_job gb 2 4 "" "      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: $TYPE, operator: In, values: [p6e-gb200.36xlarge]}" || die "cannot create gb"
eventually 120 all_running $NS gb 2 && pass "gb: 2 pods Running" ||
  fail "gb not Running: phase '$(phase $NS gb)', $(cond $NS gb Queued)"
[[ $(jq_job $NS gb '.status.admission.flavor') == gb200 ]] && pass "gb admitted in flavor gb200, not the first flavor p5" ||
  fail "gb admitted in flavor '$(jq_job $NS gb '.status.admission.flavor')'"
got=$(bound_values $NS gb $TYPE)
[[ $got == p6e-gb200.36xlarge ]] && pass "gb's pods run on $got nodes" || fail "gb's pods run on '$got'"

# --- 3. an affinity no pod could carry is Invalid before admission ---------------------------
affinity_job bad 1 8 "" "      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: $TYPE, operator: Near, values: [p5.48xlarge]}" || die "cannot create bad"
eventually 60 has_reason $NS bad Invalid && pass "bad: Invalid" ||
  fail "bad not Invalid: phase '$(phase $NS bad)', $(cond $NS bad Queued)"
msg=$(cond $NS bad Queued)
[[ $msg == *"spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator"* ]] &&
  pass "the reason names the field" || fail "reason: $msg"
[[ $(npods $NS bad) == 0 && -z $(jq_job $NS bad '.status.admission // ""') ]] && pass "bad has no pods and no admission" ||
  fail "bad has $(npods $NS bad) pods, admission '$(jq_job $NS bad '.status.admission')'"

# --- 4. one rank per node: a pod anti-affinity of the gang's own pods -------------------------
# 4 pods x 4 GPUs would pack two per 8-GPU node; the 4 free p5 nodes (2 per block) take one each.
affinity_job spread 4 4 "" "      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {matchLabels: {phalanx.dev/job: spread}}
            topologyKey: kubernetes.io/hostname" || die "cannot create spread"
eventually 120 all_running $NS spread 4 && pass "spread: 4 pods bound by kube-scheduler and Running" ||
  fail "spread not Running: phase '$(phase $NS spread)', $(cond $NS spread Queued); pods: $(pods_of $NS spread | jq -c '[.items[] | {n: .metadata.name, node: .spec.nodeName, p: .status.phase}]')"
nodes=$(pods_of $NS spread | jq -r '.items[].spec.nodeName' | sort -u | wc -l)
[[ $nodes == 4 ]] && pass "one rank per node: 4 distinct nodes" || fail "spread's 4 pods are on $nodes nodes"
sel=$(pods_of $NS spread | jq -c '.items[0].spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchLabels')
[[ $sel == '{"phalanx.dev/job":"spread","phalanx.dev/restart":"0"}' ]] &&
  pass "the pods' anti-affinity is narrowed to the gang's current pods: $sel" || fail "the pods' selector: $sel"
affinity_job zone 2 4 "" "      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {}
            topologyKey: topology.kubernetes.io/zone" || die "cannot create zone"
eventually 60 has_reason $NS zone Invalid && pass "an anti-affinity per zone is Invalid: $(cond $NS zone Queued | cut -c1-160)" ||
  fail "zone not Invalid: $(cond $NS zone Queued)"

out=$(check_invariants) && pass "invariants hold: exactly its pods on its nodes, no node over-committed" || fail "invariants broken: $out"
finish

#!/usr/bin/env bash
# GB200 tensor-parallel groups through the real phalanx-operator, issue #11: a private cluster of
# 26 fake p6e-gb200.36xlarge nodes (hack/phalanx-up.sh --preset gb200: 4 GPUs each, NVLink
# cliques of 18 nodes labelled nvidia.com/gpu.clique, so clique 0 has 18 nodes and clique 1 has
# 8), the shipped queues (deploy/examples/00-05) and the shipped job
# deploy/examples/12-trainingjob-gb200-tensor-parallel.yaml: 16 pods x 4 GPUs, topology
# groupSize 4 / groupLevel nvidia.com/gpu.clique, preferred one clique.
#   1. with clique 0 free, all 16 ranks land in clique 0 (the preferred level), Running;
#   2. with 8 nodes of clique 0 cordoned (10 + 8 schedulable nodes, no clique holds 16 even when
#      empty), the locality wait cannot help, so the job does not wait its 300 s (a3c5e3e: the
#      wait applies only when a domain of the preferred level could ever hold the gang): it runs
#      across both cliques at once with every consecutive group of 4 ranks inside one clique:
#      8 + 8, where filling nodes in rank order would have split ranks 8-11;
#   3. rank 0's node relabelled to another clique under the running gang: one TopologyChanged
#      warning names the split group, and the gang keeps running;
#   4. a pod asking 8 GPUs of these 4-GPU nodes is told the nodes are TooSmall, not
#      Insufficient (busy), and the p5 flavor, which has no node here, names no GB200 domain as
#      its best (audit 2026-11-30, finding 5);
#   5. two nodes with GFD's clique label but no network-layer labels: phalanx-scheduler warns once
#      per node and counts them in phalanx_scheduler_topology_label_gap_nodes, a gang grouped by
#      clique on them is told which labels are missing, and `phalanx topology` shows them under
#      the cluster (finding 6, 9).
# Needs hack/cluster/build.sh binaries and $PHALANX_BUILD_DIR (phalanx-scheduler,
# phalanx-operator).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

start_cluster --preset gb200 --nodes 26 --ttl 600
CLIQUE=nvidia.com/gpu.clique
apply_example_queues
J=moe-gb200-tp16 NS=team-llm
EXAMPLE="$REPO_ROOT/deploy/examples/12-trainingjob-gb200-tensor-parallel.yaml"

declare -A clique_of
while read -r node clique; do clique_of[$node]=$clique; done < <(
  kc get nodes -o json | jq -r ".items[] | \"\\(.metadata.name) \\(.metadata.labels[\"$CLIQUE\"] // \"-\")\"")
# The clique of each rank's node, in rank order, one per line ("?" for an unbound rank).
rank_cliques() {
  local pods r node
  pods=$(pods_of $NS $J)
  for ((r = 0; r < 16; r++)); do
    node=$(jq -r ".items[] | select(.metadata.name==\"$J-$r\") | .spec.nodeName // \"\"" <<<"$pods")
    echo "${clique_of[$node]:-?}"
  done
}
# Ranks 4k..4k+3 share a clique, for every k; prints the groups that do not.
groups_in_one_clique() {
  local -a c
  mapfile -t c < <(rank_cliques)
  local k bad=0
  for ((k = 0; k < 16; k += 4)); do
    if [[ ${c[k]} == "?" || ${c[k]} != "${c[k + 1]}" || ${c[k]} != "${c[k + 2]}" || ${c[k]} != "${c[k + 3]}" ]]; then
      echo "ranks $k-$((k + 3)) in ${c[k]} ${c[k + 1]} ${c[k + 2]} ${c[k + 3]}"; bad=1
    fi
  done
  return $bad
}
placement_matches_pods() {
  [[ $(jq_job $NS $J '.status.placement.nodes | join(" ")') == \
     "$(pods_of $NS $J | jq -r '[.items[] | {r: (.metadata.labels["phalanx.dev/rank"] | tonumber), n: .spec.nodeName}] | sort_by(.r) | map(.n) | join(" ")')" ]]
}

# --- 1. one free clique holds the whole job --------------------------------------------------
kc apply -f "$EXAMPLE" >/dev/null || die "cannot apply $EXAMPLE"
eventually 120 all_running $NS $J 16 && pass "$J: 16 pods Running: $(cond $NS $J Admitted)" ||
  fail "$J not Running: phase '$(phase $NS $J)', $(cond $NS $J Queued)"
[[ $(jq_job $NS $J '.status.admission.flavor') == gb200 ]] && pass "admitted in flavor gb200 (p5 has quota but no nodes)" ||
  fail "admitted in flavor '$(jq_job $NS $J '.status.admission.flavor')'"
placement_matches_pods && pass "rank r runs on status.placement.nodes[r]" || fail "pods are not on status.placement.nodes"
cliques=$(rank_cliques | sort -u | paste -sd ' ')
[[ $cliques == p6e-gb200-cluster.0 ]] && pass "all 16 ranks in one clique ($cliques), the preferred level" ||
  fail "ranks span cliques: $cliques"
out=$(groups_in_one_clique) && pass "every group of 4 consecutive ranks inside one clique" || fail "groups split: $out"
kc -n $NS delete trainingjob $J --wait=true --timeout=60s >/dev/null || fail "cannot delete $J"
eventually 60 npods_is $NS $J 0 || fail "pods of the deleted $J remain"

# --- 2. no clique holds 16: groups of 4 across two cliques -----------------------------------
for i in 0 1 2 3 4 5 6 7; do kc cordon "p6e-gb200-000$i" >/dev/null || die "cannot cordon p6e-gb200-000$i"; done
kc apply -f "$EXAMPLE" >/dev/null || die "cannot apply $EXAMPLE again"
# 120 s is well under the queue's 300 s locality wait: Running by then means it did not wait.
eventually 120 all_running $NS $J 16 && pass "$J: 16 pods Running across cliques without waiting for a clique no wait can free" ||
  fail "$J not Running: phase '$(phase $NS $J)', $(cond $NS $J Queued)"
placement_matches_pods && pass "rank r runs on status.placement.nodes[r]" || fail "pods are not on status.placement.nodes"
split=$(rank_cliques | sort | uniq -c | awk '{print $2 "=" $1}' | paste -sd ' ')
[[ $split == "p6e-gb200-cluster.0=8 p6e-gb200-cluster.1=8" ]] && pass "8 ranks in each clique: $split" ||
  fail "ranks per clique: $split (want 8 + 8)"
out=$(groups_in_one_clique) && pass "every group of 4 consecutive ranks inside one clique" || fail "groups split: $out"
out=$(check_invariants) && pass "invariants hold: exactly its pods on its nodes, no node over-committed" || fail "invariants broken: $out"

# --- 3. a clique relabelled under a running group: the job is told ----------------------------
rank0=$(jq_job $NS $J '.status.placement.nodes[0]')
kc label node "$rank0" "$CLIQUE=p6e-gb200-cluster.9" --overwrite >/dev/null || die "cannot relabel $rank0"
drift_msg() { kc -n $NS get events --field-selector "involvedObject.name=$J,reason=TopologyChanged" -o jsonpath='{.items[*].message}'; }
drift_named() { [[ $(drift_msg) == "rank 0's node $rank0 now has $CLIQUE=p6e-gb200-cluster.9: group 0 (ranks 0-3) spans 2 $CLIQUE domains"* ]]; }
eventually 30 drift_named && pass "a TopologyChanged warning names the split group: $(drift_msg)" ||
  fail "no TopologyChanged event naming rank 0: '$(drift_msg)'"
[[ $(event_count $NS $J TopologyChanged) == 1 ]] && pass "told once" || fail "TopologyChanged recorded $(event_count $NS $J TopologyChanged) times"
all_running $NS $J 16 && pass "the gang keeps running" || fail "$J: $(phase $NS $J)"

# --- 4. a node too small for one pod is not a busy node --------------------------------------
job team-llm big8 1 >/dev/null || die "cannot create big8"
eventually 60 has_reason team-llm big8 CannotBePlaced || fail "big8: $(cond team-llm big8 Queued)"
msg=$(cond team-llm big8 Queued)
[[ $msg == *"18 nodes TooSmall nvidia.com/gpu, 8 Unschedulable"* && $msg != *"Insufficient nvidia.com/gpu"* ]] &&
  pass "8 GPUs per pod on 4-GPU nodes: TooSmall, not Insufficient" || fail "big8: $msg"
[[ $msg == *"no node matches its node selector and affinity; 18 nodes NodeSelectorMismatch, 8 Unschedulable"* ]] &&
  pass "flavor p5 (no node here) names no GB200 domain as its best" || fail "big8 in p5: $msg"
out=$("$BUILD/cli/phalanx" explain big8 -n team-llm --kubeconfig "$PHALANX_KUBECONFIG" \
  --server "$PHALANX_SCHEDULER_GRPC" 2>&1)
grep -q 'nodes rejected: TooSmall nvidia.com/gpu 18, Unschedulable 8' <<<"$out" &&
  pass "phalanx explain: the scheduler's dry run says TooSmall too" || { fail "explain big8"; echo "$out"; }
kc -n team-llm delete trainingjob big8 --wait=true --timeout=60s >/dev/null || fail "cannot delete big8"

# --- 5. GFD's clique label without the network layers ----------------------------------------
# Uncordoned first: add_fake_nodes waits for no node.kubernetes.io/* taint, unschedulable too.
for i in 0 1 2 3 4 5 6 7; do kc uncordon "p6e-gb200-000$i" >/dev/null || die "cannot uncordon p6e-gb200-000$i"; done
add_fake_nodes --preset gb200 --prefix gby --count 2 --label "$CLIQUE=gfd-uuid.7"
for n in gby-0000 gby-0001; do
  kc label node $n topology.k8s.aws/network-node-layer-{1,2,3}- >/dev/null || die "cannot unlabel $n"
done
metric() { curl -sf "http://127.0.0.1:$PHALANX_SCHEDULER_HEALTH_PORT/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
gap_nodes_are() { [[ $(metric phalanx_scheduler_topology_label_gap_nodes) == "$1" ]]; }
eventually 30 gap_nodes_are 2 && pass "phalanx_scheduler_topology_label_gap_nodes 2" ||
  fail "phalanx_scheduler_topology_label_gap_nodes $(metric phalanx_scheduler_topology_label_gap_nodes)"
sleep 5  # node status heartbeats in between: still one line per node
SCHEDLOG="$PHALANX_CLUSTER_DIR/logs/phalanx-scheduler.log"
for n in gby-0000 gby-0001; do
  c=$(grep -c "node $n carries $CLIQUE but not topology.k8s.aws/network-node-layer-1" "$SCHEDLOG")
  [[ $c == 1 ]] && pass "$n: one warning naming the missing layer-1 label" || fail "$n: $c warnings"
done
kc -n team-llm apply -f - >/dev/null <<YAML || die "cannot create cl2"
apiVersion: phalanx.dev/v1alpha1
kind: TrainingJob
metadata: {name: cl2}
spec:
  queueName: training
  replicas: 2
  topology: {groupSize: 2, groupLevel: $CLIQUE}
  template:
    spec:
      nodeSelector: {phalanx.dev/fake-node-prefix: gby}
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers:
      - {name: c, image: busybox, resources: {limits: {nvidia.com/gpu: 4}}}
YAML
eventually 60 has_reason team-llm cl2 CannotBePlaced || fail "cl2: $(cond team-llm cl2 Queued)"
msg=$(cond team-llm cl2 Queued)
[[ $msg == *"2 MissingTopologyLabel (every label from topology.k8s.aws/network-node-layer-1 down to $CLIQUE needed)"* ]] &&
  pass "a gang grouped by clique on them: the missing labels are named" || fail "cl2: $msg"
out=$(env -u PHALANX_SCHEDULER_GRPC "$BUILD/cli/phalanx" topology --kubeconfig "$PHALANX_KUBECONFIG" 2>&1)
grep -Eq '^  \(2 nodes without layer-1\) +free 8/8 GPUs$' <<<"$out" &&
  grep -q "^note: 28 nodes carry $CLIQUE, 1 placed TrainingJob uses $CLIQUE, which the levels used here (preset eks, the default) lack: .* --topology-preset gb200" <<<"$out" &&
  pass "phalanx topology: the two nodes under the cluster, and the note that the eks preset lacks cliques" ||
  { fail "phalanx topology"; echo "$out"; }
out=$("$BUILD/cli/phalanx" topology --topology-preset gb200 --kubeconfig "$PHALANX_KUBECONFIG" 2>&1)
grep -q "^note: 2 nodes carry a topology label but lack a coarser level's, so their deeper labels are ignored: gby-0000 without topology.k8s.aws/network-node-layer-1, gby-0001 without" <<<"$out" &&
  ! grep -q 'preset gb200) lack' <<<"$out" &&
  pass "phalanx topology --topology-preset gb200: a note names the nodes whose clique label is ignored" ||
  { fail "phalanx topology --topology-preset gb200"; echo "$out"; }
out=$(PHALANX_SCHEDULER_GRPC=$PHALANX_SCHEDULER_GRPC "$BUILD/cli/phalanx" topology --nodes \
  --kubeconfig "$PHALANX_KUBECONFIG" 2>&1)
grep -q '^levels: layer-1 > layer-2 > layer-3 > gpu.clique > node (phalanx-scheduler .*)$' <<<"$out" &&
  ! grep -q '^note:.*preset' <<<"$out" &&
  pass "phalanx topology --nodes with a scheduler address: the scheduler's levels" ||
  { fail "phalanx topology --nodes"; echo "$out"; }
finish

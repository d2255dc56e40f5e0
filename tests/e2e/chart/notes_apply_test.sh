#!/usr/bin/env bash
# What `helm install` prints (NOTES.txt), followed literally the way a new user would, for the
# default values and every preset: the commands of steps 2 (NetworkTopology, NodeFlavors) and 3
# (namespace team-llm, its ClusterTrainingQueue and TrainingQueue) run as printed and are
# accepted, the queue becomes Active, and the example job step 4 names (with the priority
# classes) is admitted and runs on that preset's kind of node. One private control plane with
# phalanx-scheduler (preset gb200: network layers 1-3 and the NVLink clique, which covers every
# preset's nodes), a real kube-scheduler, phalanx-operator, and kwok nodes of each fleet:
#   p5.48xlarge (EKS, tainted nvidia.com/gpu), p6-b200.48xlarge (4 layers, tainted),
#   "ml.p5.48xlarge" (HyperPod: p5 hardware, ml. instance type, node-health-status
#   Schedulable), p6e-gb200.36xlarge (one NVL72 clique of 18, tainted).
# The chart's own install, RBAC and upgrade are tests/e2e/chart/chart_install_test.sh.
# Needs hack/cluster/build.sh binaries (helm included) and build/ (phalanx-scheduler,
# phalanx-operator).
source "$(dirname "${BASH_SOURCE[0]}")/../operator/lib.sh"
source "$REPO_ROOT/hack/cluster/lib.sh"
HELM=$(phx_bin helm)
[[ -x $HELM ]] || die "helm $(phx_version helm) is not built at $HELM; run hack/cluster/build.sh"
CHART="$REPO_ROOT/charts/phalanx"

start_cluster --preset gb200 --nodes 0 --ttl 900
export PHALANX_KUBECONFIG
fake() { "$REPO_ROOT/hack/cluster/fake-nodes.sh" --no-wait "$@" >/dev/null || die "fake-nodes.sh $*"; }
GPU_TAINT=(--taint nvidia.com/gpu=true:NoSchedule)
fake --preset eks --instance-type p5.48xlarge --prefix p5 --count 8 --nodes-per-block 8 "${GPU_TAINT[@]}"
fake --preset eks-4layer --instance-type p6-b200.48xlarge --prefix b200 --count 8 --nodes-per-block 8 "${GPU_TAINT[@]}"
fake --preset eks --instance-type p5.48xlarge --prefix hp --count 8 --nodes-per-block 8 \
  --label node.kubernetes.io/instance-type=ml.p5.48xlarge --label sagemaker.amazonaws.com/node-health-status=Schedulable
fake --preset gb200 --prefix gb --count 18 "${GPU_TAINT[@]}"
# A new node carries node.kubernetes.io/not-ready until the node lifecycle controller sees it Ready.
not_ready() { kc get nodes -o json | jq '[.items[] | select(any(.spec.taints[]?; .key | startswith("node.kubernetes.io/")))] | length'; }
none_not_ready() { [[ $(not_ready) == 0 ]]; }
eventually 120 none_not_ready || die "$(not_ready) nodes still carry node lifecycle taints"
pass "42 fake nodes: 8 p5, 8 p6-b200, 8 ml.p5 (HyperPod), 18 p6e-gb200"

# NOTES.txt as `helm install` prints it for these values. Helm's dry run still reads the cluster
# and refuses CRDs it does not own (hack/phalanx-up.sh applied them): --take-ownership, which a
# dry run does not carry out.
notes() {
  "$HELM" install phalanx "$CHART" -n phalanx-system --dry-run=client --take-ownership \
    --kubeconfig "$PHALANX_KUBECONFIG" "$@" | sed -n '/^NOTES:/,$p'
}
# The heredoc command that starts with `kubectl apply -f - <<'$2'` in notes $1, through its end.
block() { sed -n "/^kubectl apply -f - <<'$2'\$/,/^$2\$/p" <<<"$1"; }
# Runs printed commands as a user's shell would, with this cluster's kubeconfig.
run_printed() { (cd "$REPO_ROOT" && KUBECONFIG=$PHALANX_KUBECONFIG bash -euo pipefail -c "$1") 2>&1; }
ctq_active() { [[ $(kc get clustertrainingqueue llm -o jsonpath='{.status.conditions[?(@.type=="Active")].status}') == True ]]; }
job_runs() { # ns name
  local want; want=$(jq_job "$1" "$2" '.spec.replicas')
  [[ $(phase "$1" "$2") == Running ]] && all_running "$1" "$2" "$want"
}
gone() { ! kc -n "$1" get trainingjob "$2" >/dev/null 2>&1; }

# preset values-file  node-prefix  the flavor it must be admitted in
check_preset() {
  local name=$1 values=$2 prefix=$3 flavor=$4 text fleet queues submit out job ns nodes
  text=$(notes ${values:+-f "$CHART/$values"}) || { fail "$name: helm install --dry-run failed: $text"; return; }
  fleet=$(block "$text" YAML); queues=$(block "$text" QUEUES)
  [[ -n $fleet && -n $queues ]] || { fail "$name: NOTES.txt lacks the step 2 or step 3 command: $text"; return; }
  out=$(run_printed "$fleet") && pass "$name: step 2 as printed: $(tr '\n' ';' <<<"$out")" ||
    { fail "$name: step 2 as printed: $out"; return; }
  out=$(run_printed "$queues") && pass "$name: step 3 as printed: $(tr '\n' ';' <<<"$out")" ||
    { fail "$name: step 3 as printed: $out"; return; }
  eventually 30 ctq_active && pass "$name: ClusterTrainingQueue llm is Active" ||
    { fail "$name: ClusterTrainingQueue llm is not Active: $(kc get clustertrainingqueue llm -o jsonpath='{.status.conditions}')"; return; }
  submit=$(grep -m1 '^  kubectl apply -f deploy/examples/' <<<"$text" | sed 's/^ *//')
  [[ -n $submit ]] || { fail "$name: NOTES.txt names no example job to apply"; return; }
  # Step 4's own note: p6-b200 nodes have 8 EFA devices, the p5 example asks for 32.
  if [[ $name == eks-p6 ]]; then
    job_file=$(grep -o 'deploy/examples/1[0-9][^ ]*' <<<"$submit")
    sed 's|vpc.amazonaws.com/efa: 32|vpc.amazonaws.com/efa: 8|' "$REPO_ROOT/$job_file" >"$PHALANX_CLUSTER_DIR/job-p6.yaml"
    submit="${submit/$job_file/$PHALANX_CLUSTER_DIR/job-p6.yaml}"
  fi
  out=$(run_printed "$submit") || { fail "$name: step 4 '$submit': $out"; return; }
  job=$(grep -o 'trainingjob.phalanx.dev/[^ ]*' <<<"$out" | cut -d/ -f2)
  ns=team-llm
  eventually 90 job_runs $ns "$job" && nodes=$(jq_job $ns "$job" '.status.placement.nodes | join(" ")') &&
    pass "$name: $job Running on $nodes" ||
    { fail "$name: $job does not run: $(cond $ns "$job" Queued)"; kc -n $ns delete trainingjob "$job" --wait=false >/dev/null 2>&1; return; }
  [[ $(jq_job $ns "$job" '.status.admission.flavor') == "$flavor" && $nodes =~ ^($prefix-[0-9]+ ?)+$ ]] &&
    pass "$name: admitted in flavor $flavor, on $prefix nodes only" ||
    fail "$name: admitted in flavor $(jq_job $ns "$job" '.status.admission.flavor') on $nodes"
  kc -n $ns delete trainingjob "$job" --wait=false >/dev/null
  eventually 60 gone $ns "$job" || fail "$name: $job was not deleted"
}

check_preset default "" p5 p5
check_preset eks-p5 values-eks-p5.yaml p5 p5
check_preset eks-p6 values-eks-p6.yaml b200 b200
check_preset hyperpod values-hyperpod.yaml hp ml-p5
check_preset gb200 values-gb200.yaml gb gb200
out=$(check_invariants) && pass "invariants hold" || fail "invariants: $out"
finish

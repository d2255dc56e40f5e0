#!/usr/bin/env bash
# `kubectl phalanx` against a real control plane (hack/phalanx-up.sh: kube-apiserver, etcd, kwok
# fake GPU nodes, kube-scheduler, phalanx-scheduler), on a private cluster so it can run beside
# the other e2e tests. kubectl finds the plugin through the kubectl-phalanx link on PATH, so every
# command below goes through kubectl's plugin path:
#   1. queues, jobs, explain and topology show the applied deploy/examples as they are: no
#      operator runs here, so objects have no status until the test writes one as the operator
#      would (a reservation made through the Placement API, a Queued condition, an Event);
#   2. explain and topology also ask phalanx-scheduler over gRPC (--server);
#   3. errors are one line on stderr with exit 1 (not found, API server unreachable, CRDs
#      missing, scheduler unreachable) or exit 2 (bad flags).
# Needs hack/cluster/build.sh binaries and PHALANX_BUILD_DIR (phalanx-scheduler, phalanx).
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
BUILD="${PHALANX_BUILD_DIR:-$REPO_ROOT/build}"
export PHALANX_BUILD_DIR="$BUILD"
PLUGIN="$BUILD/cli/kubectl-phalanx"
[[ -L $PLUGIN && -x $PLUGIN ]] || die "$PLUGIN (the link to phalanx) is not built"
phalanx_up_private cli --nodes 16 --ttl 900 --no-operator
SCHED=$PHALANX_SCHEDULER_GRPC
unset PHALANX_SCHEDULER_GRPC  # --server is given where the scheduler is meant
export KUBECONFIG=$PHALANX_KUBECONFIG PATH="$BUILD/cli:$PATH"
kubectl plugin list 2>/dev/null | grep -q "$BUILD/cli/kubectl-phalanx" &&
  pass "kubectl plugin list finds kubectl-phalanx" || fail "kubectl plugin list does not list $PLUGIN"

# kp ARGS: stdout in $out, stderr in $err, exit code in $rc.
kp() {
  local e; e=$(mktemp)
  out=$(kubectl phalanx "$@" 2>"$e"); rc=$?
  err=$(cat "$e"); rm -f "$e"
}
has() { grep -qF -- "$1" <<<"$out"; }
has_line() { grep -Eq -- "$1" <<<"$out"; }
# expect_ok WHAT ARGS...: exit 0 and nothing on stderr.
expect_ok() {
  local what=$1; shift
  kp "$@"
  [[ $rc == 0 && -z $err ]] && return 0
  fail "$what: kubectl phalanx $* exited $rc: $err"; echo "$out"; return 1
}
# expect_error WHAT CODE PATTERN ARGS...: exit CODE and exactly one stderr line matching PATTERN.
expect_error() {
  local what=$1 code=$2 pattern=$3; shift 3
  kp "$@"
  if [[ $rc == "$code" && $(wc -l <<<"$err") == 1 ]] && grep -Eq -- "$pattern" <<<"$err"; then
    pass "$what: exit $code, one line: $err"
  else
    fail "$what: kubectl phalanx $* exited $rc (want $code), stderr: $err"
  fi
}

out=$(kc apply -f "$REPO_ROOT/deploy/examples/" 2>&1) || die "deploy/examples did not apply: $out"
pass "deploy/examples applied (queues, flavors, topologies, namespaces, 3 TrainingJobs)"

# --- 1. queues ------------------------------------------------------------------------------
if expect_ok "queues -A" queues -A; then
  echo "$out"
  has_line '^llm +gpu-fleet +- +- +p5 -/256, gb200 -/72 +-$' &&
    has_line '^research +gpu-fleet +- +- +p5 -/128, gb200 -/36 +-$' &&
    has_line '^vision +gpu-fleet +- +- +p5 -/128, gb200 -/36 +-$' &&
    pass "queues: the three ClusterTrainingQueues with cohort and nominal GPUs per flavor, no status yet" ||
    fail "queues: ClusterTrainingQueue rows"
  has_line '^team-llm +training +llm +- +- +-$' && has_line '^team-research +training +research ' &&
    has_line '^team-vision +training +vision ' && pass "queues -A: the three TrainingQueues" ||
    fail "queues -A: TrainingQueue rows"
fi
# The usage and Active condition as the operator writes them.
kc patch clustertrainingqueue llm --subresource=status --type=merge -p '{"status":{"pendingWorkloads":1,
  "admittedWorkloads":1,"flavorsUsage":[{"name":"p5","resources":[{"name":"nvidia.com/gpu",
  "total":64,"borrowed":0}]}],"conditions":[{"type":"Active","status":"True","reason":"Ready",
  "message":"Can admit new workloads","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}' >/dev/null ||
  fail "cannot write ClusterTrainingQueue llm's status"
expect_ok "queues -n team-llm" queues -n team-llm &&
  has_line '^llm +gpu-fleet +1 +1 +p5 64/256 \(\+0 borrowed\), gb200 0/72 \(\+0 borrowed\) +True$' &&
  has_line '^training +llm ' && ! has team-vision &&
  pass "queues: usage and Active from the status; -n shows that namespace's TrainingQueue only" ||
  { fail "queues after the status was written"; echo "$out"; }

# --- 2. jobs --------------------------------------------------------------------------------
if expect_ok "jobs -A" jobs -A; then
  echo "$out"
  has_line '^team-llm +llama-pretrain-64 +training +- +-/8 +- +0 +[0-9a-z]+ +no status yet$' &&
    has_line '^team-llm +moe-gb200-tp16 +training +- +-/16 ' &&
    has_line '^team-research +mistral-finetune +training +- +-/8 ' &&
    pass "jobs -A: the three TrainingJobs, not admitted, no status (no operator)" ||
    fail "jobs -A rows"
fi
expect_ok "jobs (default namespace)" jobs && [[ $out == "No TrainingJobs in namespace default." ]] &&
  pass "jobs in the default namespace: none, said so" || fail "jobs in default: '$out'"
kp jobs -A --json
[[ $rc == 0 && $(jq '.trainingJobs | length' <<<"$out") == 3 &&
   $(jq -r '.trainingJobs[] | select(.name == "moe-gb200-tp16") | .replicas' <<<"$out") == 16 ]] &&
  pass "jobs -A --json: 3 jobs, machine-readable" || fail "jobs --json: $out $err"

# llama: reserved through the Placement API and recorded as the operator does; mistral: queued.
L3=topology.k8s.aws/network-node-layer-3
res=$("$BUILD/cli/phalanx" placement reserve --server "$SCHED" --job team-llm/llama-pretrain-64 \
  --count 8 --gpus 8 --required "$L3" --json) || die "reserve llama-pretrain-64 failed: $res"
NODES=$(jq -c .nodes <<<"$res")
DOMAIN=$(jq -r .domain <<<"$res"); DOMAIN=${DOMAIN#*=}
kc -n team-llm patch trainingjob llama-pretrain-64 --subresource=status --type=merge -p "{\"status\":{
  \"phase\":\"Running\",\"admission\":{\"clusterQueue\":\"llm\",\"flavor\":\"p5\",\"replicas\":8},
  \"placement\":{\"level\":\"$L3\",\"domain\":\"$DOMAIN\",\"nodes\":$NODES},\"restarts\":1}}" >/dev/null ||
  fail "cannot write llama-pretrain-64's status"
WHY="needs 16 nvidia.com/gpu in flavor p5 of ClusterTrainingQueue research: 0 of 128 free after borrowing limits"
kc -n team-research patch trainingjob mistral-finetune --subresource=status --type=merge -p "{\"status\":{
  \"phase\":\"Queued\",\"conditions\":[{\"type\":\"Queued\",\"status\":\"True\",
  \"reason\":\"InsufficientQuota\",\"message\":\"$WHY\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}]}}" >/dev/null ||
  fail "cannot write mistral-finetune's status"
uid=$(kc -n team-research get trainingjob mistral-finetune -o jsonpath='{.metadata.uid}')
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
kc -n team-research create -f - >/dev/null <<YAML || fail "cannot create an Event"
apiVersion: v1
kind: Event
metadata: {name: mistral-finetune.e2e}
involvedObject: {apiVersion: phalanx.dev/v1alpha1, kind: TrainingJob, name: mistral-finetune, namespace: team-research, uid: $uid}
reason: Queued
message: "waiting in ClusterTrainingQueue research"
type: Normal
source: {component: phalanx-operator}
firstTimestamp: "$now"
lastTimestamp: "$now"
count: 3
YAML
if expect_ok "jobs -A with statuses" jobs -A; then
  echo "$out"
  has_line "^team-llm +llama-pretrain-64 +training +Running +8/8 +layer-3 $DOMAIN +1 +[0-9a-z]+\$" &&
    pass "jobs: a placed job shows phase, size 8/8, its layer-3 domain and restarts" ||
    fail "jobs: llama-pretrain-64 row"
  has_line '^team-research +mistral-finetune +training +Queued +-/8 +- +0 +[0-9a-z]+ +InsufficientQuota: needs 16 nvidia.com/gpu in flavor p5 o\.\.\.$' &&
    pass "jobs: a queued job shows the Queued condition's reason and message, truncated" ||
    fail "jobs: mistral-finetune row"
fi

# --- 3. explain -----------------------------------------------------------------------------
if expect_ok "explain mistral-finetune --server" explain mistral-finetune -n team-research --server "$SCHED"; then
  echo "$out"
  has 'Replicas:    8 (elastic 2-16, step 2)' &&
    has 'Per pod:     cpu=180, memory=1800Gi, nvidia.com/gpu=8, vpc.amazonaws.com/efa=32' &&
    has 'Topology:    preferred layer-2 (topology.k8s.aws/network-node-layer-2)' &&
    pass "explain: the spec summary (elastic range, per-pod requests, topology)" || fail "explain: spec"
  # The message is shown whole, continued under MESSAGE past 80 characters: read back joined.
  queued_message=$(awk '/^  TYPE /{on=1; next} on && /^$/{exit} on' <<<"$out" |
    sed -E 's/^  Queued +True +InsufficientQuota +[0-9a-z]+ +//; s/^ +//' | paste -sd' ')
  [[ $queued_message == "$WHY" ]] &&
    pass "explain: the Queued condition with reason and message" ||
    fail "explain: conditions: '$queued_message'"
  has_line '^  [0-9a-z]+ \(x3\) +Normal +Queued +phalanx-operator +waiting in ClusterTrainingQueue research$' &&
    pass "explain: the job's Event (involvedObject field selector)" || fail "explain: events"
  has_line '^  would place 8 pods in layer-3 nn-[a-z0-9-]+: p5-00(0[89]|1[0-5]), ' &&
    pass "explain: phalanx-scheduler's dry run places 8 of 2-16 pods on the 8 free nodes" ||
    fail "explain: scheduler dry run"
fi
expect_ok "explain llama-pretrain-64" explain llama-pretrain-64 -n team-llm --server "$SCHED" &&
  has "Placement:   layer-3 $DOMAIN on $(jq -r 'join(", ")' <<<"$NODES")" &&
  has 'Scheduler:   not asked: the gang holds the nodes under Placement' &&
  pass "explain: a placed job shows where it runs (rank by rank) and is not dry-run again" ||
  { fail "explain llama-pretrain-64"; echo "$out"; }
# Its pods as the operator would create them (restart 1): rank 0 bound to its node (kwok runs it),
# rank 1 mounting a claim that does not exist (kube-scheduler says it is unschedulable).
job_uid=$(kc -n team-llm get trainingjob llama-pretrain-64 -o jsonpath='{.metadata.uid}')
rank_pod() { # rank, spec lines
  kc -n team-llm create -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: llama-pretrain-64-$1
  labels: {phalanx.dev/job: llama-pretrain-64, phalanx.dev/rank: "$1", phalanx.dev/restart: "1"}
  ownerReferences: [{apiVersion: phalanx.dev/v1alpha1, kind: TrainingJob, name: llama-pretrain-64, uid: $job_uid, controller: true}]
spec:
$2
  containers: [{name: trainer, image: trainer:1}]
  tolerations: [{operator: Exists}]
YAML
}
rank_pod 0 "  nodeName: $(jq -r '.[0]' <<<"$NODES")" || fail "cannot create rank 0's pod"
rank_pod 1 "  volumes: [{name: data, persistentVolumeClaim: {claimName: no-such-claim}}]" ||
  fail "cannot create rank 1's pod"
explain_pods() {
  kp explain llama-pretrain-64 -n team-llm
  has "  8 ranks (restart 1): 1 Running, 1 Pending, 6 without a pod" &&
    has_line '^  1 +llama-pretrain-64-1 +Pending +- +Unschedulable: 0/16 nodes are available: persistentvolumeclaim "no-such-claim"'
}
eventually 30 explain_pods &&
  pass "explain: the gang's ranks by phase, and why rank 1 is not running (kube-scheduler's message)" ||
  { fail "explain: the Pods section"; echo "$out"; }
kp explain llama-pretrain-64 -n team-llm --json
[[ $(jq -c '.ranks' <<<"$out") == '{"size":8,"restart":1,"phases":{"Pending":1,"Running":1},"withoutPod":[2,3,4,5,6,7],"otherPods":0}' ]] &&
  pass "explain --json: .ranks" || fail "explain --json .ranks: $(jq -c '.ranks' <<<"$out")"

# Through phalanx-scheduler's extender: rank 3's pod, owned by the job, binds to rank 3's reserved
# node; a pod of the namespace that only carries rank 2's labels is refused every node, however
# it is labelled (security audit 2026-11-30 d, S9).
gpu_pod() { # name, rank, ownerReferences line (or "")
  kc -n team-llm create -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  labels: {phalanx.dev/job: llama-pretrain-64, phalanx.dev/rank: "$2", phalanx.dev/restart: "1"}
$3
spec:
  schedulerName: phalanx
  tolerations: [{operator: Exists}]
  containers: [{name: trainer, image: trainer:1, resources: {limits: {nvidia.com/gpu: 8}}}]
YAML
}
gpu_pod llama-pretrain-64-3 3 "  ownerReferences: [{apiVersion: phalanx.dev/v1alpha1, kind: TrainingJob, name: llama-pretrain-64, uid: $job_uid, controller: true}]" ||
  fail "cannot create rank 3's pod"
gpu_pod thief 2 "" || fail "cannot create the thief pod"
bound_to_rank_node() { [[ $(kc -n team-llm get pod llama-pretrain-64-3 -o jsonpath='{.spec.nodeName}') == "$(jq -r '.[3]' <<<"$NODES")" ]]; }
eventually 30 bound_to_rank_node && pass "the job's own rank-3 pod is bound to rank 3's reserved node" ||
  fail "llama-pretrain-64-3 is on '$(kc -n team-llm get pod llama-pretrain-64-3 -o jsonpath='{.spec.nodeName}')', reserved $(jq -r '.[3]' <<<"$NODES")"
thief_refused() {
  kc -n team-llm get pod thief -o json |
    jq -e --arg uid "$job_uid" '.spec.nodeName == null and ([.status.conditions[]? | select(.type == "PodScheduled" and .status == "False") | .message] | any(contains("phalanx: pod team-llm/thief carries phalanx.dev/job=llama-pretrain-64 but TrainingJob team-llm/llama-pretrain-64 (uid " + $uid + ") is not its controller")))' >/dev/null
}
eventually 30 thief_refused && pass "a pod with rank 2's labels but not owned by the job is refused every node, saying why" ||
  fail "thief: $(kc -n team-llm get pod thief -o json | jq -c '{node: .spec.nodeName, conditions: .status.conditions}')"
kc -n team-llm delete pod llama-pretrain-64-0 llama-pretrain-64-1 llama-pretrain-64-3 thief --grace-period=0 --force >/dev/null 2>&1
expect_ok "explain moe-gb200-tp16" explain moe-gb200-tp16 -n team-llm &&
  has 'Status:      none yet: phalanx-operator has not processed this job' &&
  has 'groups of 4 in one gpu.clique (nvidia.com/gpu.clique)' &&
  pass "explain: a job with no status says so; group topology is shown" ||
  { fail "explain moe-gb200-tp16"; echo "$out"; }

# --- 4. topology ----------------------------------------------------------------------------
summary='^16 nodes \(16 schedulable\), 0 pods, 1 reservation, free 64/128 GPUs$'
if expect_ok "topology" topology; then
  echo "$out"
  has_line "$summary" && has_line "^      layer-3 $DOMAIN +16 nodes +free 64/128 GPUs\$" &&
    pass "topology (from the API server): the reservation recorded in status.placement counts" ||
    fail "topology from the cluster"
fi
expect_ok "topology --server" topology --server "$SCHED" && has_line "$summary" &&
  has_line '^  layer-1 nn-[a-z0-9-]+ +16 nodes +free 64/128 GPUs$' &&
  pass "topology --server: the same tree from phalanx-scheduler's Snapshot RPC" ||
  { fail "topology --server"; echo "$out"; }
expect_ok "topology --nodes" topology --nodes && [[ $(grep -c '^        node p5-' <<<"$out") == 16 ]] &&
  has_line "^        node $(jq -r '.[0]' <<<"$NODES") +free 0/8 GPUs\$" &&
  pass "topology --nodes: 16 nodes under their layer-3 domain, the reserved ones with 0 free" ||
  { fail "topology --nodes"; echo "$out"; }
expect_ok "topology --nodes --server" topology --nodes --server "$SCHED" &&
  has_line "^levels: layer-1 > layer-2 > layer-3 > node \(phalanx-scheduler $SCHED's\)\$" &&
  [[ $(grep -c '^        node p5-' <<<"$out") == 16 ]] &&
  pass "topology --nodes --server: the tree from the cluster, the levels from phalanx-scheduler" ||
  { fail "topology --nodes --server"; echo "$out"; }
expect_ok "topology (levels)" topology && has_line '^levels: .* \(preset eks, the default\)$' &&
  pass "topology without a scheduler address: the eks preset, said to be the default" ||
  { fail "topology levels line"; echo "$out"; }
kp topology --topology gb200 --json
[[ $rc == 0 && $(jq -r '.levels | length' <<<"$out") == 4 && $(jq .freeGpus <<<"$out") == 64 ]] &&
  pass "topology --topology gb200 --json: levels from the NetworkTopology object" ||
  fail "topology --topology gb200: $out $err"

# --- 5. errors ------------------------------------------------------------------------------
expect_error "unknown flag" 2 'unknown flag --bogus' jobs --bogus
expect_error "bad --topology-preset" 2 'topology-preset: must be eks, eks-4layer or gb200, got "x"' topology --topology-preset x
expect_error "missing job" 1 '^phalanx explain: TrainingJob nope not found in namespace team-llm$' explain nope -n team-llm
expect_error "missing NetworkTopology object" 1 '^phalanx topology: NetworkTopology nope not found$' topology --topology nope
DEAD="$PHALANX_CLUSTER_DIR/unreachable.kubeconfig"
sed -E 's#server: https://127.0.0.1:[0-9]+#server: https://127.0.0.1:1#' "$KUBECONFIG" >"$DEAD"
expect_error "API server unreachable" 1 '^phalanx jobs: cannot reach the API server https://127.0.0.1:1' jobs --kubeconfig "$DEAD"
expect_error "scheduler unreachable" 1 '^phalanx topology: phalanx-scheduler 127.0.0.1:1: ' topology --server 127.0.0.1:1
kc delete crd clustertrainingqueues.phalanx.dev --wait=true >/dev/null || fail "cannot delete the ClusterTrainingQueue CRD"
eventually 30 bash -c '! kubectl get --raw /apis/phalanx.dev/v1alpha1 | grep -q "\"clustertrainingqueues\""'
expect_error "CRDs missing" 1 'does not serve clustertrainingqueues.phalanx.dev/v1alpha1: are the Phalanx CRDs installed' queues
finish

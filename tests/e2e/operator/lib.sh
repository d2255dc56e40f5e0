# Helpers for tests/e2e/operator/*_test.sh: a private Phalanx cluster with phalanx-operator
# (hack/phalanx-up.sh), TrainingJob accessors, and the cluster-wide admission invariant. Source it
# first thing, then start_cluster:
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#   start_cluster --nodes 8 --ttl 900
#   job team-a j1 2 && eventually 90 phase_is team-a j1 Running
#
# The cluster is stopped when the script exits. Needs hack/cluster/build.sh binaries and
# $PHALANX_BUILD_DIR (default build/) with phalanx-scheduler and phalanx-operator.
# shellcheck shell=bash
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
BUILD="${PHALANX_BUILD_DIR:-$REPO_ROOT/build}"
export PHALANX_BUILD_DIR="$BUILD"
[[ -x $BUILD/operator/phalanx-operator ]] || die "$BUILD/operator/phalanx-operator is not built"

# phalanx_up_private with phalanx-operator (hack/phalanx-up.sh ARGS); also sets OPLOG, the
# operator's log.
start_cluster() {
  phalanx_up_private op "$@"
  OPLOG="$PHALANX_CLUSTER_DIR/logs/phalanx-operator.log"
}

# The shipped priority classes, topologies, flavors, namespaces and queues (deploy/examples
# 00-05), and the namespaces' default service accounts (pods cannot be created before them).
apply_example_queues() {
  local f ns
  for f in 00-priorityclasses 01-networktopologies 02-nodeflavors 03-namespaces 04-clustertrainingqueues 05-trainingqueues; do
    kc apply -f "$REPO_ROOT/deploy/examples/$f.yaml" >/dev/null || die "cannot apply deploy/examples/$f.yaml"
  done
  for ns in team-llm team-vision team-research; do
    eventually 60 kc -n $ns get serviceaccount default || die "no default serviceaccount in $ns"
  done
}

# kwok fake GPU nodes (hack/cluster/fake-nodes.sh ARGS), and a wait until the node lifecycle
# controller has taken its node.kubernetes.io/* taints off every node: a new node carries
# not-ready until it is seen Ready, and nothing tolerates that.
lifecycle_taints() {
  kc get nodes -o jsonpath='{range .items[*]}{range .spec.taints[*]}{.key}{"\n"}{end}{end}' | grep -c '^node.kubernetes.io/' || true
}
no_lifecycle_taints() { [[ $(lifecycle_taints) == 0 ]]; }
add_fake_nodes() { # fake-nodes.sh args...
  "$REPO_ROOT/hack/cluster/fake-nodes.sh" "$@" >/dev/null || die "cannot create the fake nodes ($*)"
  eventually 120 no_lifecycle_taints || die "fake nodes still carry node lifecycle taints: $(lifecycle_taints)"
}

# A namespace whose TrainingQueue `training` feeds ClusterTrainingQueue $2.
team() { # namespace cluster-queue
  kc apply -f - >/dev/null <<YAML || return 1
apiVersion: v1
kind: Namespace
metadata: {name: $1}
---
apiVersion: phalanx.dev/v1alpha1
kind: TrainingQueue
metadata: {name: training, namespace: $1}
spec: {clusterQueue: $2}
YAML
  eventually 60 kc -n "$1" get serviceaccount default
}

# A NodeFlavor of the p5.48xlarge nodes, a ClusterTrainingQueue with `gpus` of quota in it and no
# locality wait, and a team namespace (team) on it.
one_queue() { # ns flavor cluster-queue gpus
  kc apply -f - >/dev/null <<YAML || die "cannot create the queues"
apiVersion: phalanx.dev/v1alpha1
kind: NodeFlavor
metadata: {name: $2}
spec:
  nodeLabels: {node.kubernetes.io/instance-type: p5.48xlarge}
---
apiVersion: phalanx.dev/v1alpha1
kind: ClusterTrainingQueue
metadata: {name: $3}
spec:
  namespaceSelector: {}
  localityWaitSeconds: 0
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: $2
      resources:
      - {name: nvidia.com/gpu, nominalQuota: $4}
YAML
  team "$1" "$3" >/dev/null || die "cannot create namespace $1 and its TrainingQueue"
}

# A ResourceQuota of the namespace with these hard limits (a YAML flow map).
resource_quota() { # ns name hard
  kc -n "$1" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: ResourceQuota
metadata: {name: $2}
spec: {hard: $3}
YAML
}

# A ResourceQuota of the namespace allowing no pod of PriorityClass `class`: Kubernetes' way to
# forbid a namespace the class.
class_forbidden_quota() { # ns name class
  kc -n "$1" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: ResourceQuota
metadata: {name: $2}
spec:
  hard: {pods: "0"}
  scopeSelector: {matchExpressions: [{scopeName: PriorityClass, operator: In, values: [$3]}]}
YAML
}

jq_job() { kc -n "$1" get trainingjob "$2" -o json | jq -r "$3"; }
phase() { jq_job "$1" "$2" '.status.phase // ""'; }
phase_is() { [[ $(phase "$1" "$2") == "$3" ]]; }
# "<status> <reason>: <message>" of condition $3, empty when the job has none.
cond() { jq_job "$1" "$2" ".status.conditions[]? | select(.type==\"$3\") | \"\\(.status) \\(.reason): \\(.message)\""; }
has_reason() { [[ $(cond "$1" "$2" Queued) == "True $3:"* ]]; }
pods_of() { kc -n "$1" get pods -l "phalanx.dev/job=$2" -o json; }
npods() { pods_of "$1" "$2" | jq '[.items[] | select(.metadata.deletionTimestamp == null)] | length'; }
npods_is() { [[ $(npods "$1" "$2") == "$3" ]]; }
all_running() { [[ $(pods_of "$1" "$2" | jq "[.items[] | select(.status.phase==\"Running\")] | length") == "$3" ]]; }
set_pod_phase() { # ns pod phase
  kc -n "$1" patch pod "$2" --subresource=status --type=merge -p "{\"status\":{\"phase\":\"$3\"}}" >/dev/null
}
# Whether the job has an event with this reason.
has_event() { # ns job reason
  kc -n "$1" get events --field-selector "involvedObject.name=$2" -o jsonpath='{.items[*].reason}' | grep -qw "$3"
}
# How often the job's events of `reason` were recorded: their counts added up (a repeat of the
# same message bumps the count of one Event).
event_count() { # ns job reason
  kc -n "$1" get events --field-selector "involvedObject.name=$2,reason=$3" -o json | jq '[.items[].count // 1] | add // 0'
}

# A TrainingJob of `replicas` pods x 8 GPUs in the namespace's TrainingQueue `training`; topology
# by default: required one layer-2 domain, preferred one layer-3 block. JOB_AS=USER applies it as
# that user (kubectl --as), e.g. a tenant's ServiceAccount.
job() { # ns name replicas [topology] [extra spec yaml, indented 2] [extra pod spec yaml, indented 6]
  kc -n "$1" apply ${JOB_AS:+--as="$JOB_AS"} -f - >/dev/null <<YAML
apiVersion: phalanx.dev/v1alpha1
kind: TrainingJob
metadata: {name: $2}
spec:
  queueName: training
  replicas: $3
  topology: ${4:-{required: topology.k8s.aws/network-node-layer-2, preferred: topology.k8s.aws/network-node-layer-3\}}
${5:-}
  template:
    spec:
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
${6:-}
      containers:
      - name: trainer
        image: registry.example/trainer:1
        resources: {limits: {nvidia.com/gpu: 8}}
YAML
}

# Invariant over the whole cluster: each admitted, unfinished job has exactly status.admission
# .replicas nodes in status.placement and at most that many live pods, rank r on
# status.placement.nodes[r]; a job that is not admitted has no live pods; no node holds more GPUs
# than it has. Prints what is broken.
check_invariants() {
  local d="$PHALANX_CLUSTER_DIR/invariants"
  mkdir -p "$d"
  kc get trainingjobs -A -o json >"$d/jobs.json" && kc get pods -A -l phalanx.dev/job -o json >"$d/pods.json" &&
    kc get nodes -o json >"$d/nodes.json" || { echo "cannot read the cluster"; return 1; }
  python3 - "$d/jobs.json" "$d/pods.json" "$d/nodes.json" <<'PY'
import json, sys
jobs, pods, nodes = (json.load(open(a)) for a in sys.argv[1:4])
bad = []
live = [p for p in pods["items"] if p["metadata"].get("deletionTimestamp") is None
        and p["status"].get("phase") not in ("Succeeded", "Failed")]
for j in jobs["items"]:
    st = j.get("status", {}); ns = j["metadata"]["namespace"]; name = j["metadata"]["name"]
    mine = [p for p in live if p["metadata"]["namespace"] == ns and p["metadata"]["labels"].get("phalanx.dev/job") == name]
    if st.get("phase") in ("Succeeded", "Failed") or "admission" not in st:
        if mine and st.get("phase") not in ("Succeeded", "Failed"):
            # pods of a job that is not admitted may only be on their way out
            bad.append("%s/%s: not admitted but %d live pods" % (ns, name, len(mine)))
        continue
    want = st["admission"]["replicas"]; placed = st.get("placement", {}).get("nodes", [])
    if len(placed) != want:
        bad.append("%s/%s: admitted %d but placement lists %d nodes" % (ns, name, want, len(placed)))
    if len(mine) > want:
        bad.append("%s/%s: %d live pods for %d admitted" % (ns, name, len(mine), want))
    for p in mine:
        r = int(p["metadata"]["labels"]["phalanx.dev/rank"]); node = p["spec"].get("nodeName")
        if node and r < len(placed) and node != placed[r]:
            bad.append("%s/%s rank %d on %s, placement says %s" % (ns, name, r, node, placed[r]))
gpus = {n["metadata"]["name"]: int(n["status"]["allocatable"].get("nvidia.com/gpu", "0")) for n in nodes["items"]}
used = {}
for p in live:
    node = p["spec"].get("nodeName")
    if not node: continue
    for c in p["spec"]["containers"]:
        used[node] = used.get(node, 0) + int(c.get("resources", {}).get("limits", {}).get("nvidia.com/gpu", "0"))
for node, n in used.items():
    if n > gpus.get(node, 0):
        bad.append("node %s: %d GPUs bound, %d allocatable" % (node, n, gpus.get(node, 0)))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}

#!/usr/bin/env bash
# Every manifest in tests/e2e/cluster/invalid/ is rejected by the API server (schema, enum
# and CEL x-kubernetes-validations of crds/) with a message naming the offending field:
# each "# expect: TEXT" line of the file must appear in kubectl's error output.
# Plus: valid controls are accepted, and update-time rules (immutable TrainingQueue
# spec.clusterQueue; TrainingJob spec.queueName, template, replicas, elastic, topology,
# priorityClassName and activeDeadlineSeconds fixed while admitted) are enforced.
# Needs PHALANX_KUBECONFIG (a cluster from hack/cluster/up.sh).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_cluster
install_crds || finish

NS=phalanx-e2e-invalid-$$
kc create namespace "$NS" >/dev/null 2>&1 || die "cannot create namespace $NS"
cleanup() { kc delete namespace "$NS" --wait=false >/dev/null 2>&1 || true; }
trap cleanup EXIT

# Valid controls: the same shapes the invalid cases mutate must be accepted.
valid_tj() { # name [extra spec yaml]
  cat <<YAML
apiVersion: phalanx.dev/v1alpha1
kind: TrainingJob
metadata: {name: $1, namespace: $NS}
spec:
  queueName: training
  replicas: 8
  elastic: {minReplicas: 4, maxReplicas: 16, step: 4}
  topology: {required: topology.k8s.aws/network-node-layer-2, groupSize: 4, groupLevel: nvidia.com/gpu.clique}
  activeDeadlineSeconds: 86400
  template:
    spec:
      containers: [{name: trainer, image: busybox, resources: {limits: {nvidia.com/gpu: 8}}}]
YAML
}
if out=$(valid_tj control | kc apply --server-side --dry-run=server --field-manager=phalanx-e2e -f - 2>&1); then
  pass "valid TrainingJob control accepted"
else
  fail "valid TrainingJob control rejected: $out"
fi
if out=$(kc apply --server-side --dry-run=server --field-manager=phalanx-e2e -f - 2>&1 <<YAML
apiVersion: phalanx.dev/v1alpha1
kind: ClusterTrainingQueue
metadata: {name: phalanx-e2e-control}
spec:
  cohort: fleet
  resourceGroups:
  - coveredResources: [nvidia.com/gpu, cpu]
    flavors:
    - name: p5
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 64, borrowingLimit: 16, lendingLimit: 32}
      - {name: cpu, nominalQuota: "1536", lendingLimit: 1k}
  preemption: {reclaimWithinCohort: Any, borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 100}}
YAML
); then
  pass "valid ClusterTrainingQueue control accepted"
else
  fail "valid ClusterTrainingQueue control rejected: $out"
fi

shopt -s nullglob
files=("$E2E_DIR"/invalid/*.yaml)
[[ ${#files[@]} -gt 0 ]] || die "no manifests in $E2E_DIR/invalid"
for f in "${files[@]}"; do
  name=$(basename "$f" .yaml)
  mapfile -t expects < <(sed -n 's/^# expect: //p' "$f")
  if [[ ${#expects[@]} == 0 ]]; then fail "$name: no '# expect:' line"; continue; fi
  # namespaced cases are written for "default"; run them in the test namespace
  if out=$(sed "s/^  namespace: default$/  namespace: $NS/" "$f" |
      kc apply --server-side --dry-run=server --field-manager=phalanx-e2e -f - 2>&1); then
    fail "$name: was accepted, expected rejection"
    continue
  fi
  missing=()
  for e in "${expects[@]}"; do [[ $out == *"$e"* ]] || missing+=("$e"); done
  if [[ ${#missing[@]} == 0 ]]; then
    pass "$name rejected: $(echo "$out" | tr '\n' ' ' | cut -c1-220)"
  else
    fail "$name rejected but the message lacks [${missing[*]}]: $out"
  fi
done

# --- update-time (transition) rules, on real objects
if kc apply --server-side --field-manager=phalanx-e2e -f - >/dev/null 2>&1 <<YAML
apiVersion: phalanx.dev/v1alpha1
kind: TrainingQueue
metadata: {name: training, namespace: $NS}
spec: {clusterQueue: team-a}
YAML
then
  if out=$(kc -n "$NS" patch tq training --type=merge -p '{"spec":{"clusterQueue":"team-b"}}' 2>&1); then
    fail "TrainingQueue spec.clusterQueue changed, expected immutable"
  elif [[ $out == *"spec.clusterQueue is immutable"* ]]; then
    pass "TrainingQueue spec.clusterQueue is immutable"
  else
    fail "TrainingQueue spec.clusterQueue update rejected with unexpected message: $out"
  fi
else
  fail "could not create TrainingQueue for the immutability check"
fi

if valid_tj tj-queue | kc apply --server-side --field-manager=phalanx-e2e -f - >/dev/null 2>&1; then
  if out=$(kc -n "$NS" patch tj tj-queue --type=merge -p '{"spec":{"queueName":"other"}}' 2>&1); then
    pass "TrainingJob spec.queueName may change while not admitted"
  else
    fail "TrainingJob spec.queueName change rejected before admission: $out"
  fi
  kc -n "$NS" patch tj tj-queue --subresource=status --type=merge \
    -p '{"status":{"admission":{"clusterQueue":"team-a","flavor":"p5","replicas":8}}}' >/dev/null 2>&1 ||
    fail "could not set status.admission"
  # An update of admitted tj-queue the API server must refuse with MESSAGE.
  refused_while_admitted() { # what message patch-args...
    local what=$1 message=$2 out
    shift 2
    if out=$(kc -n "$NS" patch tj tj-queue "$@" 2>&1); then
      fail "TrainingJob: $what was accepted while admitted"
    elif [[ $out == *"$message"* ]]; then
      pass "TrainingJob: $what is refused while admitted"
    else
      fail "TrainingJob: $what refused with an unexpected message: $out"
    fi
  }
  # The field path, not "<nil>: Invalid value: \"object\"", leads the message.
  refused_while_admitted "a change of spec.queueName" \
    'spec.queueName: Forbidden: spec.queueName cannot change while the job is admitted' \
    --type=merge -p '{"spec":{"queueName":"training"}}'
  # The gang was admitted, placed and started from these (quota from the template, ranks'
  # rendezvous from the elastic range, pods' priority from the class).
  refused_while_admitted "a change of spec.template" \
    'spec.template: Forbidden: spec.template cannot change while the job is admitted' \
    --type=json -p '[{"op":"replace","path":"/spec/template/spec/containers/0/resources/limits/nvidia.com~1gpu","value":2}]'
  refused_while_admitted "a new field in spec.template" \
    'spec.template cannot change while the job is admitted' \
    --type=merge -p '{"spec":{"template":{"spec":{"nodeSelector":{"example.com/pool":"b"}}}}}'
  refused_while_admitted "a change of spec.replicas" \
    'spec.replicas: Forbidden: spec.replicas cannot change while the job is admitted' \
    --type=merge -p '{"spec":{"replicas":12}}'
  refused_while_admitted "a change of spec.elastic" \
    'spec.elastic: Forbidden: spec.elastic cannot change while the job is admitted' \
    --type=merge -p '{"spec":{"elastic":{"maxReplicas":8}}}'
  refused_while_admitted "removing spec.elastic" \
    'spec.elastic cannot change while the job is admitted' \
    --type=json -p '[{"op":"remove","path":"/spec/elastic"}]'
  refused_while_admitted "a change of spec.topology" \
    'spec.topology: Forbidden: spec.topology cannot change while the job is admitted' \
    --type=merge -p '{"spec":{"topology":{"required":"topology.k8s.aws/network-node-layer-1"}}}'
  refused_while_admitted "setting spec.priorityClassName" \
    'spec.priorityClassName: Forbidden: spec.priorityClassName cannot change while the job is admitted' \
    --type=merge -p '{"spec":{"priorityClassName":"training-critical"}}'
  # What the operator reads every cycle may change: priority for the next preemption decision,
  # the restart budget, labels.
  if out=$(kc -n "$NS" patch tj tj-queue --type=merge -p '{"spec":{"priority":5,"failurePolicy":{"maxRestarts":1}},"metadata":{"labels":{"team":"x"}}}' 2>&1); then
    pass "admitted TrainingJob: spec.priority, spec.failurePolicy and labels may change"
  else
    fail "admitted TrainingJob: a change of spec.priority, failurePolicy or labels was refused: $out"
  fi
  # Backfill trusts it as the run-time limit (docs/admission.md).
  refused_while_admitted "a change of spec.activeDeadlineSeconds" \
    "spec.activeDeadlineSeconds cannot change while the job is admitted" \
    --type=merge -p '{"spec":{"activeDeadlineSeconds":90000}}'
  refused_while_admitted "removing spec.activeDeadlineSeconds" \
    "spec.activeDeadlineSeconds cannot change while the job is admitted" \
    --type=json -p '[{"op":"remove","path":"/spec/activeDeadlineSeconds"}]'
  if out=$(kc -n "$NS" patch tj tj-queue --type=merge -p '{"spec":{"suspend":true}}' 2>&1); then
    pass "admitted TrainingJob can still be suspended"
  else
    fail "suspending an admitted TrainingJob was rejected: $out"
  fi
else
  fail "could not create TrainingJob for the transition checks"
fi
finish

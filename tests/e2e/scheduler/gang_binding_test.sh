#!/usr/bin/env bash
# phalanx-scheduler on a real control plane (hack/phalanx-up.sh: kube-apiserver, etcd, kwok fake
# nodes, a real kube-scheduler whose `phalanx` profile calls our extender, and phalanx-scheduler
# from build/), on a private cluster so it can run beside the other e2e tests. It checks what
# issue #10 promises a user:
#   1. a gang reserved through the Placement gRPC API: its pods are bound by kube-scheduler to
#      exactly the reserved nodes, rank by rank;
#   2. pods of a gang with no reservation stay Pending, and `kubectl describe` shows our reason;
#   3. a second gang cannot take a reserved node;
#   4. with phalanx-scheduler down, nothing is bound anywhere (the extender is not ignorable);
#   5. after `kill -9` and a restart, reservations are rebuilt from TrainingJob status.placement
#      and binding continues where it stopped.
# Needs hack/cluster/build.sh binaries and build/ (phalanx-scheduler, phalanx).
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
BUILD="${PHALANX_BUILD_DIR:-$REPO_ROOT/build}"
PHALANX="$BUILD/cli/phalanx"
[[ -x $PHALANX ]] || die "$PHALANX is not built"

L3=topology.k8s.aws/network-node-layer-3
phalanx_up_private sched --nodes 32 --ttl 1200 --no-operator
[[ $PHALANX_KUBECONFIG == "$PHALANX_CLUSTER_DIR/kubeconfig" ]] || die "phalanx-up.sh's last line '$PHALANX_KUBECONFIG' is not the kubeconfig"
[[ -n ${PHALANX_SCHEDULER_GRPC:-} ]] || die "env lacks PHALANX_SCHEDULER_GRPC"
place() { "$PHALANX" placement "$@" --server "$PHALANX_SCHEDULER_GRPC"; }
NS=e2e
kc create namespace $NS >/dev/null || die "cannot create namespace $NS"
eventually 60 kc -n $NS get serviceaccount default || die "no default serviceaccount in $NS"

# A TrainingJob object per gang (the scheduler rebuilds reservations from its status).
job() { # name replicas
  kc -n $NS apply -f - >/dev/null <<YAML
apiVersion: phalanx.dev/v1alpha1
kind: TrainingJob
metadata: {name: $1}
spec:
  queueName: default
  replicas: $2
  topology: {required: $L3}
  template:
    spec:
      containers:
      - name: trainer
        image: registry.example/trainer:1
        resources: {limits: {nvidia.com/gpu: 8}}
YAML
}
# Writes status.admission and status.placement as phalanx-operator does after a reservation.
record_status() { # name nodes-json-array
  local n; n=$(jq length <<<"$2")
  kc -n $NS patch trainingjob "$1" --subresource=status --type=merge \
    -p "{\"status\":{\"phase\":\"Admitted\",\"admission\":{\"clusterQueue\":\"cq\",\"flavor\":\"p5\",\"replicas\":$n},\"placement\":{\"level\":\"$L3\",\"domain\":\"x\",\"nodes\":$2}}}" >/dev/null
}
# A gang pod of `job` and `rank`, as phalanx-operator creates them: owned by the TrainingJob
# (the extender binds a known job's reservation only to pods it controls).
gang_pod() { # job rank
  local uid; uid=$(kc -n $NS get trainingjob "$1" -o jsonpath='{.metadata.uid}')
  kc -n $NS apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1-$2
  labels: {phalanx.dev/job: $1, phalanx.dev/rank: "$2"}
  ownerReferences: [{apiVersion: phalanx.dev/v1alpha1, kind: TrainingJob, name: $1, uid: "$uid", controller: true}]
spec:
  schedulerName: phalanx
  containers:
  - name: trainer
    image: registry.example/trainer:1
    resources: {limits: {nvidia.com/gpu: 8}}
YAML
}
node_of() { kc -n $NS get pod "$1" -o jsonpath='{.spec.nodeName}' 2>/dev/null; }
bound() { [[ -n $(node_of "$1") ]]; }

# --- 1. a reserved gang binds rank by rank -------------------------------------------------
job gang-a 16
out=$(place reserve --job $NS/gang-a --count 16 --gpus 8 --required $L3 --json) || die "reserve gang-a failed: $out"
[[ $(jq -r .placed <<<"$out") == true ]] || die "gang-a not placed: $out"
A_NODES=$(jq -c .nodes <<<"$out")
[[ $(jq length <<<"$A_NODES") == 16 && $(jq -r '.nodes|unique|length' <<<"$out") == 16 ]] &&
  pass "gang-a reserved on 16 distinct nodes in $(jq -r .domain <<<"$out")" || fail "gang-a reservation: $out"
record_status gang-a "$A_NODES" || fail "cannot write gang-a status"
# Ranks 0..7 now (in reverse, so binding order cannot explain a match); 8..15 after the restart.
for r in 7 6 5 4 3 2 1 0; do gang_pod gang-a $r || fail "cannot create gang-a-$r"; done
for r in 0 1 2 3 4 5 6 7; do eventually 60 bound gang-a-$r || fail "gang-a-$r not bound within 60s"; done
wrong=0
for r in 0 1 2 3 4 5 6 7; do
  want=$(jq -r ".[$r]" <<<"$A_NODES"); got=$(node_of gang-a-$r)
  [[ $got == "$want" ]] || { wrong=$((wrong + 1)); echo "  rank $r: bound to $got, reserved $want"; }
done
[[ $wrong == 0 ]] && pass "ranks 0-7 of gang-a bound by kube-scheduler to exactly their reserved nodes" ||
  fail "$wrong of ranks 0-7 bound elsewhere than reserved"

# --- 2. no reservation: Pending with our reason --------------------------------------------
job gang-b 2
gang_pod gang-b 0
reason_seen() { kc -n $NS get events --field-selector involvedObject.name=gang-b-0 -o jsonpath='{range .items[*]}{.message}{"\n"}{end}' | grep -q "holds no reservation"; }
if eventually 60 reason_seen; then
  pass "gang-b-0 (no reservation) has a FailedScheduling event naming the missing reservation"
else
  fail "gang-b-0 has no event with our reason: $(kc -n $NS get events --field-selector involvedObject.name=gang-b-0 -o jsonpath='{.items[*].message}')"
fi
[[ -z $(node_of gang-b-0) ]] && pass "gang-b-0 stays Pending" || fail "gang-b-0 was bound to $(node_of gang-b-0) without a reservation"

# --- 3. a second gang cannot take a reserved node ------------------------------------------
job gang-c 16
out=$(place reserve --job $NS/gang-c --count 16 --gpus 8 --required $L3 --json) || die "reserve gang-c failed: $out"
C_NODES=$(jq -c .nodes <<<"$out")
overlap=$(jq -n --argjson a "$A_NODES" --argjson c "$C_NODES" '[$a[] as $x | $c[] | select(. == $x)] | length')
[[ $(jq -r .placed <<<"$out") == true && $overlap == 0 ]] && pass "gang-c got the other 16 nodes, none of gang-a's" ||
  fail "gang-c: $out (overlap with gang-a: $overlap)"
record_status gang-c "$C_NODES" || fail "cannot write gang-c status"
out=$(place reserve --job $NS/gang-d --count 1 --gpus 8 --json) || die "reserve gang-d failed: $out"
[[ $(jq -r .placed <<<"$out") == false ]] && pass "a third gang finds no free node: $(jq -r .summary <<<"$out")" ||
  fail "gang-d was placed on a reserved node: $out"
# A gang pod cannot bind onto another gang's reserved node either: rank 0 of gang-d has none.
job gang-d 1
gang_pod gang-d 0
sleep 5
[[ -z $(node_of gang-d-0) ]] && pass "gang-d-0 is not bound onto a node reserved for gang-a or gang-c" ||
  fail "gang-d-0 was bound to $(node_of gang-d-0)"

# --- 4 + 5. kill -9, nothing binds while down, restart rebuilds, binding continues ----------
read -r spid _ <<<"$(awk '$1=="phalanx-scheduler" {print $2, $3}' "$PHALANX_CLUSTER_DIR/pids")"
kill -KILL "$spid" || die "cannot kill phalanx-scheduler (pid $spid)"
pass "phalanx-scheduler killed with SIGKILL (pid $spid)"
for r in 8 9 10 11 12 13 14 15; do gang_pod gang-a $r; done
# A plain GPU pod of the default profile goes through the shared extender too.
kc -n $NS apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: plain-gpu}
spec:
  containers:
  - name: c
    image: registry.example/c:1
    resources: {limits: {nvidia.com/gpu: 1}}
YAML
sleep 15
any=0
for p in gang-a-8 gang-a-9 gang-a-10 gang-a-11 gang-a-12 gang-a-13 gang-a-14 gang-a-15 plain-gpu; do
  bound $p && { any=1; echo "  $p bound to $(node_of $p) while phalanx-scheduler was down"; }
done
[[ $any == 0 ]] && pass "with phalanx-scheduler down for 15s, no GPU pod was bound anywhere" ||
  fail "pods were bound while phalanx-scheduler was down"
kc -n $NS delete pod plain-gpu --wait=false >/dev/null
out=$("$REPO_ROOT/hack/cluster/restart.sh" phalanx-scheduler 2>&1) || die "phalanx-scheduler did not come back: $out"
pass "phalanx-scheduler restarted and ready"
snap=$(place snapshot --json) || fail "snapshot after restart: $snap"
[[ $(jq -r .reservations <<<"$snap") == 2 ]] && pass "after the restart it holds 2 reservations again (gang-a, gang-c)" ||
  fail "after the restart: $snap"
out=$(place reserve --job $NS/gang-e --count 1 --gpus 8 --json)
[[ $(jq -r .placed <<<"$out") == false ]] && pass "after the restart no reserved node is handed out again" ||
  fail "after the restart gang-e was placed on a reserved node: $out"
for r in 8 9 10 11 12 13 14 15; do eventually 90 bound gang-a-$r || fail "gang-a-$r not bound within 90s of the restart"; done
wrong=0
for r in $(seq 0 15); do
  want=$(jq -r ".[$r]" <<<"$A_NODES"); got=$(node_of gang-a-$r)
  [[ $got == "$want" ]] || { wrong=$((wrong + 1)); echo "  rank $r: on '$got', reserved $want"; }
done
[[ $wrong == 0 ]] && pass "all 16 ranks of gang-a on their reserved nodes, in rank order, across the restart" ||
  fail "$wrong ranks of gang-a off their reserved nodes"
[[ -z $(node_of gang-b-0) && -z $(node_of gang-d-0) ]] && pass "unreserved gangs still Pending after the restart" ||
  fail "an unreserved gang pod was bound after the restart"

# --- metrics --------------------------------------------------------------------------------
m=$(curl -sf "http://127.0.0.1:$PHALANX_SCHEDULER_HEALTH_PORT/metrics") || fail "no /metrics"
grep -q '^phalanx_extender_requests_total{verb="filter",outcome="pinned"} [1-9]' <<<"$m" &&
  grep -q '^phalanx_extender_request_duration_seconds_count{verb="bind"} [1-9]' <<<"$m" &&
  grep -q '^phalanx_reservations 2$' <<<"$m" &&
  pass "/metrics counts pinned filters, bind latency and 2 reservations" ||
  fail "/metrics lacks the expected series: $(grep -E '^phalanx_(extender|reservations)' <<<"$m" | head -20)"

# --- SIGTERM drains and exits ------------------------------------------------------------------
read -r spid _ <<<"$(awk '$1=="phalanx-scheduler" {print $2, $3}' "$PHALANX_CLUSTER_DIR/pids")"
kill -TERM "$spid"
gone() { [[ ! -d /proc/$spid ]] || [[ $(awk '{print $3}' "/proc/$spid/stat" 2>/dev/null) == Z ]]; }
if eventually 30 gone; then
  grep -q "received SIGTERM: draining" "$PHALANX_CLUSTER_DIR/logs/phalanx-scheduler.log" &&
    grep -q "phalanx-scheduler stopped" "$PHALANX_CLUSTER_DIR/logs/phalanx-scheduler.log" &&
    pass "SIGTERM: phalanx-scheduler drained and stopped" ||
    fail "SIGTERM: no drain/stop lines in the log: $(tail -5 "$PHALANX_CLUSTER_DIR/logs/phalanx-scheduler.log")"
else
  fail "phalanx-scheduler still running 30s after SIGTERM"
fi
finish

#!/usr/bin/env bash
# The Helm chart on a private local control plane (hack/phalanx-up.sh --chart: `helm install`
# of charts/phalanx, then phalanx-scheduler, kube-scheduler and phalanx-operator run out of
# cluster, each with its chart ServiceAccount's token and its chart Deployment's flags; the
# chart's own pods stay Pending, kwok runs no containers). What issue #14 promises:
#   1. the install, on a control plane that already serves Kueue's kinds (our fixture
#      tests/e2e/cluster/testdata/kueue-crds.yaml): CRDs kept on uninstall, Kueue's left alone,
#      each binary acting as its ServiceAccount (both Leases taken in the release namespace), and
#      those accounts denied what they do not need;
#   2. the gang scenario through the chart's RBAC: the 64-GPU example job admitted, its 8 pods
#      bound rank by rank to status.placement inside one layer-3 block, Running;
#   2b. tenants (docs/security.md): the chart's tenant roles reach the built-in edit and view by
#      aggregation; a tenant bound to edit submits and deletes a TrainingJob but may not patch its
#      status (RBAC), and an account whose Role does cover trainingjobs/status, or the cluster
#      admin, is refused by the chart's ValidatingAdmissionPolicy, while the operator's own status
#      writes pass;
#   3. a verb removed from the operator's ClusterRole (create pods) makes it fail loudly: an
#      error log line naming the forbidden request, a Warning event Forbidden on the job, and
#      the admitted job gets no pods;
#      With OwnerReferencesPermissionEnforcement on, update on trainingjobs/finalizers is needed
#      too (the pods block their job's deletion): without it the pods are refused;
#   4. `helm upgrade` to a chart whose TrainingJob CRD changed, with a changed value, updates the
#      CRD in place and restores the role, and the blocked jobs then run; an upgrade of a release
#      without the viewer Secret has NOTES saying how to get one;
#      the running job's pods keep their UIDs and nodes, also across restarts of both binaries;
#      phalanx-scheduler replaced alone while a job arrives: the operator's TLS channel reaches
#      the new one and the job runs;
#   5. `helm uninstall` leaves the CRDs, the TrainingJobs and their pods, and takes the roles and
#      the policy;
#   and the Placement API runs with the chart's mutual TLS: the operator reserves over it, a
#   plain-text client and a client without a certificate are refused, the CLI with the
#   operator's certificate is served, helm upgrade keeps the generated certificates, and each
#   binary's phalanx_tls_certificate_expiry_timestamp_seconds is its certificate's notAfter.
# The operator -> scheduler gRPC through the chart's Service is not exercised (no pod networking
# on kwok); the out-of-cluster operator calls phalanx-scheduler on 127.0.0.1, expecting the
# Service's name in its certificate (--placement-tls-server-name).
# Needs hack/cluster/build.sh binaries (helm included) and build/ (phalanx-scheduler,
# phalanx-operator).
source "$(dirname "${BASH_SOURCE[0]}")/../operator/lib.sh"
source "$REPO_ROOT/hack/cluster/lib.sh"
HELM=$(phx_bin helm)
[[ -x $HELM ]] || die "helm $(phx_version helm) is not built at $HELM; run hack/cluster/build.sh"
NS=phalanx-system
OP_SA=system:serviceaccount:$NS:phalanx-operator
SCHED_SA=system:serviceaccount:$NS:phalanx-scheduler
helm_() { "$HELM" --kubeconfig "$PHALANX_KUBECONFIG" -n $NS "$@"; }

KUEUE_CRDS="$REPO_ROOT/tests/e2e/cluster/testdata/kueue-crds.yaml"
[[ -f $KUEUE_CRDS ]] || die "missing $KUEUE_CRDS"
# As hardened clusters do: creating an object that blocks its owner's deletion needs update on the
# owner's finalizers (the operator's pods name their TrainingJob with blockOwnerDeletion).
export PHALANX_ADMISSION_PLUGINS=OwnerReferencesPermissionEnforcement
start_cluster --chart --pre-apply "$KUEUE_CRDS" --nodes 16 --ttl 900
kueue_crds() { kc get crd -o json | jq -r '[.items[] | select(.spec.group == "kueue.x-k8s.io") | "\(.metadata.name)=\(.metadata.uid)=\(.metadata.labels["app.kubernetes.io/managed-by"] // "")"] | sort | join(" ")'; }
kueue_before=$(kueue_crds)
SCHEDLOG="$PHALANX_CLUSTER_DIR/logs/phalanx-scheduler.log"
KSLOG="$PHALANX_CLUSTER_DIR/logs/kube-scheduler.log"

# --- 1. the install ------------------------------------------------------------------------
[[ $(helm_ status phalanx -o json | jq -r .info.status) == deployed ]] && pass "helm install: release phalanx deployed in $NS" ||
  fail "release status: $(helm_ status phalanx 2>&1 | head -3)"
kept=$(kc get crd -l app.kubernetes.io/instance=phalanx -o json | jq '[.items[] | select(.metadata.annotations["helm.sh/resource-policy"] == "keep")] | length')
ncrds=$(ls "$REPO_ROOT"/crds/*.yaml | wc -l)
[[ $kept == "$ncrds" ]] && pass "the chart installed all $ncrds CRDs with helm.sh/resource-policy: keep" || fail "$kept of $ncrds CRDs kept"
[[ -n $kueue_before && $(kc get clusterqueues.kueue.x-k8s.io -A 2>&1) != *error* ]] &&
  [[ $(kc api-resources --api-group=phalanx.dev -o name | sort | tr '\n' ' ') == "clustertrainingqueues.phalanx.dev networktopologies.phalanx.dev nodeflavors.phalanx.dev trainingjobs.phalanx.dev trainingqueues.phalanx.dev " ]] &&
  pass "installed beside Kueue's $(wc -w <<<"$kueue_before") CRDs: both groups served" ||
  fail "beside Kueue: kueue CRDs '$kueue_before', phalanx.dev resources '$(kc api-resources --api-group=phalanx.dev -o name | tr '\n' ' ')'"
grep -q -- "--kubeconfig $PHALANX_CLUSTER_DIR/phalanx-operator-sa.kubeconfig" "$PHALANX_CLUSTER_DIR/run/phalanx-operator.sh" &&
  grep -q -- "--lease-namespace=$NS" "$PHALANX_CLUSTER_DIR/run/phalanx-operator.sh" &&
  pass "phalanx-operator runs with the operator ServiceAccount's token and the chart's flags: $(sed -n 's/.*phalanx-operator //p' "$PHALANX_CLUSTER_DIR/run/phalanx-operator.sh" | cut -c1-200)" ||
  fail "phalanx-operator's command line: $(tail -1 "$PHALANX_CLUSTER_DIR/run/phalanx-operator.sh")"
holder=$(kc -n $NS get lease phalanx-operator -o jsonpath='{.spec.holderIdentity}' 2>&1)
[[ -n $holder ]] && pass "phalanx-operator took the chart's Lease $NS/phalanx-operator ($holder)" || fail "no holder of $NS/phalanx-operator: $holder"
eventually 60 bash -c "[[ -n \$(kubectl --kubeconfig=$PHALANX_KUBECONFIG -n $NS get lease phalanx-kube-scheduler -o jsonpath='{.spec.holderIdentity}') ]]" &&
  pass "kube-scheduler (scheduler ServiceAccount) leads on its own Lease $NS/phalanx-kube-scheduler" ||
  fail "kube-scheduler holds no Lease $NS/phalanx-kube-scheduler: $(grep -i 'forbidden\|error' "$KSLOG" | tail -3)"
can() { kc auth can-i --as="$@" 2>/dev/null; }
denied=0
while read -r probe; do
  # shellcheck disable=SC2086
  if [[ $(can $probe) == yes ]]; then fail "allowed but not needed: $probe"; denied=1; fi
done <<PROBES
$OP_SA get secrets -A
$OP_SA create nodes
$OP_SA update pods -A
$OP_SA create pods --subresource=binding -A
$OP_SA delete clustertrainingqueues.phalanx.dev
$OP_SA update leases -n kube-system
$SCHED_SA create pods -A
$SCHED_SA patch trainingjobs.phalanx.dev -A
$SCHED_SA get secrets -A
$SCHED_SA delete pods -A
$SCHED_SA update leases.coordination.k8s.io/kube-scheduler -n kube-system
$SCHED_SA create leasecandidates.coordination.k8s.io -n kube-system
PROBES
[[ $denied == 0 ]] && pass "the ServiceAccounts are denied what they do not use (secrets, node writes, pod updates, bindings by the operator, pod creation or deletion by the scheduler, other Leases: the cluster's kube-scheduler's included)"
while read -r probe; do
  # shellcheck disable=SC2086
  [[ $(can $probe) == yes ]] || fail "denied but needed: $probe"
done <<PROBES
$OP_SA create pods -n team-llm
$OP_SA patch trainingjobs.phalanx.dev --subresource=status -n team-llm
$OP_SA patch clustertrainingqueues.phalanx.dev
$OP_SA patch nodeflavors.phalanx.dev
$OP_SA list services -A
$OP_SA get services -n team-llm
$OP_SA list endpointslices.discovery.k8s.io -A
$OP_SA patch endpointslices.discovery.k8s.io -n team-llm
$OP_SA create endpointslices.discovery.k8s.io -n team-llm
$OP_SA delete endpointslices.discovery.k8s.io -n team-llm
$SCHED_SA create pods --subresource=binding -n team-llm
PROBES
notes_yaml=$(helm_ get notes phalanx | sed -n "/^kubectl apply -f - <<'YAML'/,/^YAML$/p" | sed '1d;$d')
out=$(kc apply --dry-run=server -f - <<<"$notes_yaml" 2>&1) && pass "NOTES.txt's objects are accepted by the API server: $(tr '\n' ';' <<<"$out")" ||
  fail "NOTES.txt's objects are rejected: $out"

# --- 2. the gang scenario through the chart's RBAC -----------------------------------------
apply_example_queues
kc apply -f "$REPO_ROOT/deploy/examples/10-trainingjob-pretrain-64gpu.yaml" >/dev/null || die "cannot apply example 10"
J=llama-pretrain-64 JNS=team-llm
eventually 120 phase_is $JNS $J Running && pass "$J is Running" ||
  fail "$J not Running after 120s: phase '$(phase $JNS $J)', $(cond $JNS $J Queued); operator: $(grep -i 'forbidden\|warn\|error' "$OPLOG" | tail -3)"
[[ $(cond $JNS $J Admitted) == "True Admitted:"* ]] && pass "admitted: $(cond $JNS $J Admitted)" || fail "Admitted condition: '$(cond $JNS $J Admitted)'"
read -ra P <<<"$(jq_job $JNS $J '.status.placement.nodes | join(" ")')"
pods=$(pods_of $JNS $J)
wrong=0 blocks=()
for r in 0 1 2 3 4 5 6 7; do
  node=$(jq -r ".items[] | select(.metadata.name==\"$J-$r\") | .spec.nodeName" <<<"$pods")
  [[ -n $node && $node == "${P[$r]:-}" ]] || { wrong=$((wrong + 1)); echo "  rank $r on '$node', placement '${P[$r]:-}'"; }
  blocks+=("$(kc get node "$node" -o jsonpath='{.metadata.labels.topology\.k8s\.aws/network-node-layer-3}' 2>/dev/null)")
done
[[ ${#P[@]} == 8 && $wrong == 0 ]] && pass "all 8 ranks bound in rank order to status.placement.nodes (${P[*]})" || fail "$wrong ranks off their placement"
[[ $(printf '%s\n' "${blocks[@]}" | sort -u | wc -l) == 1 && -n ${blocks[0]} ]] && pass "all 8 pods inside one layer-3 block (${blocks[0]})" ||
  fail "pods span layer-3 blocks: ${blocks[*]}"
all_running $JNS $J 8 && pass "8 pods Running (kwok)" || fail "not all 8 pods Running"
grep -q '"pinned"\|pinned' <(curl -sf "http://127.0.0.1:$PHALANX_SCHEDULER_HEALTH_PORT/metrics" | grep '^phalanx_extender_requests_total{verb="bind"') &&
  pass "phalanx-scheduler bound them (pods/binding as the scheduler ServiceAccount): $(curl -sf "http://127.0.0.1:$PHALANX_SCHEDULER_HEALTH_PORT/metrics" | grep '^phalanx_extender_requests_total{verb="bind",outcome="pinned"}')" ||
  fail "no pinned bind in phalanx-scheduler's metrics"
# The Placement API's mutual TLS, with the chart's generated Secrets (phalanx-up.sh writes them
# where the pods would mount them): the gang above was reserved over it.
grep -q 'mutual TLS: client certificates required; reservations changed only by phalanx-operator' "$SCHEDLOG" &&
  pass "phalanx-scheduler serves the Placement API over mutual TLS: $(grep -o 'Placement gRPC API on .*' "$SCHEDLOG" | tail -1)" ||
  fail "phalanx-scheduler does not say it requires client certificates: $(grep 'Placement gRPC API' "$SCHEDLOG" | tail -1)"
grep -q 'Placement service at .*(mutual TLS)' "$OPLOG" && pass "phalanx-operator calls it with its client certificate" ||
  fail "phalanx-operator does not call over mutual TLS: $(grep 'Placement service at' "$OPLOG" | tail -1)"
PHX="$BUILD/cli/phalanx"
tls_ca=(--tls-ca "$PHALANX_SCHEDULER_TLS_CA" --tls-server-name "$PHALANX_SCHEDULER_TLS_SERVER_NAME")
out=$("$PHX" placement snapshot --server "$PHALANX_SCHEDULER_GRPC" 2>&1) && fail "a plain-text client was served: $out" ||
  { grep -q UNAVAILABLE <<<"$out" && pass "a plain-text client is refused: $(cut -c1-200 <<<"$out")" || fail "plain text: $out"; }
out=$("$PHX" placement snapshot --server "$PHALANX_SCHEDULER_GRPC" "${tls_ca[@]}" 2>&1) &&
  fail "a TLS client without a certificate was served: $out" ||
  { grep -q UNAVAILABLE <<<"$out" && pass "a TLS client without a client certificate is refused" || fail "no client certificate: $out"; }
[[ $PHALANX_SCHEDULER_TLS_CERT == */tls/viewer/tls.crt ]] &&
  pass "phalanx-up.sh gives the CLI the chart's read-only viewer certificate" ||
  fail "the CLI's certificate is $PHALANX_SCHEDULER_TLS_CERT, not the viewer's"
viewer=(--tls-cert "$PHALANX_SCHEDULER_TLS_CERT" --tls-key "$PHALANX_SCHEDULER_TLS_KEY")
out=$("$PHX" placement snapshot --server "$PHALANX_SCHEDULER_GRPC" "${tls_ca[@]}" "${viewer[@]}" 2>&1) &&
  pass "with the viewer's client certificate the CLI reads the snapshot: $(head -1 <<<"$out")" ||
  fail "the CLI with the viewer certificate: $out"
# ... but may not change a reservation: the running gang keeps its own.
out=$("$PHX" placement release --server "$PHALANX_SCHEDULER_GRPC" "${tls_ca[@]}" "${viewer[@]}" \
      --job "$JNS/$J" 2>&1) && fail "the viewer certificate released $JNS/$J: $out" ||
  { grep -q 'PERMISSION_DENIED' <<<"$out" && grep -q 'phalanx-viewer' <<<"$out" &&
      pass "the viewer certificate may not release a reservation: $(cut -c1-240 <<<"$out")" ||
      fail "release with the viewer certificate: $out"; }
out=$("$PHX" placement snapshot --server "$PHALANX_SCHEDULER_GRPC" "${tls_ca[@]}" "${viewer[@]}" --json 2>&1)
[[ $(jq -r '.reservations | length' <<<"$out" 2>/dev/null) == 1 ]] &&
  pass "the refused release changed nothing: 1 reservation" || fail "after the refused release: $(cut -c1-300 <<<"$out")"
out=$("$PHX" placement snapshot --server "$PHALANX_SCHEDULER_GRPC" "${tls_ca[@]}" \
      --tls-cert "$PHALANX_OPERATOR_TLS_CERT" --tls-key "$PHALANX_OPERATOR_TLS_KEY" 2>&1) &&
  pass "the operator's certificate reads it too" || fail "the CLI with the operator certificate: $out"
sched_cert=$(kc -n $NS get secret phalanx-scheduler-tls -o jsonpath='{.data.tls\.crt}')
# Each binary's certificate expiry gauge: the notAfter of the certificate file it presents.
not_after() { date -u -d "$(openssl x509 -noout -enddate -in "$1" | cut -d= -f2)" +%s; }
expiry_gauge() { # port role
  curl -sf "http://127.0.0.1:$1/metrics" |
    awk -v s="phalanx_tls_certificate_expiry_timestamp_seconds{role=\"$2\"}" '$1 == s {print $2}'
}
want=$(not_after "$PHALANX_CLUSTER_DIR/tls/scheduler/tls.crt") got=$(expiry_gauge "$PHALANX_SCHEDULER_HEALTH_PORT" server)
[[ -n $want && $got == "$want" ]] && pass "phalanx-scheduler reports its serving certificate's notAfter ($got)" ||
  fail "phalanx_tls_certificate_expiry_timestamp_seconds{role=\"server\"} is '$got', the certificate's notAfter $want"
want=$(not_after "$PHALANX_OPERATOR_TLS_CERT") got=$(expiry_gauge "$PHALANX_OPERATOR_HEALTH_PORT" client)
[[ -n $want && $got == "$want" ]] && pass "phalanx-operator reports its client certificate's notAfter ($got)" ||
  fail "phalanx_tls_certificate_expiry_timestamp_seconds{role=\"client\"} is '$got', the certificate's notAfter $want"

# Forbidden requests a binary tolerates (a retried list, an optional feature) would show here.
# Not RBAC, and retried: OwnerReferencesPermissionEnforcement refuses blockOwnerDeletion until
# the API server's own REST mapping has caught up with CRDs installed seconds before.
n=$(cat "$OPLOG" "$SCHEDLOG" "$KSLOG" | grep -i 'forbidden' | grep -vc 'cannot find RESTMapping' || true)
early=$(grep -c 'cannot find RESTMapping' "$OPLOG" || true)
[[ $n == 0 ]] && pass "no request of phalanx-operator, phalanx-scheduler or kube-scheduler was forbidden by RBAC so far ($early refused while the API server's mapping of the new CRDs caught up)" ||
  fail "$n forbidden requests in the logs: $(cat "$OPLOG" "$SCHEDLOG" "$KSLOG" | grep -i 'forbidden' | grep -v 'cannot find RESTMapping' | head -3 | cut -c1-300)"

# --- 2b. tenants: the shipped roles and the status policy (docs/security.md) ------------------
# A tenant bound to the built-in `edit` in its namespace gets TrainingJobs through the chart's
# aggregated <fullname>-tenant-edit, but no status subresource; an account whose Role does cover
# trainingjobs/status (`resources: ["*"]` over phalanx.dev, what an admin writes by hand) is still
# refused by the ValidatingAdmissionPolicy: status.admission and status.placement would admit
# its job into any queue, on nodes of its choice (audit S1). The operator's own status writes pass.
TNS=team-vision
TENANT=system:serviceaccount:$TNS:tenant VIEWER=system:serviceaccount:$TNS:viewer WRITER=system:serviceaccount:$TNS:status-writer
OP_USER=system:serviceaccount:$NS:phalanx-operator
for sa in tenant viewer status-writer; do kc -n $TNS create serviceaccount $sa >/dev/null || die "cannot create serviceaccount $sa"; done
kc -n $TNS create rolebinding tenant-edit --clusterrole=edit --serviceaccount=$TNS:tenant >/dev/null &&
  kc -n $TNS create rolebinding tenant-view --clusterrole=view --serviceaccount=$TNS:viewer >/dev/null &&
  kc -n $TNS create rolebinding status-writer --role=everything-in-phalanx-dev --serviceaccount=$TNS:status-writer >/dev/null &&
  kc -n $TNS apply -f - >/dev/null <<YAML || die "cannot bind the tenant accounts"
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: everything-in-phalanx-dev}
rules: [{apiGroups: [phalanx.dev], resources: ["*"], verbs: ["*"]}]
YAML
[[ -n $(kc get validatingadmissionpolicy phalanx-status-writers -o name 2>/dev/null) &&
   $(kc get validatingadmissionpolicybinding phalanx-status-writers -o jsonpath='{.spec.validationActions}' 2>/dev/null) == '["Deny"]' ]] &&
  pass "the chart installed the ValidatingAdmissionPolicy phalanx-status-writers and its Deny binding (the API server serves admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy)" ||
  fail "no ValidatingAdmissionPolicy phalanx-status-writers with a Deny binding: $(kc get validatingadmissionpolicy,validatingadmissionpolicybinding 2>&1 | head -3)"
# kube-controller-manager's clusterrole-aggregation controller copies the rules into edit and view.
eventually 30 bash -c "[[ \$(kubectl --kubeconfig=$PHALANX_KUBECONFIG auth can-i --as=$TENANT create trainingjobs.phalanx.dev -n $TNS) == yes ]]" &&
  eventually 30 bash -c "[[ \$(kubectl --kubeconfig=$PHALANX_KUBECONFIG auth can-i --as=$VIEWER list trainingjobs.phalanx.dev -n $TNS) == yes ]]" &&
  pass "phalanx-tenant-edit and phalanx-tenant-view are aggregated into the built-in edit and view: $(kc get clusterrole edit -o json | jq -c '[.rules[] | select(.apiGroups == ["phalanx.dev"]) | {resources, verbs}]')" ||
  fail "edit/view do not carry phalanx.dev: $(kc get clusterrole edit view -o json | jq -c '[.items[].rules[] | select(.apiGroups == ["phalanx.dev"])]')"
bad=0
while read -r want who verb; do
  # shellcheck disable=SC2086
  got=$(can $who $verb -n $TNS)
  [[ $got == "$want" ]] || { fail "$who: can-i $verb is '$got', want $want"; bad=1; }
done <<PROBES
yes $TENANT create trainingjobs.phalanx.dev
yes $TENANT patch trainingjobs.phalanx.dev
yes $TENANT delete trainingjobs.phalanx.dev
yes $TENANT list trainingqueues.phalanx.dev
no $TENANT patch trainingjobs.phalanx.dev --subresource=status
no $TENANT update trainingjobs.phalanx.dev --subresource=status
no $TENANT patch trainingqueues.phalanx.dev --subresource=status
no $TENANT create trainingqueues.phalanx.dev
yes $VIEWER get trainingjobs.phalanx.dev
no $VIEWER create trainingjobs.phalanx.dev
no $VIEWER patch trainingjobs.phalanx.dev --subresource=status
yes $WRITER patch trainingjobs.phalanx.dev --subresource=status
PROBES
[[ $bad == 0 ]] && pass "edit may submit, change and delete TrainingJobs and read TrainingQueues, view only read; neither may write a status or create a TrainingQueue (the hand-written phalanx.dev/* Role may, as RBAC goes)"
JOB_AS=$TENANT job $TNS tenant-job 1 && pass "the tenant (edit) created TrainingJob $TNS/tenant-job" ||
  fail "the tenant could not create a TrainingJob"
# phalanx-operator's own server-side applies on the status pass the policy: admitted, placed, Running.
eventually 60 phase_is $TNS tenant-job Running &&
  pass "tenant-job is Running: phalanx-operator's status writes pass the policy ($(kc -n $TNS get trainingjob tenant-job -o json --show-managed-fields | jq -r '[.metadata.managedFields[] | select(.subresource == "status") | .manager] | join(", ")'))" ||
  fail "tenant-job not Running: phase '$(phase $TNS tenant-job)'; operator: $(grep -i 'ValidatingAdmissionPolicy\|forbidden' "$OPLOG" | tail -2 | cut -c1-300)"
admission_before=$(jq_job $TNS tenant-job '.status.admission | tojson')
# The audit's forged admission: team-llm's queue, a node of the tenant's choice.
forged='{"status":{"phase":"Admitted","admission":{"clusterQueue":"llm","flavor":"p5","replicas":1,"nodeSelector":{},"tolerations":[]},"placement":{"domain":"x","level":"kubernetes.io/hostname","nodes":["p5-0015"]}}}'
out=$(kc -n $TNS patch trainingjob tenant-job --subresource=status --type=merge -p "$forged" --as=$TENANT 2>&1) &&
  fail "the tenant (edit) wrote its job's status: $out" ||
  { grep -q 'cannot patch resource "trainingjobs/status"' <<<"$out" && pass "the tenant's status patch is refused by RBAC: $out" ||
      fail "the tenant's status patch failed otherwise: $out"; }
out=$(kc -n $TNS patch trainingjob tenant-job --subresource=status --type=merge -p "$forged" --as=$WRITER 2>&1) &&
  fail "an account with RBAC on trainingjobs/status wrote it past the policy: $out" ||
  { grep -q "ValidatingAdmissionPolicy 'phalanx-status-writers'" <<<"$out" && grep -qF "only phalanx-operator ($OP_USER) writes it" <<<"$out" &&
      pass "an account with RBAC on trainingjobs/status is refused by the policy: $out" ||
      fail "the status-writer's patch failed otherwise: $out"; }
out=$(kc patch clustertrainingqueue vision --subresource=status --type=merge -p '{"status":{"pendingWorkloads":7}}' 2>&1) &&
  fail "the cluster admin wrote a ClusterTrainingQueue's status past the policy: $out" ||
  { grep -q "ValidatingAdmissionPolicy 'phalanx-status-writers'" <<<"$out" && pass "the cluster admin too is refused (statusPolicy.extraWriters is empty): $(cut -c1-200 <<<"$out")" ||
      fail "the admin's status patch failed otherwise: $out"; }
[[ $(jq_job $TNS tenant-job '.status.admission | tojson') == "$admission_before" ]] && phase_is $TNS tenant-job Running &&
  pass "tenant-job's admission is unchanged ($admission_before)" || fail "tenant-job's status changed: $(jq_job $TNS tenant-job '.status | tojson' | cut -c1-300)"
kc -n $TNS delete trainingjob tenant-job --as=$TENANT --wait=false >/dev/null && eventually 60 npods_is $TNS tenant-job 0 &&
  pass "the tenant deleted tenant-job and its pod went" || fail "tenant-job's delete: $(npods $TNS tenant-job) pods left"

uids_before=$(pods_of $JNS $J | jq -r '[.items[] | "\(.metadata.name)=\(.metadata.uid)@\(.spec.nodeName)"] | sort | join(" ")')

# --- 3. a verb taken away: the operator fails loudly ----------------------------------------
kc get clusterrole phalanx-operator -o json |
  jq '.rules |= map(if (.resources | index("pods")) and (.apiGroups == [""]) then .verbs -= ["create"] else . end)' |
  kc replace -f - >/dev/null || die "cannot edit the operator's ClusterRole"
eventually 30 bash -c "[[ \$(kubectl --kubeconfig=$PHALANX_KUBECONFIG auth can-i --as=$OP_SA create pods -n team-vision) == no ]]" ||
  fail "the operator may still create pods"
lines_before=$(wc -l <"$OPLOG")
# A pod shape of its own: tenant-job's passed dry run, under a minute old, would otherwise answer
# for rbac-probe's too (jobs of one shape share a passed verdict for 60 s, docs/operator.md).
job team-vision rbac-probe 1 "" "" "      terminationGracePeriodSeconds: 7"
eventually 60 bash -c "[[ \$(kubectl --kubeconfig=$PHALANX_KUBECONFIG -n team-vision get trainingjob rbac-probe -o jsonpath='{.status.admission.replicas}') == 1 ]]" &&
  pass "rbac-probe admitted (status writes are still allowed)" || fail "rbac-probe not admitted: $(cond team-vision rbac-probe Queued)"
# The dry run of its template before admission meets the same 403: that is the operator's
# install, not the job, so it is logged and the job admitted; the real creates then log it too.
forbidden() { # dry|create
  local sel=(-v); [[ $1 == dry ]] && sel=()
  tail -n +"$lines_before" "$OPLOG" | grep -i 'rbac-probe' | grep -i 'forbidden' | grep -i 'pods' |
    grep "${sel[@]}" 'dryRun=All' | head -1
}
eventually 30 bash -c "$(declare -f forbidden); lines_before=$lines_before OPLOG='$OPLOG'; [[ -n \$(forbidden dry) ]]" &&
  [[ $(forbidden dry) == *"refused by the operator's RBAC"*"(check the operator's RBAC)"* ]] &&
  pass "the dry run's 403 is logged as the operator's RBAC: $(forbidden dry | cut -c1-200)" ||
  fail "no log line names the dry run's 403: $(tail -n +"$lines_before" "$OPLOG" | tail -5)"
eventually 30 bash -c "$(declare -f forbidden); lines_before=$lines_before OPLOG='$OPLOG'; [[ -n \$(forbidden create) ]]" &&
  pass "the operator logs the forbidden request: $(forbidden create | cut -c1-300)" ||
  fail "no log line names the forbidden pod creation: $(tail -n +"$lines_before" "$OPLOG" | tail -5)"
eventually 30 has_event team-vision rbac-probe Forbidden &&
  pass "a Warning event Forbidden on rbac-probe: $(kc -n team-vision get events --field-selector involvedObject.name=rbac-probe,reason=Forbidden -o jsonpath='{.items[0].message}' | cut -c1-200)" ||
  fail "no Forbidden event on rbac-probe"
npods_is team-vision rbac-probe 0 && ! phase_is team-vision rbac-probe Running &&
  pass "rbac-probe has no pods and is not Running (phase '$(phase team-vision rbac-probe)')" ||
  fail "rbac-probe has $(npods team-vision rbac-probe) pods, phase $(phase team-vision rbac-probe)"

# The same for update on trainingjobs/finalizers, which only OwnerReferencesPermissionEnforcement
# asks for: with pod creation given back and that taken, the next job's pods are refused.
kc get clusterrole phalanx-operator -o json |
  jq '.rules |= map(if (.resources | index("pods")) and (.apiGroups == [""]) then .verbs += ["create"] else . end)
      | .rules |= map(select(.resources != ["trainingjobs/finalizers"]))' |
  kc replace -f - >/dev/null || die "cannot edit the operator's ClusterRole"
eventually 30 bash -c "[[ \$(kubectl --kubeconfig=$PHALANX_KUBECONFIG auth can-i --as=$OP_SA update trainingjobs.phalanx.dev --subresource=finalizers -n team-research) == no ]]" ||
  fail "the operator may still update trainingjobs/finalizers"
lines_before=$(wc -l <"$OPLOG")
job team-research owner-probe 1
eventually 60 bash -c "tail -n +$lines_before '$OPLOG' | grep owner-probe | grep -i forbidden | grep -qi 'blockOwnerDeletion\|finalizers'" &&
  pass "without update on trainingjobs/finalizers the pods are refused: $(tail -n +"$lines_before" "$OPLOG" | grep owner-probe | grep -i forbidden | head -1 | sed 's/.*Forbidden/Forbidden/' | cut -c1-250)" ||
  fail "no forbidden blockOwnerDeletion line for owner-probe: $(tail -n +"$lines_before" "$OPLOG" | grep owner-probe | tail -2)"
npods_is team-research owner-probe 0 || fail "owner-probe has pods without the finalizers permission"

# --- 4. helm upgrade: the role back, the CRDs updated, the running job untouched ---------------
crd_uid=$(kc get crd trainingjobs.phalanx.dev -o jsonpath='{.metadata.uid}')
job_uid=$(kc -n $JNS get trainingjob $J -o jsonpath='{.metadata.uid}')
# The next chart version: one more printer column in the TrainingJob CRD, one changed value.
NEXT="$PHALANX_CLUSTER_DIR/chart-next"
cp -r "$REPO_ROOT/charts/phalanx" "$NEXT"
python3 - "$NEXT/files/crds/phalanx.dev_trainingjobs.yaml" <<'PY2' || die "cannot edit the CRD copy"
import sys
p = sys.argv[1]; s = open(p).read()
anchor = "    additionalPrinterColumns:\n"
assert anchor in s
open(p, "w").write(s.replace(anchor, anchor + "    - name: UpgradeProbe\n      type: string\n      jsonPath: .spec.queueName\n", 1))
PY2
out=$(helm_ upgrade phalanx "$NEXT" --reuse-values --set operator.logLevel=debug 2>&1) &&
  pass "helm upgrade to a chart with a changed CRD and --set operator.logLevel=debug (revision $(helm_ status phalanx -o json | jq .version))" || fail "helm upgrade: $out"
kc get crd trainingjobs.phalanx.dev -o json | jq -e '.spec.versions[0].additionalPrinterColumns[] | select(.name == "UpgradeProbe")' >/dev/null &&
  pass "helm upgrade updated the TrainingJob CRD (its new printer column is served)" || fail "the CRD lacks the upgraded printer column"
kc -n $NS get deployment phalanx-operator -o jsonpath='{.spec.template.spec.containers[0].args}' | grep -q -- '--log-level=debug' &&
  pass "the operator Deployment carries the new value" || fail "the operator Deployment lacks --log-level=debug"
[[ -n $sched_cert && $(kc -n $NS get secret phalanx-scheduler-tls -o jsonpath='{.data.tls\.crt}') == "$sched_cert" ]] &&
  pass "helm upgrade kept the generated TLS certificates (the running pods' files stay valid)" ||
  fail "helm upgrade replaced the scheduler's TLS certificate"
helm_ get notes phalanx | grep -q 'get secret phalanx-viewer-tls' &&
  pass "the upgrade's NOTES tell how to read the viewer certificate" || fail "the upgrade's NOTES lack the viewer Secret"
# A release without the viewer Secret (installed by a chart before it, or the Secret deleted):
# an upgrade cannot make one with the CA it keeps, and its NOTES say what to do instead of
# pointing at a Secret that does not exist (audit 2026-11-30, D2-5).
kc -n $NS delete secret phalanx-viewer-tls >/dev/null || fail "cannot delete the viewer Secret"
out=$(helm_ upgrade phalanx "$NEXT" --reuse-values 2>&1) || fail "helm upgrade without the viewer Secret: $out"
notes=$(helm_ get notes phalanx)
grep -q 'release has no read-only viewer certificate' <<<"$notes" && ! grep -q 'get secret phalanx-viewer-tls' <<<"$notes" &&
  grep -q 'delete secret phalanx-scheduler-tls phalanx-operator-tls' <<<"$notes" &&
  pass "without the viewer Secret the upgrade's NOTES say how to get one: $(grep -A1 'no read-only viewer' <<<"$notes" | tr -s ' ' | tr '\n' ' ' | cut -c1-160)" ||
  fail "the NOTES of an upgrade without the viewer Secret: $(grep -n 'viewer' <<<"$notes")"
eventually 30 bash -c "[[ \$(kubectl --kubeconfig=$PHALANX_KUBECONFIG auth can-i --as=$OP_SA create pods -n team-vision) == yes ]]" &&
  pass "helm upgrade restored the operator's pod creation" || fail "the operator still may not create pods after helm upgrade"
kc -n team-vision annotate trainingjob rbac-probe phalanx.test/nudge=1 --overwrite >/dev/null   # skip the retry backoff
kc -n team-research annotate trainingjob owner-probe phalanx.test/nudge=1 --overwrite >/dev/null
eventually 90 phase_is team-vision rbac-probe Running && eventually 60 phase_is team-research owner-probe Running &&
  pass "rbac-probe and owner-probe then run" ||
  fail "after the role came back: rbac-probe '$(phase team-vision rbac-probe)', owner-probe '$(phase team-research owner-probe)'"
[[ $(kc get crd trainingjobs.phalanx.dev -o jsonpath='{.metadata.uid}') == "$crd_uid" &&
   $(kc -n $JNS get trainingjob $J -o jsonpath='{.metadata.uid}') == "$job_uid" ]] &&
  pass "the upgrade updated the CRDs in place (same UIDs of the CRD and of $J)" || fail "a CRD or $J was recreated by helm upgrade"
"$REPO_ROOT/hack/cluster/restart.sh" phalanx-scheduler >/dev/null 2>&1 && "$REPO_ROOT/hack/cluster/restart.sh" phalanx-operator >/dev/null 2>&1 &&
  pass "phalanx-scheduler and phalanx-operator restarted, as a rollout does" || fail "a restart failed"
restored=$(curl -sf "http://127.0.0.1:$PHALANX_SCHEDULER_HEALTH_PORT/metrics" | awk '$1 == "phalanx_reservations_restored" {print $2}')
[[ ${restored:-0} -ge 3 ]] && pass "phalanx-scheduler rebuilt $restored reservations from status.placement" || fail "reservations restored: '$restored'"
sleep 5
uids_after=$(pods_of $JNS $J | jq -r '[.items[] | "\(.metadata.name)=\(.metadata.uid)@\(.spec.nodeName)"] | sort | join(" ")')
[[ $uids_after == "$uids_before" ]] && phase_is $JNS $J Running &&
  pass "$J kept its 8 pods (same UIDs, same nodes) and is Running" || fail "$J's pods changed: before '$uids_before' after '$uids_after'"
# phalanx-scheduler alone replaced (a rollout of its Deployment) while a job arrives: the
# operator's mutual-TLS channel reaches the new one. gRPC's TLS channel could stay unable to
# connect to it for good, and nothing was admitted until the operator restarted (audit
# 2026-11-30, D2-1); the client now opens a new channel after 10 s of failed calls.
"$REPO_ROOT/hack/cluster/restart.sh" phalanx-scheduler --down-for 6 >"$PHALANX_CLUSTER_DIR/restart-scheduler.log" 2>&1 &
restart_pid=$!
sleep 2
job team-vision during-restart 1
wait "$restart_pid" || fail "phalanx-scheduler did not come back: $(tail -3 "$PHALANX_CLUSTER_DIR/restart-scheduler.log")"
back_at=$(date +%s)
eventually 60 phase_is team-vision during-restart Running &&
  pass "a job applied while phalanx-scheduler was down runs $(($(date +%s) - back_at)) s after it was back, with no operator restart" ||
  fail "during-restart not Running 60 s after phalanx-scheduler was back: $(cond team-vision during-restart Queued | cut -c1-250)"
out=$(check_invariants) && pass "invariants hold" || fail "invariants broken: $out"

# --- 5. helm uninstall: CRDs and TrainingJobs stay --------------------------------------------
phx_stop phalanx-operator 20; phx_stop phalanx-scheduler 20
jobs_before=$(kc get trainingjobs -A -o name | sort | tr '\n' ' ')
out=$(helm_ uninstall phalanx 2>&1) && pass "helm uninstall: $(tr '\n' ' ' <<<"$out" | cut -c1-200)" || fail "helm uninstall: $out"
[[ $(kc get crd -o name | grep -c '\.phalanx\.dev$') == "$ncrds" ]] && pass "all $ncrds CRDs are still installed" ||
  fail "CRDs left: $(kc get crd -o name | grep phalanx.dev)"
[[ $(kc get trainingjobs -A -o name | sort | tr '\n' ' ') == "$jobs_before" ]] && pass "every TrainingJob is still there ($jobs_before)" ||
  fail "TrainingJobs before '$jobs_before', after '$(kc get trainingjobs -A -o name | tr '\n' ' ')'"
npods_is $JNS $J 8 && pass "$J's 8 pods are still there" || fail "$J has $(npods $JNS $J) pods after uninstall"
[[ $(kueue_crds) == "$kueue_before" ]] && pass "Kueue's CRDs untouched by install, upgrade and uninstall (same UIDs, not managed by Helm)" ||
  fail "Kueue's CRDs changed: before '$kueue_before' after '$(kueue_crds)'"
left=$(kc get clusterrole,clusterrolebinding,validatingadmissionpolicy,validatingadmissionpolicybinding -o name | grep -c 'phalanx' || true)
[[ $left == 0 && -z $(kc -n $NS get serviceaccount,deployment,service,configmap -l app.kubernetes.io/instance=phalanx -o name 2>/dev/null) ]] &&
  pass "the release's RBAC (tenant roles included), status policy, ServiceAccounts, Deployments, Services and ConfigMap are gone" ||
  fail "left behind: $(kc get clusterrole,clusterrolebinding,validatingadmissionpolicy,validatingadmissionpolicybinding -o name | grep phalanx) $(kc -n $NS get all,sa,cm -l app.kubernetes.io/instance=phalanx -o name)"
finish

#!/usr/bin/env bash
# Bring up Phalanx on a local control plane (127.0.0.1 only), for demos and end-to-end tests:
#   the control plane (hack/cluster/up.sh), the CRDs, phalanx-scheduler from build/, a real
#   kube-scheduler with deploy/scheduler/kube-scheduler-config.yaml pointing at it,
#   phalanx-operator from build/, and N kwok fake GPU nodes.
#
# Usage: hack/phalanx-up.sh [--nodes N] [--preset eks|eks-4layer|gb200] [--instance-type T]
#                           [--ttl SECONDS] [--no-operator] [--add-nodes PRESET:COUNT]...
#                           [--chart] [--chart-values FILE]... [--pre-apply FILE]...
#   --nodes N          fake nodes to create (default 16; 0 = none, add your own with
#                      hack/cluster/fake-nodes.sh)
#   --preset P         topology preset of the nodes and of phalanx-scheduler (default eks)
#   --instance-type T  instance type of the fake nodes (default: the preset's, e.g. p5.48xlarge)
#   --ttl SECONDS      stop everything after that long (a watchdog runs hack/phalanx-down.sh)
#   --no-operator      do not start phalanx-operator (tests that write job status themselves)
#   --add-nodes P:N    also N fake nodes of preset P's instance type (repeatable), e.g. a GB200
#                      NVL72 group beside p5 nodes: --preset gb200 --add-nodes eks:64 --nodes 36
#   --chart            install the Helm chart charts/phalanx (release phalanx, namespace
#                      phalanx-system) instead of applying crds/, and run the three binaries as
#                      the chart's pods would: each with its chart ServiceAccount's token
#                      (hack/cluster/sa-kubeconfig.sh), with the flags of the chart's Deployments
#                      (addresses replaced by local ports; the chart's TLS Secrets written to
#                      $PHALANX_CLUSTER_DIR/tls/ in place of their mounts, so the Placement API
#                      runs with the chart's mutual TLS) and kube-scheduler with the chart's
#                      KubeSchedulerConfiguration. The chart's own pods stay Pending (their
#                      default-scheduler does not run), so only these processes act.
#   --chart-values F   a values file for --chart (repeatable; implies --chart)
#   --pre-apply F      kubectl apply F (server-side) once the control plane is up, before Phalanx's
#                      CRDs or chart: e.g. another project's CRDs, to install Phalanx beside them
# Env: PHALANX_CLUSTER_DIR (default /tmp/phalanx-cluster), PHALANX_BUILD_DIR (default build),
# PHALANX_OPERATOR_ARGS (extra phalanx-operator flags, split on spaces, e.g.
# "--not-ready-grace-seconds 5"), PHALANX_SCHEDULER_ARGS (the same for phalanx-scheduler, e.g.
# "--extender-max-body-bytes 65536").
# The admin kubeconfig path is printed as the LAST line of stdout. Stop with
# hack/phalanx-down.sh. Ports are free ones picked at start and written to
# $PHALANX_CLUSTER_DIR/env (PHALANX_SCHEDULER_GRPC, PHALANX_EXTENDER_URL,
# PHALANX_SCHEDULER_HEALTH_PORT, PHALANX_OPERATOR_HEALTH_PORT; with --chart's TLS also
# PHALANX_SCHEDULER_TLS_CA/_CERT/_KEY/_SERVER_NAME, which the CLI's --server commands read: the
# chart's read-only viewer certificate when it made one; the operator's, which may also change
# reservations, is PHALANX_OPERATOR_TLS_CERT/_KEY).
# The operator's start script is $PHALANX_CLUSTER_DIR/run/phalanx-operator.sh
# (hack/cluster/restart.sh phalanx-operator).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$ROOT/hack/cluster/lib.sh"
DIR="$PHALANX_CLUSTER_DIR"
BUILD="${PHALANX_BUILD_DIR:-build}"
[[ $BUILD == /* ]] || BUILD="$ROOT/$BUILD"
NODES=16 PRESET=eks ITYPE="" TTL=${PHALANX_CLUSTER_TTL:-0} OPERATOR=1 ADD_NODES=() CHART=0 CHART_VALUES=() PRE_APPLY=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --nodes) NODES=$2; shift 2 ;;
    --preset) PRESET=$2; shift 2 ;;
    --instance-type) ITYPE=$2; shift 2 ;;
    --ttl) TTL=$2; shift 2 ;;
    --no-operator) OPERATOR=0; shift ;;
    --add-nodes) ADD_NODES+=("$2"); shift 2 ;;
    --chart) CHART=1; shift ;;
    --chart-values) CHART=1; CHART_VALUES+=(-f "$2"); shift 2 ;;
    --pre-apply) PRE_APPLY+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,36p' "$0"; exit 0 ;;
    *) echo "phalanx-up.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ $NODES =~ ^[0-9]+$ ]] || { echo "phalanx-up.sh: --nodes wants a count, got '$NODES'" >&2; exit 2; }
case $PRESET in eks|eks-4layer|gb200) ;; *) echo "phalanx-up.sh: --preset must be eks, eks-4layer or gb200, got '$PRESET'" >&2; exit 2 ;; esac
log() { echo "[phalanx-up] $*" >&2; }

SCHED_BIN="$BUILD/scheduler/server/phalanx-scheduler"
OP_BIN="$BUILD/operator/phalanx-operator"
[[ -x $SCHED_BIN ]] || { echo "[phalanx-up] FAILED: $SCHED_BIN is not built; run hack/setup.sh" >&2; exit 1; }
[[ $OPERATOR == 0 || -x $OP_BIN ]] || { echo "[phalanx-up] FAILED: $OP_BIN is not built; run hack/setup.sh (or pass --no-operator)" >&2; exit 1; }
phx_need_bin kube-scheduler
[[ $CHART == 0 ]] || phx_need_bin helm

# The control plane; on any later failure stop everything it and we started.
KUBECONFIG_PATH=$("$ROOT/hack/cluster/up.sh" --ttl "$TTL" | tail -1)
ok=0
trap '[[ $ok == 1 ]] || { log "start failed; stopping what was started (logs kept in $DIR/logs)"; PHALANX_KEEP_DIR=1 "$ROOT/hack/phalanx-down.sh" >&2 || true; }' EXIT
export KUBECONFIG="$KUBECONFIG_PATH"
# shellcheck disable=SC1091
source "$DIR/env"

for f in "${PRE_APPLY[@]}"; do
  log "applying $f"
  kubectl apply --server-side -f "$f" >/dev/null || { echo "[phalanx-up] FAILED: kubectl apply -f $f" >&2; exit 1; }
  # CRDs in it must serve before anything is installed beside them.
  kubectl wait --for condition=established --timeout=60s -f "$f" >/dev/null 2>&1 || true
done

CHART_NS=phalanx-system CHART_RELEASE=phalanx
if [[ $CHART == 1 ]]; then
  log "installing charts/phalanx (release $CHART_RELEASE, namespace $CHART_NS)"
  "$(phx_bin helm)" install "$CHART_RELEASE" "$ROOT/charts/phalanx" -n "$CHART_NS" --create-namespace \
    "${CHART_VALUES[@]}" >"$DIR/logs/helm-install.log" 2>&1 ||
    { echo "[phalanx-up] FAILED: helm install:" >&2; cat "$DIR/logs/helm-install.log" >&2; exit 1; }
  kubectl wait --for condition=established --timeout=60s crd -l app.kubernetes.io/instance=$CHART_RELEASE >/dev/null
  # The binaries act as the chart's ServiceAccounts.
  SCHED_KC="$DIR/phalanx-scheduler-sa.kubeconfig" OP_KC="$DIR/phalanx-operator-sa.kubeconfig"
  "$ROOT/hack/cluster/sa-kubeconfig.sh" "$CHART_NS" "$CHART_RELEASE-scheduler" "$SCHED_KC"
  "$ROOT/hack/cluster/sa-kubeconfig.sh" "$CHART_NS" "$CHART_RELEASE-operator" "$OP_KC"
  # A Deployment container's args, minus the flags that name in-cluster addresses or the pod.
  chart_args() { # deployment container
    kubectl -n "$CHART_NS" get deployment "$1" -o json |
      jq -r --arg c "$2" '.spec.template.spec.containers[] | select(.name == $c) | .args[]' |
      grep -Ev '^--(extender-address|grpc-address|health-address|placement-address|identity)='
  }
  # The Secret a Deployment mounts at /etc/phalanx/tls (the Placement API's mutual TLS), written
  # to $DIR/tls/<component>/, whose path then replaces /etc/phalanx/tls in the flags.
  chart_tls() { # deployment component
    local secret
    secret=$(kubectl -n "$CHART_NS" get deployment "$1" -o json |
      jq -r '.spec.template.spec.volumes[]? | select(.name == "placement-tls") | .secret.secretName')
    [[ -n $secret ]] || return 0
    secret_files "$secret" "$2"
  }
  secret_files() { # secret dir: its ca.crt, tls.crt and tls.key in $DIR/tls/<dir>/
    local secret=$1 data key
    data=$(kubectl -n "$CHART_NS" get secret "$secret" -o json)
    mkdir -p "$DIR/tls/$2"
    for key in ca.crt tls.crt tls.key; do
      jq -r --arg k "$key" '.data[$k] // empty' <<<"$data" | base64 -d >"$DIR/tls/$2/$key"
      [[ -s $DIR/tls/$2/$key ]] || { echo "[phalanx-up] FAILED: Secret $CHART_NS/$secret has no $key" >&2; exit 1; }
    done
    chmod 600 "$DIR/tls/$2/tls.key"
  }
  chart_tls "$CHART_RELEASE-scheduler" scheduler
  chart_tls "$CHART_RELEASE-operator" operator
  # The chart's read-only client certificate, for the CLI: it may read the scheduler's state but
  # not change reservations (--grpc-tls-writers names only the operator's certificate).
  cli_tls=operator
  if kubectl -n "$CHART_NS" get secret "$CHART_RELEASE-viewer-tls" >/dev/null 2>&1; then
    secret_files "$CHART_RELEASE-viewer-tls" viewer
    cli_tls=viewer
  fi
  mapfile -t SCHED_FLAGS < <(chart_args "$CHART_RELEASE-scheduler" phalanx-scheduler | sed "s|/etc/phalanx/tls/|$DIR/tls/scheduler/|")
  mapfile -t OP_FLAGS < <(chart_args "$CHART_RELEASE-operator" phalanx-operator | sed "s|/etc/phalanx/tls/|$DIR/tls/operator/|")
  [[ ${#SCHED_FLAGS[@]} -gt 0 && ${#OP_FLAGS[@]} -gt 0 ]] || { echo "[phalanx-up] FAILED: no container args in the chart's Deployments" >&2; exit 1; }
  if [[ -s $DIR/tls/operator/ca.crt ]]; then
    # The operator calls 127.0.0.1 here, not the Service: the certificate names the Service.
    TLS_NAME="$CHART_RELEASE-scheduler.$CHART_NS.svc"
    OP_FLAGS+=("--placement-tls-server-name=$TLS_NAME")
    cat >>"$DIR/env" <<ENV
PHALANX_SCHEDULER_TLS_CA=$DIR/tls/operator/ca.crt
PHALANX_SCHEDULER_TLS_CERT=$DIR/tls/$cli_tls/tls.crt
PHALANX_SCHEDULER_TLS_KEY=$DIR/tls/$cli_tls/tls.key
PHALANX_OPERATOR_TLS_CERT=$DIR/tls/operator/tls.crt
PHALANX_OPERATOR_TLS_KEY=$DIR/tls/operator/tls.key
PHALANX_SCHEDULER_TLS_SERVER_NAME=$TLS_NAME
ENV
  fi
  cat >>"$DIR/env" <<ENV
PHALANX_CHART_RELEASE=$CHART_RELEASE
PHALANX_CHART_NAMESPACE=$CHART_NS
PHALANX_SCHEDULER_KUBECONFIG=$SCHED_KC
PHALANX_OPERATOR_KUBECONFIG=$OP_KC
ENV
else
  log "installing the CRDs"
  kubectl apply --server-side -f "$ROOT/crds/" >/dev/null
  kubectl wait --for condition=established --timeout=60s -f "$ROOT/crds/" >/dev/null
  SCHED_KC="$KUBECONFIG_PATH" OP_KC="$KUBECONFIG_PATH"
  SCHED_FLAGS=(--topology-preset "$PRESET" --log-level "${PHALANX_LOG_LEVEL:-info}")
  OP_FLAGS=(--log-level "${PHALANX_LOG_LEVEL:-info}")
fi

# phalanx-scheduler, on free loopback ports.
EXT_PORT=$(phx_free_port); GRPC_PORT=$(phx_free_port); HEALTH_PORT=$(phx_free_port)
read -ra SCHED_EXTRA <<<"${PHALANX_SCHEDULER_ARGS:-}"
{ echo "#!/usr/bin/env bash"; printf 'exec'; printf ' %q' "$SCHED_BIN" \
    --kubeconfig "$SCHED_KC" "${SCHED_FLAGS[@]}" \
    --extender-address "127.0.0.1:$EXT_PORT" --grpc-address "127.0.0.1:$GRPC_PORT" \
    --health-address "127.0.0.1:$HEALTH_PORT" "${SCHED_EXTRA[@]}"; echo; } \
  >"$DIR/run/phalanx-scheduler.sh"
cat >>"$DIR/env" <<ENV
PHALANX_SCHEDULER_GRPC=127.0.0.1:$GRPC_PORT
PHALANX_EXTENDER_URL=http://127.0.0.1:$EXT_PORT/scheduler
PHALANX_SCHEDULER_HEALTH_PORT=$HEALTH_PORT
ENV
pid=$(phx_start phalanx-scheduler)
phx_wait 120 "phalanx-scheduler /readyz" phalanx-scheduler curl -sf --max-time 2 "http://127.0.0.1:$HEALTH_PORT/readyz"
log "phalanx-scheduler running (pid $pid): extender http://127.0.0.1:$EXT_PORT/scheduler, gRPC 127.0.0.1:$GRPC_PORT, metrics http://127.0.0.1:$HEALTH_PORT/metrics"

# kube-scheduler with the phalanx profile, its extender pointing at that port.
SCHED_CONFIG="$DIR/phalanx-kube-scheduler-config.yaml"
if [[ $CHART == 1 ]]; then
  # The chart's configuration (only the phalanx profile, leader election on its own Lease), as
  # the scheduler ServiceAccount.
  kubectl -n "$CHART_NS" get configmap "$CHART_RELEASE-kube-scheduler" \
    -o jsonpath='{.data.kube-scheduler-config\.yaml}' >"$SCHED_CONFIG.chart"
  grep -q 'http://127.0.0.1:8888/scheduler' "$SCHED_CONFIG.chart" ||
    { echo "[phalanx-up] FAILED: the chart's kube-scheduler config has no extender at 127.0.0.1:8888" >&2; exit 1; }
  sed "s|http://127.0.0.1:8888/scheduler|http://127.0.0.1:$EXT_PORT/scheduler|" "$SCHED_CONFIG.chart" >"$SCHED_CONFIG"
  PHALANX_KUBE_SCHEDULER_KUBECONFIG="$SCHED_KC" "$ROOT/hack/cluster/start-scheduler.sh" "$SCHED_CONFIG"
else
  sed "s|http://127.0.0.1:8888/scheduler|http://127.0.0.1:$EXT_PORT/scheduler|" \
    "$ROOT/deploy/scheduler/kube-scheduler-config.yaml" >"$SCHED_CONFIG"
  "$ROOT/hack/cluster/start-scheduler.sh" "$SCHED_CONFIG"
fi

if [[ $OPERATOR == 1 ]]; then
  OP_HEALTH_PORT=$(phx_free_port)
  read -ra OP_EXTRA <<<"${PHALANX_OPERATOR_ARGS:-}"
  # The Lease lives in kube-system like kube-scheduler's (with --chart: the chart's Lease in its
  # namespace); a second operator started with the same script line is a standby.
  { echo "#!/usr/bin/env bash"; printf 'exec'; printf ' %q' "$OP_BIN" \
      --kubeconfig "$OP_KC" "${OP_FLAGS[@]}" --placement-address "127.0.0.1:$GRPC_PORT" \
      --health-address "127.0.0.1:$OP_HEALTH_PORT" "${OP_EXTRA[@]}"; echo; } \
    >"$DIR/run/phalanx-operator.sh"
  echo "PHALANX_OPERATOR_HEALTH_PORT=$OP_HEALTH_PORT" >>"$DIR/env"
  pid=$(phx_start phalanx-operator)
  phx_wait 120 "phalanx-operator /readyz" phalanx-operator curl -sf --max-time 2 "http://127.0.0.1:$OP_HEALTH_PORT/readyz"
  log "phalanx-operator running (pid $pid): metrics http://127.0.0.1:$OP_HEALTH_PORT/metrics"
fi

ADDED=0
for group in "${ADD_NODES[@]}"; do
  [[ $group =~ ^(eks|eks-4layer|gb200):([0-9]+)$ ]] || { echo "[phalanx-up] FAILED: --add-nodes wants PRESET:COUNT, got '$group'" >&2; exit 2; }
  "$ROOT/hack/cluster/fake-nodes.sh" --preset "${BASH_REMATCH[1]}" --count "${BASH_REMATCH[2]}" >&2
  ADDED=$((ADDED + BASH_REMATCH[2]))
done
if [[ $NODES -gt 0 ]]; then
  args=(--preset "$PRESET" --count "$NODES")
  [[ -z $ITYPE ]] || args+=(--instance-type "$ITYPE")
  "$ROOT/hack/cluster/fake-nodes.sh" "${args[@]}" >&2
fi
if [[ $((NODES + ADDED)) -gt 0 ]]; then
  # A new node carries node.kubernetes.io/not-ready:NoSchedule until the node lifecycle
  # controller sees it Ready; gangs (which do not tolerate it) could not be placed until then.
  lifecycle_taints() {
    kubectl get nodes -l phalanx.dev/fake-node=true \
      -o jsonpath='{range .items[*]}{range .spec.taints[*]}{.key}{"\n"}{end}{end}' | grep -c '^node.kubernetes.io/' || true
  }
  deadline=$((SECONDS + 120))
  while [[ $(lifecycle_taints) != 0 ]]; do
    ((SECONDS < deadline)) || { echo "[phalanx-up] FAILED: fake nodes still carry node.kubernetes.io/ taints after 120s" >&2; exit 1; }
    sleep 1
  done
fi
ok=1
log "up: $NODES fake $PRESET nodes${ADD_NODES[*]:+ and ${ADD_NODES[*]}}; stop with hack/phalanx-down.sh"
echo "$KUBECONFIG_PATH"

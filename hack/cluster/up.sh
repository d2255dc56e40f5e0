#!/usr/bin/env bash
# Start a local Kubernetes control plane for Phalanx integration/e2e tests:
# etcd, kube-apiserver (TLS, RBAC+Node authz, service-account keys), kube-controller-manager
# and kwok (fake kubelets), all on 127.0.0.1 with free ports. Optionally kube-scheduler.
#
# Usage: hack/cluster/up.sh [--scheduler-config FILE] [--ttl SECONDS]
# Env:   PHALANX_CLUSTER_DIR (default /tmp/phalanx-cluster)  state: certs, logs, pids, env
#        PHALANX_CACHE       (default ~/.cache/phalanx)       built binaries (build.sh)
#        PHALANX_SCHEDULER_CONFIG=FILE   same as --scheduler-config
#        PHALANX_CLUSTER_TTL=SECONDS     same as --ttl: a watchdog runs down.sh after that long
#        PHALANX_ADMISSION_PLUGINS=A,B   more kube-apiserver admission plugins beside NodeRestriction
#                                        (e.g. OwnerReferencesPermissionEnforcement)
#        PHALANX_NODE_LEASE_SECONDS=N    kwok's node Lease duration (default 40, a kubelet's; kwok
#                                        renews every N/4 s) and, when set, kube-controller-manager's
#                                        --node-monitor-grace-period=Ns: for thousands of fake nodes,
#                                        whose renewals 2 cores cannot keep up with at 40 s
# The admin kubeconfig path is printed as the LAST line of stdout.
# Refuses to start if the state dir holds a live cluster; a dead one is cleaned up first.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
HERE="$PHX_CLUSTER_HACK"
DIR="$PHALANX_CLUSTER_DIR"
SCHED_CONFIG=${PHALANX_SCHEDULER_CONFIG:-}
TTL=${PHALANX_CLUSTER_TTL:-0}
LEASE_S=${PHALANX_NODE_LEASE_SECONDS:-40}
[[ $LEASE_S =~ ^[0-9]+$ && $LEASE_S -ge 10 ]] || { echo "[up] FAILED: PHALANX_NODE_LEASE_SECONDS must be a whole number of seconds >= 10 (got '$LEASE_S')" >&2; exit 2; }
KCM_GRACE=()
[[ -z ${PHALANX_NODE_LEASE_SECONDS:-} ]] || KCM_GRACE=(--node-monitor-grace-period="${LEASE_S}s")
while [[ $# -gt 0 ]]; do
  case $1 in
    --scheduler-config) SCHED_CONFIG=$2; shift 2 ;;
    --ttl) TTL=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "up.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

log() { echo "[up] $*" >&2; }

for b in etcd etcdctl kube-apiserver kube-controller-manager kwok; do phx_need_bin "$b"; done
[[ -z $SCHED_CONFIG ]] || phx_need_bin kube-scheduler
command -v openssl >/dev/null || { echo "[up] FAILED: openssl not found" >&2; exit 1; }
command -v kubectl >/dev/null || { echo "[up] FAILED: kubectl not found" >&2; exit 1; }

if [[ -f $DIR/pids ]]; then
  while read -r name pid st; do
    if phx_alive "$pid" "$st"; then
      echo "[up] FAILED: a cluster is already running in $DIR ($name pid $pid); run hack/cluster/down.sh first or set PHALANX_CLUSTER_DIR" >&2
      exit 1
    fi
  done <"$DIR/pids"
fi
rm -rf "$DIR"
mkdir -p "$DIR"/{pki,logs,run,etcd-data}
chmod 700 "$DIR"
: >"$DIR/pids"

# If anything below fails, stop what was started so nothing is left behind.
ok=0
cleanup_on_fail() {
  if [[ $ok != 1 ]]; then
    log "start failed; stopping what was started (logs kept in $DIR/logs until down.sh)"
    PHALANX_KEEP_DIR=1 "$HERE/down.sh" >&2 || true
  fi
}
trap cleanup_on_fail EXIT

# ---------------------------------------------------------------- ports
ETCD_PORT=$(phx_free_port); ETCD_PEER_PORT=$(phx_free_port)
APISERVER_PORT=$(phx_free_port); KCM_PORT=$(phx_free_port); KWOK_PORT=$(phx_free_port)
SCHEDULER_PORT=$(phx_free_port)
APISERVER_URL="https://127.0.0.1:$APISERVER_PORT"

# ---------------------------------------------------------------- PKI
log "generating CA, serving and client certificates in $DIR/pki"
P=$DIR/pki
ossl() { openssl "$@" 2>>"$DIR/logs/openssl.log" >/dev/null || { echo "[up] FAILED: openssl $1 (see $DIR/logs/openssl.log)" >&2; exit 1; }; }
ossl req -x509 -newkey rsa:2048 -nodes -keyout "$P/ca.key" -out "$P/ca.crt" -days 3650 \
  -subj "/CN=phalanx-local-ca" -addext "basicConstraints=critical,CA:TRUE" \
  -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"
signed() { # name subject extfile-content
  local n=$1 subj=$2 ext=$3
  printf '%s\n' "$ext" >"$P/$n.ext"
  ossl req -newkey rsa:2048 -nodes -keyout "$P/$n.key" -out "$P/$n.csr" -subj "$subj"
  ossl x509 -req -in "$P/$n.csr" -CA "$P/ca.crt" -CAkey "$P/ca.key" -CAcreateserial \
    -out "$P/$n.crt" -days 3650 -extfile "$P/$n.ext"
  rm -f "$P/$n.csr" "$P/$n.ext"
}
CLIENT_EXT=$'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth'
signed apiserver "/CN=kube-apiserver" $'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local'
signed admin "/O=system:masters/CN=phalanx-admin" "$CLIENT_EXT"
signed kube-controller-manager "/CN=system:kube-controller-manager" "$CLIENT_EXT"
signed kube-scheduler "/CN=system:kube-scheduler" "$CLIENT_EXT"
# kwok plays every kubelet; the Node authorizer would only let system:node:<name> touch
# its own node, so kwok gets a privileged identity instead.
signed kwok "/O=system:masters/CN=kwok" "$CLIENT_EXT"
ossl genrsa -out "$P/sa.key" 2048
ossl rsa -in "$P/sa.key" -pubout -out "$P/sa.pub"

kubeconfig() { # name
  local n=$1
  cat >"$DIR/$n.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: phalanx-local
  cluster:
    server: $APISERVER_URL
    certificate-authority-data: $(base64 -w0 "$P/ca.crt")
users:
- name: $n
  user:
    client-certificate-data: $(base64 -w0 "$P/$n.crt")
    client-key-data: $(base64 -w0 "$P/$n.key")
contexts:
- name: phalanx-local
  context:
    cluster: phalanx-local
    user: $n
current-context: phalanx-local
KC
  chmod 600 "$DIR/$n.kubeconfig"
}
kubeconfig admin; kubeconfig kube-controller-manager; kubeconfig kube-scheduler; kubeconfig kwok
cp "$DIR/admin.kubeconfig" "$DIR/kubeconfig"

# ---------------------------------------------------------------- env file
cat >"$DIR/env" <<ENV
# Written by hack/cluster/up.sh. In a shell: set -a; source this file; set +a (exported, the
# CLI reads PHALANX_SCHEDULER_GRPC and the scripts PHALANX_CLUSTER_DIR from the environment).
PHALANX_CLUSTER_DIR=$DIR
PHALANX_KUBECONFIG=$DIR/kubeconfig
KUBERNETES_VERSION=$KUBERNETES_VERSION
APISERVER_URL=$APISERVER_URL
APISERVER_PORT=$APISERVER_PORT
ETCD_ENDPOINTS=http://127.0.0.1:$ETCD_PORT
ETCD_PORT=$ETCD_PORT
ETCD_PEER_PORT=$ETCD_PEER_PORT
KCM_PORT=$KCM_PORT
KWOK_PORT=$KWOK_PORT
SCHEDULER_PORT=$SCHEDULER_PORT
CA_CERT=$P/ca.crt
ADMIN_CERT=$P/admin.crt
ADMIN_KEY=$P/admin.key
ENV

# ---------------------------------------------------------------- launch scripts
runscript() { # name command...
  local n=$1; shift
  { echo "#!/usr/bin/env bash"; echo "# $n, written by hack/cluster/up.sh"; printf 'exec'; printf ' %q' "$@"; echo; } >"$DIR/run/$n.sh"
}
runscript etcd "$(phx_bin etcd)" --name=phalanx --data-dir="$DIR/etcd-data" \
  --listen-client-urls="http://127.0.0.1:$ETCD_PORT" --advertise-client-urls="http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls="http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster="phalanx=http://127.0.0.1:$ETCD_PEER_PORT" \
  --listen-metrics-urls="" --unsafe-no-fsync=true --quota-backend-bytes=8589934592 --log-level=warn

runscript kube-apiserver "$(phx_bin kube-apiserver)" \
  --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
  --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$APISERVER_PORT" \
  --tls-cert-file="$P/apiserver.crt" --tls-private-key-file="$P/apiserver.key" \
  --cert-dir="$DIR/pki/apiserver-certdir" \
  --client-ca-file="$P/ca.crt" \
  --authorization-mode=Node,RBAC --anonymous-auth=true \
  --enable-admission-plugins="NodeRestriction${PHALANX_ADMISSION_PLUGINS:+,$PHALANX_ADMISSION_PLUGINS}" \
  --service-account-issuer="$APISERVER_URL" \
  --service-account-key-file="$P/sa.pub" --service-account-signing-key-file="$P/sa.key" \
  --service-cluster-ip-range=10.0.0.0/24 --allow-privileged=true \
  --endpoint-reconciler-type=none \
  --shutdown-watch-termination-grace-period=2s \
  --profiling=false --v=1

# The client's default 20 requests/s lets the node lifecycle controller lift new nodes'
# not-ready taints at ~5 nodes/s: 975 s for 5,000 kwok nodes (docs/benchmarks.md, kubernetes#67823).
runscript kube-controller-manager "$(phx_bin kube-controller-manager)" \
  --kubeconfig="$DIR/kube-controller-manager.kubeconfig" \
  --authentication-kubeconfig="$DIR/kube-controller-manager.kubeconfig" \
  --authorization-kubeconfig="$DIR/kube-controller-manager.kubeconfig" \
  --bind-address=127.0.0.1 --secure-port="$KCM_PORT" \
  --cert-dir="$DIR/pki/kcm-certdir" \
  --controllers='*' --leader-elect=false --use-service-account-credentials=true \
  --service-account-private-key-file="$P/sa.key" --root-ca-file="$P/ca.crt" \
  --cluster-signing-cert-file="$P/ca.crt" --cluster-signing-key-file="$P/ca.key" \
  --service-cluster-ip-range=10.0.0.0/24 --allocate-node-cidrs=false \
  --kube-api-qps=200 --kube-api-burst=400 "${KCM_GRACE[@]}" \
  --profiling=false --v=1

runscript kwok "$(phx_bin kwok)" --config="$HERE/kwok.yaml" \
  --kubeconfig="$DIR/kwok.kubeconfig" \
  --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
  --node-lease-duration-seconds="$LEASE_S" \
  --server-address="127.0.0.1:$KWOK_PORT" --node-ip=127.0.0.1 --cidr=10.244.0.0/16

# ---------------------------------------------------------------- start
curl_api() { curl -sf --max-time 3 --cacert "$P/ca.crt" --cert "$P/admin.crt" --key "$P/admin.key" "$APISERVER_URL$1"; }
kc() { kubectl --kubeconfig="$DIR/kubeconfig" --request-timeout=5s "$@"; }

if [[ $TTL -gt 0 ]]; then
  # Watchdog: bounds the cluster's life even if nobody calls down.sh.
  # (sleep runs as a child so that down.sh's SIGTERM to the watchdog also ends the sleep)
  { echo "#!/usr/bin/env bash"
    echo 'trap '"'"'kill "$s" 2>/dev/null; exit 0'"'"' TERM INT'
    printf 'sleep %q & s=$!\nwait "$s"\nexport PHALANX_CLUSTER_DIR=%q\nexec %q\n' "$TTL" "$DIR" "$HERE/down.sh"; } >"$DIR/run/watchdog.sh"
  phx_start watchdog >/dev/null
  log "watchdog will run down.sh in ${TTL}s"
fi

log "etcd $ETCD_VERSION on 127.0.0.1:$ETCD_PORT"
phx_start etcd >/dev/null
phx_wait 30 "etcd" etcd curl -sf --max-time 2 "http://127.0.0.1:$ETCD_PORT/health"

log "kube-apiserver $KUBERNETES_VERSION on $APISERVER_URL"
phx_start kube-apiserver >/dev/null
phx_wait 90 "kube-apiserver /readyz" kube-apiserver curl_api /readyz

log "kube-controller-manager on 127.0.0.1:$KCM_PORT"
phx_start kube-controller-manager >/dev/null
phx_wait 60 "kube-controller-manager /healthz" kube-controller-manager curl -skf --max-time 2 "https://127.0.0.1:$KCM_PORT/healthz"

log "kwok $KWOK_VERSION (server 127.0.0.1:$KWOK_PORT)"
phx_start kwok >/dev/null
phx_wait 60 "kwok /healthz" kwok curl -sf --max-time 2 "http://127.0.0.1:$KWOK_PORT/healthz"

log "waiting for namespace default and serviceaccount default/default"
phx_wait 60 "namespace default" kube-controller-manager kc get namespace default
phx_wait 60 "serviceaccount default/default" kube-controller-manager kc -n default get serviceaccount default

if [[ -n $SCHED_CONFIG ]]; then
  "$HERE/start-scheduler.sh" "$SCHED_CONFIG" >&2
fi

ok=1
log "cluster up: $APISERVER_URL (state in $DIR; stop with hack/cluster/down.sh)"
echo "$DIR/kubeconfig"

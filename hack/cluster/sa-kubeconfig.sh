#!/usr/bin/env bash
# Write a kubeconfig for a ServiceAccount of the running local cluster: the API server and CA
# of $PHALANX_CLUSTER_DIR/env and a token from `kubectl create token`, so a binary run out of
# cluster acts with exactly that ServiceAccount's RBAC (as it would in a pod).
# Usage: hack/cluster/sa-kubeconfig.sh NAMESPACE SERVICEACCOUNT OUT [--duration 4h]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
DIR="$PHALANX_CLUSTER_DIR"
[[ $# -ge 3 ]] || { echo "usage: sa-kubeconfig.sh NAMESPACE SERVICEACCOUNT OUT [--duration 4h]" >&2; exit 2; }
ns=$1 sa=$2 out=$3 duration=4h
shift 3
while [[ $# -gt 0 ]]; do
  case $1 in
    --duration) duration=$2; shift 2 ;;
    *) echo "sa-kubeconfig.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -f $DIR/env ]] || { echo "[sa-kubeconfig] FAILED: no running cluster in $DIR" >&2; exit 1; }
# shellcheck disable=SC1091
source "$DIR/env"
token=$(kubectl --kubeconfig="$DIR/kubeconfig" -n "$ns" create token "$sa" --duration="$duration") ||
  { echo "[sa-kubeconfig] FAILED: no token for serviceaccount $ns/$sa" >&2; exit 1; }
umask 077
cat >"$out" <<KC
apiVersion: v1
kind: Config
clusters:
- name: phalanx-local
  cluster:
    server: $APISERVER_URL
    certificate-authority-data: $(base64 -w0 "$CA_CERT")
users:
- name: $ns-$sa
  user:
    token: $token
contexts:
- name: phalanx-local
  context:
    cluster: phalanx-local
    user: $ns-$sa
    namespace: $ns
current-context: phalanx-local
KC

#!/usr/bin/env bash
# Compact etcd's history of the running local cluster up to its current revision (and
# defragment), so watches resuming from an older resourceVersion get "410 Gone /
# too old resource version". Prints the compacted revision.
# Usage: hack/cluster/compact-etcd.sh
# Note: kube-apiserver's watch cache serves recent resourceVersions from memory; a client
# resuming from an RV older than the cache window gets 410 once etcd is compacted past it.
# kube-apiserver also compacts etcd itself every 5 minutes (--etcd-compaction-interval).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
DIR="$PHALANX_CLUSTER_DIR"
[[ -f $DIR/env ]] || { echo "[compact] FAILED: no running cluster in $DIR" >&2; exit 1; }
# shellcheck disable=SC1091
source "$DIR/env"
ETCDCTL=$(phx_bin etcdctl)
export ETCDCTL_API=3
rev=$("$ETCDCTL" --endpoints="$ETCD_ENDPOINTS" endpoint status -w json | jq -r '.[0].Status.header.revision')
[[ $rev =~ ^[0-9]+$ ]] || { echo "[compact] FAILED: could not read etcd revision" >&2; exit 1; }
"$ETCDCTL" --endpoints="$ETCD_ENDPOINTS" compaction --physical "$rev" >&2
"$ETCDCTL" --endpoints="$ETCD_ENDPOINTS" defrag >&2 || true
echo "$rev"

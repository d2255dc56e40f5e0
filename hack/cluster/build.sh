#!/usr/bin/env bash
# Build the pinned upstream binaries of the local test control plane from Go modules
# and cache them outside the checkout:
#   ${PHALANX_CACHE:-$HOME/.cache/phalanx}/bin/<name>-<version>/<name>
# A binary already in the cache that runs (`--version`) is reused; a version bump in
# versions.env builds into a new directory. Idempotent.
#
# Usage: hack/cluster/build.sh [name...]   (default: all)
#   names: etcd etcdctl kube-apiserver kube-controller-manager kube-scheduler kwok helm
# Env: PHALANX_CACHE, GOFLAGS (default -p=2), NICE (default 10), PHALANX_FORCE_REBUILD=1
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
HERE="$PHX_CLUSTER_HACK"

command -v go >/dev/null || { echo "[build] FAILED: go not found (expected /usr/local/go/bin/go)" >&2; exit 1; }
export GOFLAGS="${GOFLAGS:--p=2}"
export CGO_ENABLED=0
NICE=${NICE:-10}
ALL=(etcd etcdctl kube-apiserver kube-controller-manager kwok kube-scheduler helm)
WANT=("$@"); [[ ${#WANT[@]} -gt 0 ]] || WANT=("${ALL[@]}")

# module dir, package, version check command, ldflags for each binary
spec() {
  local kv=$KUBERNETES_VERSION minor
  minor=${kv#v1.}; minor=${minor%%.*}
  local kld="-s -w -X k8s.io/component-base/version.gitVersion=$kv -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/component-base/version.buildDate=1970-01-01T00:00:00Z -X k8s.io/client-go/pkg/version.gitVersion=$kv -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor"
  case $1 in
    kube-apiserver|kube-controller-manager|kube-scheduler)
      MOD=k8s PKG=k8s.io/kubernetes/cmd/$1 VCMD="--version" VWANT="Kubernetes $kv" LDF=$kld
      MODREQ="k8s.io/kubernetes $kv" ;;
    etcd) MOD=etcd PKG=go.etcd.io/etcd/server/v3 VCMD="--version" VWANT="etcd Version: ${ETCD_VERSION#v}" LDF="-s -w"
      MODREQ="go.etcd.io/etcd/server/v3 $ETCD_VERSION" ;;
    etcdctl) MOD=etcd PKG=go.etcd.io/etcd/etcdctl/v3 VCMD="version" VWANT="etcdctl version: ${ETCD_VERSION#v}" LDF="-s -w"
      MODREQ="go.etcd.io/etcd/etcdctl/v3 $ETCD_VERSION" ;;
    kwok) MOD=kwok PKG=sigs.k8s.io/kwok/cmd/kwok VCMD="--version" VWANT="${KWOK_VERSION#v}" LDF="-s -w"
      MODREQ="sigs.k8s.io/kwok $KWOK_VERSION" ;;
    helm) MOD=helm PKG=helm.sh/helm/v3/cmd/helm VCMD="version --short" VWANT="$HELM_VERSION" LDF="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
      MODREQ="helm.sh/helm/v3 $HELM_VERSION" ;;
    *) echo "[build] FAILED: unknown binary '$1' (known: ${ALL[*]})" >&2; exit 2 ;;
  esac
}

works() { # bin
  local out
  # shellcheck disable=SC2086
  out=$(HOME=${HOME:-/tmp} timeout 20 "$1" $VCMD 2>&1) || return 1
  [[ $out == *"$VWANT"* ]]
}

for name in "${WANT[@]}"; do
  spec "$name"
  ver=$(phx_version "$name")
  bin=$(phx_bin "$name")
  if [[ -z ${PHALANX_FORCE_REBUILD:-} && -x $bin ]] && works "$bin"; then
    echo "[build] $name $ver: cached at $bin"
    continue
  fi
  if ! grep -qE "^\s*(require )?${MODREQ}( |$)" "$HERE/$MOD/go.mod"; then
    echo "[build] FAILED: $name: hack/cluster/$MOD/go.mod does not require '$MODREQ' (versions.env changed?); run hack/cluster/pin.sh $MOD and commit" >&2
    exit 1
  fi
  echo "[build] $name $ver ($PKG) ..."
  start=$(date +%s)
  tmpdir=$(mktemp -d "$PHALANX_CACHE/bin/.tmp-$name.XXXXXX" 2>/dev/null || { mkdir -p "$PHALANX_CACHE/bin"; mktemp -d "$PHALANX_CACHE/bin/.tmp-$name.XXXXXX"; })
  # A module with patches (hack/cluster/$MOD/patches/*.patch, each saying why) is built from a
  # patched copy of its upstream source, put in place of the module by a copy of go.mod.
  modfile=()
  mapfile -t patches < <(phx_patches "$MOD")
  if ((${#patches[@]})); then
    upstream=$(cd "$HERE/$MOD" && go mod download -json "${MODREQ% *}@${MODREQ#* }" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
    [[ -d $upstream ]] || { rm -rf "$tmpdir"; echo "[build] FAILED: $name: cannot download ${MODREQ% *}@${MODREQ#* }" >&2; exit 1; }
    cp -r "$upstream" "$tmpdir/src" && chmod -R u+w "$tmpdir/src"
    for p in "${patches[@]}"; do
      if ! patch -s -p1 -d "$tmpdir/src" <"$p"; then
        rm -rf "$tmpdir"; echo "[build] FAILED: $name: patch $p does not apply to ${MODREQ#* }" >&2; exit 1
      fi
      echo "[build] $name: applied $(basename "$p")"
    done
    cp "$HERE/$MOD/go.mod" "$HERE/$MOD/go.sum" "$tmpdir/"
    echo "replace ${MODREQ% *} => $tmpdir/src" >>"$tmpdir/go.mod"
    modfile=(-modfile "$tmpdir/go.mod")
  fi
  if ! (cd "$HERE/$MOD" && nice -n "$NICE" go build -mod=readonly "${modfile[@]}" -trimpath -ldflags "$LDF" -o "$tmpdir/$name" "$PKG"); then
    rm -rf "$tmpdir"
    echo "[build] FAILED: $name $ver: go build $PKG in hack/cluster/$MOD failed (see output above)" >&2
    exit 1
  fi
  if ! works "$tmpdir/$name"; then
    echo "[build] FAILED: $name $ver: built binary does not report '$VWANT' for '$VCMD':" >&2
    # shellcheck disable=SC2086
    "$tmpdir/$name" $VCMD >&2 || true
    rm -rf "$tmpdir"; exit 1
  fi
  rm -rf "$tmpdir/src" "$tmpdir/go.mod" "$tmpdir/go.sum"
  rm -rf "$(dirname "$bin")"
  mkdir -p "$(dirname "$(dirname "$bin")")"
  mv "$tmpdir" "$(dirname "$bin")"
  echo "[build] $name $ver: built in $(( $(date +%s) - start ))s -> $bin"
done
echo "[build] all done"

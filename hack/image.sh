#!/usr/bin/env bash
# Builds the Phalanx container image (deploy/image/Containerfile) with buildah from the binaries
# already built in the build dir, writes it as an OCI archive and smoke-tests it.
#
# Usage: hack/image.sh [--output PATH] [--tag NAME:TAG] [--storage DIR]
#   --output PATH   the OCI archive to write (default BUILD/image/phalanx-<version>.oci.tar)
#   --tag NAME:TAG  the image name in buildah's storage and in the archive
#                   (default phalanx:<version>, <version> from the binaries' --version)
#   --storage DIR   keep buildah's images and containers under DIR (DIR/root, DIR/run) instead
#                   of buildah's default storage; tests use it to leave no global state
# Env: PHALANX_BUILD_DIR (default build), STORAGE_DRIVER (default vfs: works everywhere,
# including inside containers, at the cost of copying each layer), SOURCE_DATE_EPOCH (the
# image's timestamps; default the checkout's last commit time, so a rebuild of the same binaries
# gives the same digests).
#
# Steps: stage a root filesystem in a temporary directory (the three binaries, stripped,
# in /usr/local/bin; every shared library `ldd` resolves for them and the dynamic loader, copied
# under the path the loader looks them up by; /etc/passwd and /etc/group with the nonroot user
# 65532), `buildah bud --isolation chroot` it FROM scratch, push it to the archive, then in a
# throwaway working container run `phalanx-operator --version`, `phalanx-scheduler --version` and
# `phalanx version` and check the image's configured user is 65532:65532. Installs buildah with
# apt-get when missing. Re-running replaces the image and the archive. The last line of stdout is
# one JSON object: tag, archive path and bytes, manifest and layer digests, sizes, checks passed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${PHALANX_BUILD_DIR:-build}"
[[ $BUILD == /* ]] || BUILD="$ROOT/$BUILD"
OUTPUT="" TAG="" STORAGE=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --output) OUTPUT=$2; shift 2 ;;
    --tag) TAG=$2; shift 2 ;;
    --storage) STORAGE=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "image.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
log() { echo "[image] $*" >&2; }
die() { echo "[image] FAILED: $*" >&2; exit 1; }
umask 022
t0=$SECONDS

# The binaries, under the names and places CMake builds them.
declare -A BINARIES=(
  [phalanx-operator]="$BUILD/operator/phalanx-operator"
  [phalanx-scheduler]="$BUILD/scheduler/server/phalanx-scheduler"
  [phalanx]="$BUILD/cli/phalanx"
)
for name in phalanx-operator phalanx-scheduler phalanx; do
  [[ -x ${BINARIES[$name]} ]] ||
    die "${BINARIES[$name]} is not built; build it first: cmake --build $BUILD --target phalanx-operator phalanx-scheduler phalanx (or hack/setup.sh)"
done

# One version for all three, from the binaries themselves (what the image really holds).
version_of() { # name -> the version the binary prints
  local out
  case $1 in
    phalanx) out=$("${BINARIES[$1]}" version) ;;
    *) out=$("${BINARIES[$1]}" --version) ;;
  esac || die "$1 could not print its version"
  [[ $out =~ ^$1\ ([^[:space:]]+)$ ]] || die "$1 printed '$out' for its version, want '$1 <version>'"
  echo "${BASH_REMATCH[1]}"
}
VERSION=$(version_of phalanx-operator)
for name in phalanx-scheduler phalanx; do
  v=$(version_of "$name")
  [[ $v == "$VERSION" ]] || die "phalanx-operator is $VERSION but $name is $v: rebuild all three from one checkout"
done
project_version=$(sed -nE 's/^project\(phalanx VERSION ([^ )]+).*/\1/p' "$ROOT/CMakeLists.txt")
[[ $project_version == "$VERSION" ]] ||
  log "warning: the binaries are $VERSION but CMakeLists.txt says $project_version (stale build?)"
TAG=${TAG:-phalanx:$VERSION}
OUTPUT=${OUTPUT:-$BUILD/image/phalanx-$VERSION.oci.tar}
[[ $OUTPUT == /* ]] || OUTPUT="$PWD/$OUTPUT"

# Tools: buildah from Debian when missing; strip/readelf come with build-essential (binutils).
if ! command -v buildah >/dev/null 2>&1; then
  SUDO=""
  if [[ $(id -u) != 0 ]]; then
    command -v sudo >/dev/null 2>&1 || die "buildah is not installed and we are neither root nor have sudo: apt-get install buildah"
    SUDO=sudo
  fi
  log "installing buildah (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  # Another apt-get may hold the lock for a while on a machine being set up: wait for it.
  if ! $SUDO apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 buildah >&2; then
    $SUDO apt-get update -qq -o DPkg::Lock::Timeout=600 >&2
    $SUDO apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 buildah >&2 ||
      die "apt-get install buildah failed"
  fi
fi
for tool in strip readelf ldd jq; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool is missing (hack/setup.sh installs it)"
done

BUILDAH=(buildah --storage-driver "${STORAGE_DRIVER:-vfs}")
if [[ -n $STORAGE ]]; then
  mkdir -p "$STORAGE"
  STORAGE=$(cd "$STORAGE" && pwd)
  BUILDAH+=(--root "$STORAGE/root" --runroot "$STORAGE/run")
fi

# --- the root filesystem --------------------------------------------------------------------
# A fresh directory per run: a test building beside a user's build never shares it.
WORK=$(mktemp -d "${TMPDIR:-/tmp}/phalanx-image.XXXXXX")
SMOKE=""
cleanup() {
  rm -rf "$WORK"
  [[ -z $SMOKE ]] || "${BUILDAH[@]}" rm "$SMOKE" >/dev/null 2>&1 || true
}
trap cleanup EXIT
CONTEXT="$WORK/context" ROOTFS="$WORK/context/rootfs"
mkdir -p "$ROOTFS/usr/local/bin" "$ROOTFS/etc"

# Every file the loader maps for one binary: its PT_INTERP and each library ldd resolves (the
# transitive closure of DT_NEEDED through the real search path). vdso has no file; a library that
# does not resolve is an error now rather than at the pod's start.
libraries_of() { # binary
  local out interp
  out=$(ldd "$1") || die "ldd $1 failed"
  if grep -q 'not found' <<<"$out"; then
    die "$1 needs libraries this machine does not have: $(grep 'not found' <<<"$out" | tr -s '\t ' ' ')"
  fi
  interp=$(readelf -l "$1" | sed -nE 's/.*Requesting program interpreter: ([^]]+)\].*/\1/p')
  [[ -n $interp ]] || die "$1 has no program interpreter (is it a static or non-ELF file?)"
  echo "$interp"
  awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' <<<"$out"
}
for name in "${!BINARIES[@]}"; do libraries_of "${BINARIES[$name]}" >>"$WORK/libraries"; done
mapfile -t LIBS < <(sort -u "$WORK/libraries")
for lib in "${LIBS[@]}"; do
  # Under the path the loader asks for, as a regular file: the soname symlink's target content.
  mkdir -p "$ROOTFS$(dirname "$lib")"
  cp -L "$lib" "$ROOTFS$lib"
done
for name in "${!BINARIES[@]}"; do
  # Debug info stays in the build dir's copy; the image carries only what runs.
  strip --strip-all -o "$ROOTFS/usr/local/bin/$name" "${BINARIES[$name]}"
  chmod 0755 "$ROOTFS/usr/local/bin/$name"
done
# No shell exists in the image, so the login shell names the conventional refusal.
cat >"$ROOTFS/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/sbin/nologin
nonroot:x:65532:65532:nonroot:/:/sbin/nologin
EOF
cat >"$ROOTFS/etc/group" <<'EOF'
root:x:0:
nonroot:x:65532:
EOF
chmod 0644 "$ROOTFS/etc/passwd" "$ROOTFS/etc/group"
ROOTFS_BYTES=$(du -sb "$ROOTFS" | cut -f1)
log "staged 3 binaries, ${#LIBS[@]} libraries (loader included), $ROOTFS_BYTES bytes"

# --- the image --------------------------------------------------------------------------------
# Removing the old image first keeps repeated builds from piling untagged copies into storage.
"${BUILDAH[@]}" rmi -f "$TAG" >/dev/null 2>&1 || true
# Stamped with the commit's time, not now: the same binaries give the same image digest.
REVISION=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)
git -C "$ROOT" diff --quiet HEAD 2>/dev/null || REVISION="$REVISION-dirty"
EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || date +%s)}
log "building $TAG"
build_log="$WORK/buildah.log"
if ! "${BUILDAH[@]}" bud --isolation chroot --layers=false --format oci \
    --timestamp "$EPOCH" --identity-label=false \
    --build-arg "VERSION=$VERSION" --build-arg "REVISION=$REVISION" \
    --build-arg "CREATED=$(date -u -d "@$EPOCH" +%Y-%m-%dT%H:%M:%SZ)" \
    -f "$ROOT/deploy/image/Containerfile" -t "$TAG" "$CONTEXT" >"$build_log" 2>&1; then
  cat "$build_log" >&2
  die "buildah bud failed"
fi
IMAGE_ID=$("${BUILDAH[@]}" inspect --type image --format '{{.FromImageID}}' "$TAG")

# --- smoke test in a throwaway working container -----------------------------------------------
USER_CONFIG=$("${BUILDAH[@]}" inspect --type image --format '{{.OCIv1.Config.User}}' "$TAG")
[[ $USER_CONFIG == 65532:65532 ]] || die "the image runs as '$USER_CONFIG', want 65532:65532"
SMOKE=$("${BUILDAH[@]}" from --pull-never --name "phalanx-image-smoke-$$" "$TAG")
smoke() { # expected-output command...
  local want=$1 out; shift
  out=$("${BUILDAH[@]}" run --isolation chroot "$SMOKE" -- "$@" 2>&1) ||
    die "in the image, '$*' failed: $out"
  # buildah run under chroot isolation has once returned success with no output at all on this
  # loaded 2-core machine (clean-clone CI, 2026-12-01; the same binary printed its version in
  # the run before). Nothing printed is retried once, and said so; a wrong answer is not.
  if [[ -z $out ]]; then
    log "in the image: $* printed nothing; running it once more"
    out=$("${BUILDAH[@]}" run --isolation chroot "$SMOKE" -- "$@" 2>&1) ||
      die "in the image, '$*' failed: $out"
  fi
  [[ $out == "$want" ]] || die "in the image, '$*' printed '$out', want '$want'"
  log "in the image: $* -> $out"
}
smoke "phalanx-operator $VERSION" /usr/local/bin/phalanx-operator --version
smoke "phalanx-scheduler $VERSION" /usr/local/bin/phalanx-scheduler --version
smoke "phalanx $VERSION" /usr/local/bin/phalanx version
"${BUILDAH[@]}" rm "$SMOKE" >/dev/null
SMOKE=""

# --- the archive --------------------------------------------------------------------------------
mkdir -p "$(dirname "$OUTPUT")"
rm -f "$OUTPUT" "$OUTPUT.tmp"
if ! "${BUILDAH[@]}" push --quiet --format oci "$TAG" "oci-archive:$OUTPUT.tmp:$TAG" >"$build_log" 2>&1; then
  cat "$build_log" >&2
  die "buildah push to oci-archive:$OUTPUT failed"
fi
mv "$OUTPUT.tmp" "$OUTPUT"
MANIFEST=$(tar -xOf "$OUTPUT" index.json | jq -r '.manifests[0].digest')
manifest_json=$(tar -xOf "$OUTPUT" "blobs/${MANIFEST/://}")
LAYERS=$(jq -c '[.layers[].digest]' <<<"$manifest_json")
LAYER_BYTES=$(jq '[.layers[].size] | add' <<<"$manifest_json")
ARCHIVE_BYTES=$(stat -c %s "$OUTPUT")
log "wrote $OUTPUT ($ARCHIVE_BYTES bytes) in $((SECONDS - t0))s"
jq -cn --arg tag "$TAG" --arg version "$VERSION" --arg archive "$OUTPUT" \
  --argjson archive_bytes "$ARCHIVE_BYTES" --arg manifest "$MANIFEST" --argjson layers "$LAYERS" \
  --argjson layer_bytes "$LAYER_BYTES" --argjson rootfs_bytes "$ROOTFS_BYTES" \
  --argjson libraries "${#LIBS[@]}" --arg image_id "$IMAGE_ID" --arg user "$USER_CONFIG" \
  --argjson seconds $((SECONDS - t0)) \
  '{tag: $tag, version: $version, archive: $archive, archive_bytes: $archive_bytes,
    manifest_digest: $manifest, layer_digests: $layers, layer_bytes: $layer_bytes,
    rootfs_bytes: $rootfs_bytes, libraries: $libraries, image_id: $image_id, user: $user,
    smoke_test: "passed", seconds: $seconds}'

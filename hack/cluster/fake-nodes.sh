#!/usr/bin/env bash
# Create kwok-managed fake GPU nodes with AWS topology labels in the running local cluster.
#
# Usage: hack/cluster/fake-nodes.sh [--preset eks|eks-4layer|gb200] [--instance-type TYPE]
#          [--count N] [--nodes-per-block N] [--blocks-per-spine N] [--spines-per-layer1 N]
#          [--prefix NAME] [--start I] [--label K=V]... [--taint K=V:EFFECT]... [--no-wait]
#          [--parallel N]   (concurrent kubectl applies, default 8)
#          [--gpus N]       GPUs per node instead of the instance type's (benchmarks that pack
#                           more 1-GPU pods than 8 per node; the gpu.count label follows)
#        hack/cluster/fake-nodes.sh --delete [--prefix NAME]     (delete fake nodes)
#
# Topology: node i is in finest block  b = i / nodes-per-block (layer-3; layer-4 for
# eks-4layer), b / blocks-per-spine is its layer-2 (layer-3 for eks-4layer) domain, and so on
# up to layer-1. gb200 adds nvidia.com/gpu.clique and topology.k8s.aws/ultraserver-id,
# 18 nodes per NVLink clique (nodes-per-block defaults to 18 so cliques align with blocks).
# Label values are readable and unique per prefix: nn-<prefix>-l<level>-<index>.
# Nodes carry annotation kwok.x-k8s.io/node=fake (kwok manages them) and label
# phalanx.dev/fake-node=true. Applied with `kubectl apply --server-side` of a List, split
# over --parallel kubectl processes (kubectl sends a List's items one request at a time).
# Waits until all N are Ready unless --no-wait.
# Env: KUBECONFIG / PHALANX_KUBECONFIG (default $PHALANX_CLUSTER_DIR/kubeconfig).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
KC=${PHALANX_KUBECONFIG:-${KUBECONFIG:-$PHALANX_CLUSTER_DIR/kubeconfig}}
preset=eks itype="" count=4 npb="" bps=4 spl1=4 prefix="" start=0 wait=1 delete=0 parallel=${PHALANX_FAKE_NODES_PARALLEL:-8}
extra_labels=() taints=() gpus=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --preset) preset=$2; shift 2 ;;
    --instance-type) itype=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    --nodes-per-block) npb=$2; shift 2 ;;
    --blocks-per-spine) bps=$2; shift 2 ;;
    --spines-per-layer1) spl1=$2; shift 2 ;;
    --prefix) prefix=$2; shift 2 ;;
    --start) start=$2; shift 2 ;;
    --label) extra_labels+=("$2"); shift 2 ;;
    --taint) taints+=("$2"); shift 2 ;;
    --no-wait) wait=0; shift ;;
    --parallel) parallel=$2; shift 2 ;;
    --gpus) gpus=$2; shift 2 ;;
    --delete) delete=1; shift ;;
    -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "fake-nodes.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
kc() { kubectl --kubeconfig="$KC" "$@"; }

if [[ $delete == 1 ]]; then
  sel=phalanx.dev/fake-node=true
  [[ -z $prefix ]] || sel="$sel,phalanx.dev/fake-node-prefix=$prefix"
  kc delete nodes -l "$sel" --wait=false
  exit 0
fi

case $preset in
  eks) : "${itype:=p5.48xlarge}" ;;
  eks-4layer) : "${itype:=p6-b200.48xlarge}" ;;
  gb200) : "${itype:=p6e-gb200.36xlarge}" ;;
  *) echo "fake-nodes.sh: unknown preset '$preset' (eks|eks-4layer|gb200)" >&2; exit 2 ;;
esac
[[ $count =~ ^[0-9]+$ && $count -ge 1 ]] || { echo "fake-nodes.sh: --count must be >= 1" >&2; exit 2; }
[[ $gpus =~ ^[0-9]+$ ]] || { echo "fake-nodes.sh: --gpus wants a count" >&2; exit 2; }

tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/phalanx-fake-nodes.XXXXXX")
trap 'rm -rf "$tmpdir"' EXIT
tmp="$tmpdir/nodes"
python3 - "$preset" "$itype" "$count" "${npb:-0}" "$bps" "$spl1" "$prefix" "$start" \
  "$(IFS=$'\n'; echo "${extra_labels[*]:-}")" "$(IFS=$'\n'; echo "${taints[*]:-}")" "$tmp" "$parallel" "$gpus" <<'PY'
import json, sys
preset, itype, count, npb, bps, spl1, prefix, start, extra, taints = sys.argv[1:11]
count, npb, bps, spl1, start = int(count), int(npb), int(bps), int(spl1), int(start)
# The instance types' published specifications, as sim/instance_catalog.cc has them (and
# docs/local-cluster.md's table).
HW = {
    "p5.48xlarge":        dict(gpu=8, efa=32, cpu=192, mem="2048Gi", arch="amd64", product="NVIDIA-H100-80GB-HBM3"),
    "p5e.48xlarge":       dict(gpu=8, efa=32, cpu=192, mem="2048Gi", arch="amd64", product="NVIDIA-H200"),
    "p5en.48xlarge":      dict(gpu=8, efa=16, cpu=192, mem="2048Gi", arch="amd64", product="NVIDIA-H200"),
    "p6-b200.48xlarge":   dict(gpu=8, efa=8,  cpu=192, mem="2048Gi", arch="amd64", product="NVIDIA-B200"),
    "p6-b300.48xlarge":   dict(gpu=8, efa=0,  cpu=192, mem="4096Gi", arch="amd64", product="NVIDIA-B300"),
    "p6e-gb200.36xlarge": dict(gpu=4, efa=4,  cpu=144, mem="960Gi",  arch="arm64", product="NVIDIA-GB200"),
}
if itype not in HW:
    sys.exit("fake-nodes.sh: unknown instance type %r (known: %s)" % (itype, ", ".join(HW)))
hw = dict(HW[itype])
if int(sys.argv[13]) > 0:
    hw["gpu"] = int(sys.argv[13])
if not prefix:
    prefix = itype.split(".")[0]
levels = 4 if preset == "eks-4layer" else 3
CLIQUE = 18
if npb <= 0:
    npb = CLIQUE if preset == "gb200" else 16
L = "topology.k8s.aws/network-node-layer-%d"
items = []
for i in range(start, start + count):
    name = "%s-%04d" % (prefix, i)
    idx = i // npb                      # finest network block
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": hw["arch"],
        "node.kubernetes.io/instance-type": itype,
        "topology.kubernetes.io/region": "us-east-1",
        "topology.kubernetes.io/zone": "us-east-1a",
        "nvidia.com/gpu.count": str(hw["gpu"]),
        "nvidia.com/gpu.product": hw["product"],
        "type": "kwok",
        "phalanx.dev/fake-node": "true",
        "phalanx.dev/fake-node-prefix": prefix,
    }
    for lvl in range(levels, 0, -1):    # finest first, then coarser
        labels[L % lvl] = "nn-%s-l%d-%d" % (prefix, lvl, idx)
        if lvl == levels:
            idx //= bps
        else:
            idx //= spl1
    if preset == "gb200":
        c = i // CLIQUE
        labels["nvidia.com/gpu.clique"] = "%s-cluster.%d" % (prefix, c)
        labels["topology.k8s.aws/ultraserver-id"] = "us-%s-%d" % (prefix, c)
    for kv in filter(None, extra.split("\n")):
        k, _, v = kv.partition("=")
        labels[k] = v
    res = {"cpu": str(hw["cpu"]), "memory": hw["mem"], "pods": "110",
           "ephemeral-storage": "3500Gi", "nvidia.com/gpu": str(hw["gpu"])}
    if hw["efa"]:
        res["vpc.amazonaws.com/efa"] = str(hw["efa"])
    spec = {}
    tl = []
    for t in filter(None, taints.split("\n")):
        kv, _, effect = t.rpartition(":")
        k, _, v = kv.partition("=")
        tl.append({"key": k, "value": v, "effect": effect} if v else {"key": k, "effect": effect})
    if tl:
        spec["taints"] = tl
    items.append({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": labels,
                     "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"}},
        "spec": spec,
        "status": {"capacity": res, "allocatable": dict(res)},
    })
# One List per parallel kubectl (kubectl applies a List's items one request at a time).
out = sys.argv[11]
par = max(1, min(int(sys.argv[12]), len(items)))
for k in range(par):
    with open("%s.%d.json" % (out, k), "w") as fh:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items[k::par]}, fh)
PY
t0=$SECONDS
pids=()
for f in "$tmp".*.json; do
  kc apply --server-side --force-conflicts --field-manager=phalanx-fake-nodes -f "$f" >"$f.log" 2>&1 &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
if [[ $rc != 0 ]]; then
  echo "[fake-nodes] FAILED: kubectl apply of the node List failed:" >&2
  cat "$tmp".*.json.log | grep -v ' serverside-applied$' | head -20 >&2
  exit 1
fi
echo "[fake-nodes] applied $count $itype nodes (preset $preset) in $((SECONDS - t0))s" >&2
if [[ $wait == 1 ]]; then
  p=${prefix:-${itype%%.*}}
  deadline=$((SECONDS + 60 + count / 5))
  while :; do
    ready=$(kc get nodes -l "phalanx.dev/fake-node-prefix=$p" -o jsonpath='{range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' |
      awk -v p="$p-" -v lo="$start" -v hi="$((start + count))" '$2 == "True" && index($1, p) == 1 { i = substr($1, length(p) + 1) + 0; if (i >= lo && i < hi) n++ } END { print n + 0 }')
    (( ready >= count )) && break
    if (( SECONDS >= deadline )); then
      echo "[fake-nodes] FAILED: only $ready of $count nodes with prefix $p Ready (is kwok running? see \$PHALANX_CLUSTER_DIR/logs/kwok.log)" >&2
      exit 1
    fi
    sleep 1
  done
  echo "[fake-nodes] $ready nodes with prefix $p Ready after $((SECONDS - t0))s" >&2
fi

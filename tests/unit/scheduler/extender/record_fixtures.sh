#!/usr/bin/env bash
# Records the request bodies the real kube-scheduler sends to an extender, as unit-test fixtures
# for the extender codec (testdata/). Reproducible: run it again after a Kubernetes bump.
#
# Usage: tests/unit/scheduler/extender/record_fixtures.sh [OUT_DIR]
#   OUT_DIR defaults to this script's testdata/ directory.
#
# Needs the upstream binaries (hack/cluster/build.sh: etcd, kube-apiserver,
# kube-controller-manager, kwok, kube-scheduler) and python3. Starts a PRIVATE local cluster in
# $PHALANX_CLUSTER_DIR (default /tmp/phx-ext-record, never the shared /tmp/phalanx-cluster),
# with a 30-minute watchdog, and stops it on exit, whatever happens.
#
# What it does:
#   1. hack/cluster/up.sh, then 4 kwok fake p5 nodes (hack/cluster/fake-nodes.sh).
#   2. A recording extender (python3, 127.0.0.1, a free port): saves every request body under
#      $PHALANX_CLUSTER_DIR/bodies/<n>-<verb>.json and answers like a pass-through extender
#      (every node passes, score 0, and bind really binds through pods/binding with kubectl).
#   3. kube-scheduler with a `phalanx` profile and that extender (verbs filter, prioritize,
#      bind; managedResources nvidia.com/gpu, ignoredByScheduler), nodeCacheCapable: true.
#      Creates a gang pod (labels phalanx.dev/job=llama, phalanx.dev/rank=0, 8 GPUs,
#      schedulerName phalanx) and waits until it is bound.
#   4. kube-scheduler again with nodeCacheCapable: false (kube-scheduler then sends whole Node
#      objects in Nodes and NodeNames: null); gang pod rank 1, waits until bound.
#   5. Copies the first body of each kind to OUT_DIR:
#        filter_node_names.json      ExtenderArgs, NodeNames set, "Nodes":null
#        prioritize_node_names.json  ExtenderArgs, NodeNames set
#        bind.json                   ExtenderBindingArgs
#        filter_nodes.json           ExtenderArgs, Nodes set, "NodeNames":null
#        prioritize_nodes.json       ExtenderArgs, Nodes set
#      and writes OUT_DIR/RECORDED with the Kubernetes version and date.
# The bodies are stored byte for byte as kube-scheduler sent them.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." && pwd)
OUT=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/testdata}
export PHALANX_CLUSTER_DIR=${PHALANX_CLUSTER_DIR:-/tmp/phx-ext-record}
WORK=$(mktemp -d /tmp/phx-ext-record-work.XXXXXX)
recorder_pid=""

cleanup() {
  local rc=$?
  if [[ -n $recorder_pid ]] && kill -0 "$recorder_pid" 2>/dev/null; then
    kill "$recorder_pid" 2>/dev/null || true
    wait "$recorder_pid" 2>/dev/null || true
  fi
  "$ROOT/hack/cluster/down.sh" >/dev/null 2>&1 || true
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT

log() { echo "[record] $*" >&2; }

KUBECONFIG_PATH=$("$ROOT/hack/cluster/up.sh" --ttl 1800 | tail -1)
export PHALANX_KUBECONFIG=$KUBECONFIG_PATH
kc() { kubectl --kubeconfig "$KUBECONFIG_PATH" "$@"; }
log "cluster up: $KUBECONFIG_PATH"
"$ROOT/hack/cluster/fake-nodes.sh" --preset eks --instance-type p5.48xlarge --count 4 >&2
BODIES="$PHALANX_CLUSTER_DIR/bodies"
mkdir -p "$BODIES"

# The recording extender. It binds through kubectl so that the recorded pods really run.
cat >"$WORK/recorder.py" <<'PY'
import http.server, json, os, subprocess, sys, threading

bodies, kubeconfig, port_file = sys.argv[1:4]
lock = threading.Lock()
count = [0]

class Recorder(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        verb = self.path.rstrip("/").rsplit("/", 1)[-1]
        with lock:
            count[0] += 1
            name = "%03d-%s.json" % (count[0], verb)
        with open(os.path.join(bodies, name), "wb") as f:
            f.write(body)
        args = json.loads(body)
        if verb == "filter":
            if args.get("NodeNames") is not None:
                reply = {"NodeNames": args["NodeNames"], "FailedNodes": {},
                         "FailedAndUnresolvableNodes": {}, "Error": ""}
            else:
                reply = {"Nodes": args["Nodes"], "NodeNames": None, "FailedNodes": {},
                         "FailedAndUnresolvableNodes": {}, "Error": ""}
        elif verb == "prioritize":
            names = args.get("NodeNames")
            if names is None:
                names = [n["metadata"]["name"] for n in (args["Nodes"].get("items") or [])]
            reply = [{"Host": n, "Score": 0} for n in names]
        elif verb == "bind":
            binding = {"apiVersion": "v1", "kind": "Binding",
                       "metadata": {"name": args["PodName"], "namespace": args["PodNamespace"],
                                    "uid": args["PodUID"]},
                       "target": {"apiVersion": "v1", "kind": "Node", "name": args["Node"]}}
            done = subprocess.run(
                ["kubectl", "--kubeconfig", kubeconfig, "create", "--raw",
                 "/api/v1/namespaces/%s/pods/%s/binding" % (args["PodNamespace"], args["PodName"]),
                 "-f", "-"], input=json.dumps(binding).encode(), capture_output=True)
            reply = {"Error": "" if done.returncode == 0 else done.stderr.decode()[-500:]}
        else:
            self.send_error(404)
            return
        out = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
with open(port_file, "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
PY
python3 "$WORK/recorder.py" "$BODIES" "$KUBECONFIG_PATH" "$WORK/port" &
recorder_pid=$!
for _ in $(seq 50); do [[ -s $WORK/port ]] && break; sleep 0.1; done
PORT=$(cat "$WORK/port")
log "recording extender on 127.0.0.1:$PORT (pid $recorder_pid)"

scheduler_config() {  # $1: nodeCacheCapable
  cat <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
percentageOfNodesToScore: 100
profiles:
- schedulerName: phalanx
extenders:
- urlPrefix: http://127.0.0.1:$PORT/scheduler
  filterVerb: filter
  prioritizeVerb: prioritize
  bindVerb: bind
  weight: 1
  enableHTTPS: false
  nodeCacheCapable: $1
  ignorable: false
  httpTimeout: 5s
  managedResources:
  - name: nvidia.com/gpu
    ignoredByScheduler: true
YAML
}

gang_pod() {  # $1: rank
  cat <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: llama-$1
  namespace: default
  labels:
    app: llama
    phalanx.dev/job: llama
    phalanx.dev/rank: "$1"
spec:
  schedulerName: phalanx
  restartPolicy: Never
  tolerations:
  - key: nvidia.com/gpu
    operator: Exists
    effect: NoSchedule
  containers:
  - name: trainer
    image: registry.example/llama:1
    command: ["torchrun", "--nnodes=2", "train.py"]
    env:
    - name: RANK
      value: "$1"
    resources:
      requests:
        cpu: "4"
        memory: 16Gi
        nvidia.com/gpu: "8"
      limits:
        nvidia.com/gpu: "8"
YAML
}

wait_bound() {  # $1: pod
  for _ in $(seq 120); do
    node=$(kc get pod "$1" -o jsonpath='{.spec.nodeName}' 2>/dev/null || true)
    if [[ -n $node ]]; then log "pod $1 bound to $node"; return 0; fi
    sleep 0.5
  done
  log "FAILED: pod $1 was not bound in 60 s"; kc describe pod "$1" >&2 || true
  tail -20 "$PHALANX_CLUSTER_DIR/logs/kube-scheduler.log" >&2 || true
  return 1
}

# First body of a kind recorded after marker $1 (a body count) for pod $2 (a bind has no Pod).
first_body() {  # $1: after count, $2: verb, $3: pod name
  python3 - "$BODIES" "$1" "$2" "$3" <<'PY'
import json, os, sys
bodies, after, verb, pod = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
for name in sorted(os.listdir(bodies)):
    n, v = name[:-5].split("-", 1)
    if int(n) <= after or v != verb:
        continue
    doc = json.load(open(os.path.join(bodies, name)))
    got = doc.get("PodName") if verb == "bind" else doc["Pod"]["metadata"]["name"]
    if got == pod:
        print(os.path.join(bodies, name))
        break
PY
}

record_run() {  # $1: nodeCacheCapable, $2: rank
  scheduler_config "$1" >"$WORK/config-$1.yaml"
  "$ROOT/hack/cluster/start-scheduler.sh" "$WORK/config-$1.yaml" >&2
  local before
  before=$(find "$BODIES" -name '*.json' | wc -l)
  gang_pod "$2" | kc apply -f - >&2
  wait_bound "llama-$2"
  echo "$before"
}

mkdir -p "$OUT"
mark=$(record_run true 0)
filter=$(first_body "$mark" filter llama-0)
prioritize=$(first_body "$mark" prioritize llama-0)
bind=$(first_body "$mark" bind llama-0)
mark=$(record_run false 1)
filter_nodes=$(first_body "$mark" filter llama-1)
prioritize_nodes=$(first_body "$mark" prioritize llama-1)
for pair in "$filter:filter_node_names.json" "$prioritize:prioritize_node_names.json" \
            "$bind:bind.json" "$filter_nodes:filter_nodes.json" \
            "$prioritize_nodes:prioritize_nodes.json"; do
  src=${pair%%:*} dst=${pair#*:}
  [[ -n $src && -f $src ]] || { log "FAILED: no body recorded for $dst"; exit 1; }
  cp "$src" "$OUT/$dst"
  log "$dst: $(wc -c <"$OUT/$dst") bytes"
done
version=$(source "$PHALANX_CLUSTER_DIR/env" && echo "$KUBERNETES_VERSION")
printf 'Recorded from kube-scheduler %s on %s by record_fixtures.sh (kwok nodes, default namespace).\n' \
  "$version" "$(date -u +%Y-%m-%d)" >"$OUT/RECORDED"
log "done: $OUT"

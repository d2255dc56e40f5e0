#!/usr/bin/env bash
# phalanx-operator's benchmarks on a real control plane (issue #11): the time from `kubectl apply`
# of a TrainingJob to all its pods bound, and admissions per second with many queued jobs.
#
# Usage: hack/bench-operator.sh [--nodes N] [--jobs J] [--queued Q] [--gang-pods G]
#                               [--timeout SECONDS] [--json] [--keep-cluster]
#   --nodes N          kwok fake p5.48xlarge nodes, 8 GPUs each (default 1000)
#   --jobs J           gangs timed one after another (default 20)
#   --queued Q         1-pod jobs admitted in the throughput phase (default 1000; 0 skips it)
#   --gang-pods G      pods per gang, 8 GPUs each (default 64, at most N)
#   --timeout SECONDS  give up after this long in all (default 3600)
#   --json             print one JSON object as the LAST line of stdout (else a summary)
#   --keep-cluster     leave the cluster running afterwards (its TTL watchdog still stops it)
# Env: PHALANX_BUILD_DIR (default build): phalanx-scheduler and phalanx-operator.
#
# Brings up a PRIVATE hack/phalanx-up.sh cluster (kube-apiserver, etcd, kwok, kube-scheduler
# with phalanx-scheduler's extender, phalanx-operator) in a fresh state dir, adds the nodes
# (hack/cluster/fake-nodes.sh, eks labels) and waits until none carries a not-ready taint, and
# makes one ClusterTrainingQueue with quota twice the cluster (quota never limits admission), then:
#   1. apply -> bound. J times, one job at a time: a TrainingJob of G pods x 8 GPUs (required
#      level topology.k8s.aws/network-node-layer-2) is applied with kubectl; watches on its pods
#      and on the job, opened before the apply, stamp each event when it arrives (monotonic
#      clock; an event takes milliseconds, tens under load, to reach the watch), so the figure
#      is kubectl's start -> the watch event that shows the last pod with spec.nodeName. (The pods' PodScheduled lastTransitionTime has 1 s
#      resolution, too coarse for a few-second figure.) The same watches split it into apply
#      (kubectl start -> job created), admit (-> status.admission), pods (-> all G pods
#      created) and bind (-> all bound). Then the job is deleted and its pods waited out.
#   2. admissions/s. phalanx-operator is stopped by PID, Q TrainingJobs of 1 pod x 1 GPU are
#      created (8 kubectl processes), the operator is started again, and the figure is Q / (its
#      /readyz -> the sum of phalanx_admitted_workloads_total reaching Q), read from its /metrics
#      every 0.1 s. Also reported: the admission cycles run until then, the cycles' own times
#      from its log, and when all Q pods were bound (polled every 2 s).
# cpu_s: CPU seconds of each cluster process and of the whole machine ("machine", other work
# included) during each phase, with the phase's wall time, to see where the cores went; "idle"
# is 10 s of the cluster doing nothing before phase 1 (what keeping N kwok nodes alive costs).
# apiserver_requests: kube-apiserver's request counts (apiserver_request_total, watches left
# out) during phase 2, by verb and resource, the 12 largest: the API work Q admissions cause.
# Progress goes to stderr. p50/p99 are nearest-rank (with 20 samples p99 is the maximum).
# Exit 0 when every gang was bound and every queued job admitted, 1 otherwise, 2 on bad
# arguments. Figures depend on the machine's load: load_avg_1m is sampled during the run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NODES=1000 JOBS=20 QUEUED=1000 GANG="" TIMEOUT=3600 JSON=0 KEEP=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --nodes) NODES=$2; shift 2 ;;
    --jobs) JOBS=$2; shift 2 ;;
    --queued) QUEUED=$2; shift 2 ;;
    --gang-pods) GANG=$2; shift 2 ;;
    --timeout) TIMEOUT=$2; shift 2 ;;
    --json) JSON=1; shift ;;
    --keep-cluster) KEEP=1; shift ;;
    -h|--help) sed -n '2,41p' "$0"; exit 0 ;;
    *) echo "bench-operator.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ -n $GANG ]] || GANG=$((NODES < 64 ? NODES : 64))
for v in NODES JOBS QUEUED GANG TIMEOUT; do
  [[ ${!v} =~ ^[0-9]+$ ]] || { echo "bench-operator.sh: --${v,,} wants a count, got '${!v}'" >&2; exit 2; }
done
((NODES >= 1 && GANG >= 1 && GANG <= NODES && TIMEOUT >= 120)) ||
  { echo "bench-operator.sh: need --nodes >= 1, 1 <= --gang-pods <= --nodes, --timeout >= 120" >&2; exit 2; }
((QUEUED <= NODES * 8)) ||
  { echo "bench-operator.sh: --queued $QUEUED jobs of 1 GPU do not fit on $NODES nodes of 8 GPUs" >&2; exit 2; }

BUILD="${PHALANX_BUILD_DIR:-build}"
[[ $BUILD == /* ]] || BUILD="$ROOT/$BUILD"
export PHALANX_BUILD_DIR="$BUILD"
for b in scheduler/server/phalanx-scheduler operator/phalanx-operator; do
  [[ -x $BUILD/$b ]] || { echo "[bench-op] FAILED: $BUILD/$b is not built (cmake --build $BUILD --target phalanx-scheduler phalanx-operator)" >&2; exit 1; }
done

BENCH_TAG=bench-op
# shellcheck source=hack/bench-lib.sh
source "$ROOT/hack/bench-lib.sh"
# CPU seconds (user + system) so far of each cluster process, and of the whole machine, to a file:
# where the cores went during a phase (and how much of them other work took).
TCK=$(getconf CLK_TCK)
api_requests() { # file: kube-apiserver's /metrics request counters
  curl -sf --max-time 20 --cacert "$CA_CERT" --cert "$ADMIN_CERT" --key "$ADMIN_KEY" "$APISERVER_URL/metrics" |
    grep '^apiserver_request_total{' >"$1" || true
}
cpu_snapshot() { # file
  { echo "time - $EPOCHREALTIME"
    awk -v t="$TCK" '$1 == "cpu" { printf "machine - %.2f\n", ($2 + $3 + $4 + $7 + $8) / t }' /proc/stat
    while read -r name pid st; do
      [[ $name != watchdog ]] && phx_alive "$pid" "$st" || continue
      awk -v n="$name" -v p="$pid" -v t="$TCK" '{ printf "%s %s %.2f\n", n, p, ($14 + $15) / t }' "/proc/$pid/stat"
    done <"$DIR/pids"; } >"$1"
}

bench_cleanup_trap

sample_load
log "starting a private cluster with $NODES fake nodes in $DIR (load average $(cut -d' ' -f1-3 /proc/loadavg))"
bench_cluster_up "$NODES"

# One ClusterTrainingQueue over every node, quota twice the cluster; a namespace per phase.
GANG_NS=bench-gang QUEUED_NS=bench-queued
kc apply -f - >/dev/null <<YAML
$(bench_flavor_yaml)
---
apiVersion: phalanx.dev/v1alpha1
kind: ClusterTrainingQueue
metadata: {name: bench}
spec:
  namespaceSelector:
    matchLabels: {phalanx.dev/bench: "true"}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu, cpu, memory]
    flavors:
    - name: bench-p5
      resources:
      - {name: nvidia.com/gpu, nominalQuota: $((NODES * 16))}
      - {name: cpu, nominalQuota: $((NODES * 384))}
      - {name: memory, nominalQuota: $((NODES * 4096))Gi}
$(for ns in $GANG_NS $QUEUED_NS; do cat <<NS
---
apiVersion: v1
kind: Namespace
metadata:
  name: $ns
  labels: {phalanx.dev/bench: "true"}
---
apiVersion: phalanx.dev/v1alpha1
kind: TrainingQueue
metadata: {name: bench, namespace: $ns}
spec: {clusterQueue: bench}
NS
done)
YAML
for ns in $GANG_NS $QUEUED_NS; do
  phx_wait 60 "serviceaccount $ns/default" kube-controller-manager kc -n "$ns" get serviceaccount default
done

# What the idle cluster costs: kwok renews every node's Lease, controllers resync.
cpu_snapshot "$DIR/cpu.idle.0"; sleep 10; cpu_snapshot "$DIR/cpu.idle.1"

# ---------------------------------------------------------------- 1. apply -> bound
log "apply -> bound: $JOBS jobs of $GANG pods x 8 GPUs, one at a time"
GANG_OUT="$DIR/gang.json"
cpu_snapshot "$DIR/cpu.gang.0"
python3 - "$APISERVER_URL" "$CA_CERT" "$ADMIN_CERT" "$ADMIN_KEY" "$GANG_NS" "$JOBS" "$GANG" \
  "$(remaining)" >"$GANG_OUT" <<'PY'
import http.client, json, socket, ssl, subprocess, sys, threading, time, urllib.parse

api, ca, cert, key, ns = sys.argv[1:6]
jobs, gang, budget = int(sys.argv[6]), int(sys.argv[7]), float(sys.argv[8])
end = time.monotonic() + budget
host = urllib.parse.urlsplit(api)
tls = ssl.create_default_context(cafile=ca)
tls.load_cert_chain(cert, key)
JOBS = "/apis/phalanx.dev/v1alpha1/namespaces/%s/trainingjobs" % ns
PODS = "/api/v1/namespaces/%s/pods" % ns

def log(msg):
    print("[bench-op] " + msg, file=sys.stderr, flush=True)

def left():
    return max(1.0, end - time.monotonic())

def request(path, params, timeout=30):
    conn = http.client.HTTPSConnection(host.hostname, host.port, context=tls, timeout=timeout)
    conn.request("GET", path + "?" + urllib.parse.urlencode(params))
    resp = conn.getresponse()
    if resp.status != 200:
        raise RuntimeError("GET %s: HTTP %d %s" % (path, resp.status, resp.read()[:200]))
    return conn, resp

def get(path, params):
    conn, resp = request(path, params)
    try:
        return json.loads(resp.read())
    finally:
        conn.close()

def watch(path, params, handle):
    """Lists, hands every item to handle, then watches from the list's resourceVersion in a
    thread; returns once the watch's response headers arrived (the watch is open), with a
    function that stops it. Events are stamped when their line arrives."""
    body = get(path, params)
    for item in body["items"]:
        handle("ADDED", item, time.monotonic())
    conn, resp = request(path, dict(params, watch="1", timeoutSeconds=str(int(left())),
                                    resourceVersion=body["metadata"]["resourceVersion"]),
                         timeout=None)
    def loop():
        try:
            for line in iter(resp.readline, b""):
                if line.strip():
                    ev = json.loads(line)
                    handle(ev["type"], ev["object"], time.monotonic())
        except (OSError, ValueError, http.client.HTTPException):
            pass  # stopped
    threading.Thread(target=loop, daemon=True).start()
    def stop():
        # shutdown, not close: it wakes the reader blocked in recv (a close from this thread
        # would wait for the reader's buffer lock, i.e. for the next event)
        try:
            conn.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
    return stop

MANIFEST = """apiVersion: phalanx.dev/v1alpha1
kind: TrainingJob
metadata: {name: %(name)s, namespace: %(ns)s}
spec:
  queueName: bench
  replicas: %(gang)d
  topology: {required: topology.k8s.aws/network-node-layer-2}
  template:
    spec:
      containers:
      - name: trainer
        image: registry.example/trainer:1
        resources:
          requests: {cpu: "180", memory: 1800Gi, nvidia.com/gpu: 8}
          limits: {nvidia.com/gpu: 8}
"""

samples = []
for i in range(jobs):
    name = "gang-%02d" % i
    cv = threading.Condition()
    t = {"created": None, "admitted": None}
    created, bound = {}, {}

    def on_job(kind, obj, at):
        with cv:
            if kind in ("ADDED", "MODIFIED") and obj["metadata"]["name"] == name:
                t["created"] = t["created"] or at
                if obj.get("status", {}).get("admission") and not t["admitted"]:
                    t["admitted"] = at
                cv.notify_all()

    def on_pod(kind, obj, at):
        with cv:
            if kind not in ("ADDED", "MODIFIED"):
                return
            pod = obj["metadata"]["name"]
            created.setdefault(pod, at)
            if obj["spec"].get("nodeName"):
                bound.setdefault(pod, at)
            cv.notify_all()

    watches = [watch(JOBS, {"fieldSelector": "metadata.name=" + name}, on_job),
               watch(PODS, {"labelSelector": "phalanx.dev/job=" + name}, on_pod)]
    t0 = time.monotonic()
    r = subprocess.run(["kubectl", "apply", "-f", "-"], input=MANIFEST % {"name": name, "ns": ns, "gang": gang},
                       text=True, capture_output=True, timeout=left())
    if r.returncode != 0:
        log("FAILED: kubectl apply of %s: %s" % (name, r.stderr.strip()))
        sys.exit(1)
    with cv:
        done = cv.wait_for(lambda: len(bound) >= gang, timeout=left())
    for stop in watches:
        stop()
    if not done:
        log("FAILED: %s: %d of %d pods bound (%d created, admitted: %s) before the deadline" %
            (name, len(bound), gang, len(created), t["admitted"] is not None))
        sys.exit(1)
    last_created = sorted(created.values())[gang - 1]
    sample = {"job": name,
              "apply_to_bound_s": max(bound.values()) - t0,
              "apply_s": t["created"] - t0,
              "admit_s": t["admitted"] - t["created"],
              "pods_created_s": last_created - t["admitted"],
              "bind_s": max(bound.values()) - last_created}
    samples.append(sample)
    log("%s: apply -> %d pods bound %.2fs (apply %.2f, admit %.2f, create pods %.2f, bind %.2f)" %
        (name, gang, sample["apply_to_bound_s"], sample["apply_s"], sample["admit_s"],
         sample["pods_created_s"], sample["bind_s"]))
    # Delete the job and wait for its pods to go before the next one.
    r = subprocess.run(["kubectl", "-n", ns, "delete", "trainingjob", name, "--wait=true",
                        "--timeout=%ds" % int(left())], text=True, capture_output=True, timeout=left() + 10)
    if r.returncode != 0:
        log("FAILED: kubectl delete of %s: %s" % (name, r.stderr.strip()))
        sys.exit(1)
    while True:
        items = get(PODS, {"labelSelector": "phalanx.dev/job=" + name})["items"]
        if not items:
            break
        if time.monotonic() >= end:
            log("FAILED: %d pods of %s still exist at the deadline" % (len(items), name))
            sys.exit(1)
        time.sleep(0.2)
    with open("/proc/loadavg") as fh:
        sample["load_avg_1m"] = float(fh.read().split()[0])
json.dump(samples, sys.stdout)
PY
cpu_snapshot "$DIR/cpu.gang.1"
sample_load

# ---------------------------------------------------------------- 2. admissions/s
QUEUED_OUT="{}"
if ((QUEUED > 0)); then
  metrics() { curl -sf --max-time 2 "http://127.0.0.1:$PHALANX_OPERATOR_HEALTH_PORT/metrics" || true; }
  log "stopping phalanx-operator; creating $QUEUED jobs of 1 pod x 1 GPU"
  phx_stop phalanx-operator 30 || { log "FAILED: phalanx-operator did not stop"; exit 1; }
  python3 - "$QUEUED_NS" "$QUEUED" "$DIR/queued" <<'PY'
import json, sys
ns, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
items = [{"apiVersion": "phalanx.dev/v1alpha1", "kind": "TrainingJob",
          "metadata": {"name": "q-%05d" % i, "namespace": ns},
          "spec": {"queueName": "bench", "replicas": 1,
                   "template": {"spec": {"containers": [{
                       "name": "trainer", "image": "registry.example/trainer:1",
                       "resources": {"requests": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": 1},
                                     "limits": {"nvidia.com/gpu": 1}}}]}}}} for i in range(n)]
par = max(1, min(8, n))
for k in range(par):
    with open("%s.%d.json" % (out, k), "w") as fh:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items[k::par]}, fh)
PY
  t_create=$(now)
  pids=()
  for f in "$DIR"/queued.*.json; do
    kc create -f "$f" >"$f.log" 2>&1 &
    pids+=($!)
  done
  rc=0
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  ((rc == 0)) || { log "FAILED: creating the queued jobs:"; grep -hv ' created$' "$DIR"/queued.*.log | head -5 >&2; exit 1; }
  create_s=$(elapsed "$t_create" "$(now)")
  n=$(kc -n "$QUEUED_NS" get trainingjobs -o name | wc -l)
  ((n == QUEUED)) || { log "FAILED: $n of $QUEUED jobs exist after creating them"; exit 1; }
  log "$QUEUED jobs created in ${create_s}s; starting phalanx-operator"
  sample_load
  OPLOG="$DIR/logs/phalanx-operator.log"
  log_from=$(($(wc -l <"$OPLOG") + 1))
  api_requests "$DIR/api.admission.0"
  cpu_snapshot "$DIR/cpu.admission.0"
  t_start=$(now)
  phx_start phalanx-operator >/dev/null
  # Admissions count as each status write returns, cycles as each cycle ends (and only then is
  # its "admission cycle: ... N admitted" line logged): the cycle that wrote the last admission
  # may still be running when the last admission counts. Each poll reads the log, then the
  # metrics; the cycles are the counter, plus that cycle if its line was not logged yet.
  logged_admitted() {
    tail -n "+$log_from" "$OPLOG" | sed -n 's/.*admission cycle: [0-9]* workloads, \([0-9]*\) admitted,.*/\1/p' |
      awk '{ s += $1 } END { printf "%d", s }'
  }
  t_ready="" admitted=0 cycles=0
  while ((SECONDS < deadline)); do
    logged=$(logged_admitted)
    m=$(metrics)
    if [[ -z $t_ready ]] && curl -sf --max-time 2 -o /dev/null "http://127.0.0.1:$PHALANX_OPERATOR_HEALTH_PORT/readyz"; then
      t_ready=$(now)
    fi
    admitted=$(awk '$1 ~ /^phalanx_admitted_workloads_total\{/ { s += $2 } END { printf "%d", s }' <<<"$m")
    cycles=$(awk '$1 == "phalanx_admission_cycles_total" { c = $2 } END { printf "%d", c }' <<<"$m")
    ((admitted >= QUEUED)) && break
    sleep 0.1
  done
  t_done=$(now)
  cpu_snapshot "$DIR/cpu.admission.1"
  api_requests "$DIR/api.admission.1"
  ((admitted >= QUEUED)) || { log "FAILED: $admitted of $QUEUED admitted before the deadline"; exit 1; }
  ((logged >= QUEUED)) || cycles=$((cycles + 1))
  log "all $QUEUED admitted $(elapsed "$t_ready" "$t_done")s after /readyz ($(elapsed "$t_start" "$t_done")s after start), in $cycles cycles"
  sample_load
  # The API server must agree: every job has status.admission.
  with_admission=$(kc -n "$QUEUED_NS" get trainingjobs -o json | jq '[.items[] | select(.status.admission != null)] | length')
  bound=0 t_bound=""
  while ((SECONDS < deadline)); do
    bound=$(kc -n "$QUEUED_NS" get pods -o jsonpath='{range .items[*]}{.spec.nodeName}{"\n"}{end}' | grep -c . || true)
    if ((bound >= QUEUED)); then t_bound=$(now); break; fi
    sleep 2
  done
  [[ -n $t_bound ]] || log "only $bound of $QUEUED pods bound before the deadline"
  sample_load
  # The admission cycles this operator logged, "admitted ms" per cycle that did something.
  cycle_log=$(tail -n "+$log_from" "$OPLOG" | sed -n 's/.*admission cycle: \([0-9]*\) workloads, \([0-9]*\) admitted,.* \([0-9.]*\) ms$/\2 \3/p')
  QUEUED_OUT=$(python3 - "$QUEUED" "$create_s" "$t_start" "$t_ready" "$t_done" "${t_bound:-}" "$cycles" \
    "$with_admission" "$bound" "$cycle_log" <<'PY'
import json, sys
q, create_s, t_start, t_ready, t_done, t_bound, cycles, with_adm, bound, log = sys.argv[1:11]
t_start, t_ready, t_done = float(t_start), float(t_ready), float(t_done)
admit_s = t_done - t_ready
logged = [l.split() for l in log.splitlines() if l.strip()]
print(json.dumps({
    "queued_jobs": int(q), "queued_create_s": float(create_s),
    "operator_start_to_ready_s": round(t_ready - t_start, 2),
    "admission_s": round(admit_s, 2),
    "admissions_per_s": round(int(q) / admit_s, 1) if admit_s > 0 else None,
    "admission_cycles": int(cycles or 0),
    "admitting_cycles": [{"admitted": int(a), "ms": float(ms)} for a, ms in logged],
    "admitted": int(with_adm),
    "queued_pods_bound": int(bound),
    "queued_pods_bound_s": round(float(t_bound) - t_ready, 1) if t_bound else None}))
PY
)
fi

python3 - "$NODES" "$GANG" "$JOBS" "$GANG_OUT" "$QUEUED_OUT" "$JSON" "${LOADS[*]}" "$DIR" <<'PY'
import json, math, os, sys
nodes, gang, jobs, gang_file, queued, as_json, loads, state = sys.argv[1:9]
def cpu(phase):
    """CPU seconds of each process between the phase's two snapshots (a process started in
    between counts from zero), the machine's, and the phase's wall time."""
    snaps = []
    for k in (0, 1):
        path = os.path.join(state, "cpu.%s.%d" % (phase, k))
        if not os.path.exists(path):
            return None
        snaps.append({n: (p, float(v)) for n, p, v in (l.split() for l in open(path))})
    a, b = snaps
    out = {n: round(v - (a[n][1] if n in a and a[n][0] == p else 0), 1) for n, (p, v) in b.items()}
    out["wall"] = round(b["time"][1] - a["time"][1], 1)
    del out["time"]
    return out
samples = json.load(open(gang_file))
def stats(key):
    v = sorted(s[key] for s in samples)
    if not v:
        return None
    rank = lambda p: v[max(0, math.ceil(p * len(v)) - 1)]
    return {"p50": round(rank(0.50), 2), "p99": round(rank(0.99), 2), "max": round(v[-1], 2),
            "min": round(v[0], 2), "samples": len(v)}
loads = [float(x) for x in loads.split()] + [s["load_avg_1m"] for s in samples]
out = {"nodes": int(nodes), "gang_pods": int(gang), "gang_gpus_per_pod": 8, "jobs": int(jobs),
       "apply_to_bound_s": stats("apply_to_bound_s"),
       "phases_s": {k: stats(k) for k in ("apply_s", "admit_s", "pods_created_s", "bind_s")}}
out.update(json.loads(queued))
out["cpu_s"] = {k: v for k in ("idle", "gang", "admission") for v in [cpu(k)] if v}
def api_requests(phase):
    counts = []
    for k in (0, 1):
        c = {}
        path = os.path.join(state, "api.%s.%d" % (phase, k))
        for line in open(path) if os.path.exists(path) else []:
            labels, _, value = line.rpartition(" ")
            lab = dict(kv.split("=", 1) for kv in labels[labels.index("{") + 1:-1].replace('"', "").split(","))
            if lab.get("verb") in ("WATCH", None):
                continue
            key = "%s %s%s" % (lab["verb"], lab.get("resource", ""),
                                "/" + lab["subresource"] if lab.get("subresource") else "")
            c[key] = c.get(key, 0) + float(value)
        counts.append(c)
    delta = {k: int(v - counts[0].get(k, 0)) for k, v in counts[1].items()}
    return dict(sorted(((k, v) for k, v in delta.items() if v > 0), key=lambda kv: -kv[1])[:12])
if "queued_jobs" in out:
    out["apiserver_requests"] = {"admission": api_requests("admission")}
out["load_avg_1m"] = round(sum(loads) / len(loads), 2)
out["load_avg_1m_range"] = [min(loads), max(loads)]
if as_json == "1":
    print(json.dumps(out))
else:
    a = out["apply_to_bound_s"]
    if a:
        print("apply -> %d pods bound (%d jobs, %d nodes): p50 %.2fs p99 %.2fs max %.2fs" %
              (out["gang_pods"], a["samples"], out["nodes"], a["p50"], a["p99"], a["max"]))
        for k, v in out["phases_s"].items():
            print("  %-15s p50 %.2fs max %.2fs" % (k, v["p50"], v["max"]))
    if "admissions_per_s" in out:
        print("admissions: %d queued jobs in %.2fs = %.1f/s, %d cycles; all pods bound after %ss" %
              (out["queued_jobs"], out["admission_s"], out["admissions_per_s"],
               out["admission_cycles"], out["queued_pods_bound_s"]))
    for phase, c in out["cpu_s"].items():
        print("CPU s during the %s phase (%.1fs wall): %s" % (phase, c["wall"], ", ".join(
            "%s %.1f" % (n, v) for n, v in sorted(c.items(), key=lambda kv: -kv[1]) if n != "wall")))
    print("load average (1 min): mean %.2f, %s-%s" % (out["load_avg_1m"], *out["load_avg_1m_range"]))
PY
if ((QUEUED > 0)); then
  got_admitted=$(jq -r .admitted <<<"$QUEUED_OUT") got_bound=$(jq -r .queued_pods_bound <<<"$QUEUED_OUT")
  if [[ $got_admitted != "$QUEUED" || $got_bound != "$QUEUED" ]]; then
    log "FAILED: $got_admitted of $QUEUED jobs show status.admission, $got_bound of their pods bound"
    exit 1
  fi
fi
ok=1

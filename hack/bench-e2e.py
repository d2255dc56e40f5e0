#!/usr/bin/env python3
"""The measuring half of hack/bench-e2e.sh (see its header): creates objects through the API
server with a pool of keep-alive HTTPS connections and stamps, with a watch opened before the
first create, the moment each pod is seen bound (spec.nodeName set) or each TrainingJob is seen
admitted (status.admission set). Every figure comes from watch events as they arrive
(time.monotonic()), not from polling or the objects' 1 s timestamps.

  bench-e2e.py plain NS PODS             plain pods, schedulerName default-scheduler
  bench-e2e.py gangs NS PODS QUEUE       TrainingJobs of gang sizes 1..64 adding up to PODS
  bench-e2e.py burst NS JOBS QUEUE CTQ   JOBS 1-pod TrainingJobs on ClusterTrainingQueue CTQ
                                         (held: stopPolicy Hold), released once all are Queued
  bench-e2e.py wipe NS                   delete every pod of NS at once (grace 0), wait for none

Env: APISERVER_URL, CA_CERT, ADMIN_CERT, ADMIN_KEY (hack/cluster/up.sh's env file),
BENCH_CREATORS (concurrent creating connections, default 16), BENCH_DEADLINE_S.
Prints one JSON object on stdout; progress on stderr. Exit 1 on a timeout or an API error.
"""
import http.client
import json
import math
import os
import queue
import socket
import ssl
import sys
import threading
import time
import urllib.parse

API = urllib.parse.urlsplit(os.environ["APISERVER_URL"])
TLS = ssl.create_default_context(cafile=os.environ["CA_CERT"])
TLS.load_cert_chain(os.environ["ADMIN_CERT"], os.environ["ADMIN_KEY"])
CREATORS = int(os.environ.get("BENCH_CREATORS", "16"))
END = time.monotonic() + float(os.environ.get("BENCH_DEADLINE_S", "3600"))
GPU_REQ = {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "1"}
JOBS_PATH = "/apis/phalanx.dev/v1alpha1/namespaces/%s/trainingjobs"
PODS_PATH = "/api/v1/namespaces/%s/pods"


def log(msg):
    print("[bench-e2e] " + msg, file=sys.stderr, flush=True)


def left():
    return max(1.0, END - time.monotonic())


def connect(timeout=60):
    return http.client.HTTPSConnection(API.hostname, API.port, context=TLS, timeout=timeout)


def call(method, path, body=None, ctype="application/json", conn=None):
    own = conn is None
    conn = conn or connect()
    try:
        data = None if body is None else (body if isinstance(body, (bytes, str)) else json.dumps(body))
        conn.request(method, path, body=data, headers={"Content-Type": ctype} if data else {})
        resp = conn.getresponse()
        payload = resp.read()
        if resp.status >= 300:
            raise RuntimeError("%s %s: HTTP %d %s" % (method, path, resp.status, payload[:300]))
        return json.loads(payload) if payload else None
    finally:
        if own:
            conn.close()


WRITE_VERBS = ("POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION")


def apiserver_writes():
    """kube-apiserver's own count of write requests so far, from every client (ours, the
    controllers, kwok), as {"resource[/subresource] VERB": n}, from apiserver_request_total;
    dry runs as "resource VERB dryRun"."""
    conn = connect()
    try:
        conn.request("GET", "/metrics")
        resp = conn.getresponse()
        text = resp.read().decode()
        if resp.status != 200:
            raise RuntimeError("GET /metrics: HTTP %d" % resp.status)
    finally:
        conn.close()
    counts = {}
    for line in text.splitlines():
        if not line.startswith("apiserver_request_total{"):
            continue
        labels = dict(kv.split("=", 1) for kv in
                      line[line.index("{") + 1:line.rindex("}")].replace('"', "").split(",") if "=" in kv)
        if labels.get("verb") not in WRITE_VERBS:
            continue
        key = labels.get("resource", "") + ("/" + labels["subresource"] if labels.get("subresource") else "")
        key += " " + labels["verb"]
        # A dry run (the operator's check of a pending job's pod template) stores nothing: kept
        # apart so "pods POST" is the pods created.
        if labels.get("dry_run"):
            key += " dryRun"
        counts[key] = counts.get(key, 0) + float(line.rsplit(" ", 1)[1])
    return counts


def writes_between(before, after):
    """The writes of one phase: {"total": n, "by_request": {...}}, largest first, every (resource,
    verb) written at least 10 times (node writes from Leases gone stale, a few hundred, used to
    fall below a cut at the 12 largest)."""
    delta = {k: int(after.get(k, 0) - before.get(k, 0)) for k in after}
    delta = {k: v for k, v in delta.items() if v > 0}
    top = sorted(((k, v) for k, v in delta.items() if v >= 10), key=lambda kv: -kv[1])
    return {"total": sum(delta.values()), "by_request": dict(top)}


class Watch:
    """List, then watch from the list's resourceVersion in a thread, resuming from the last
    resourceVersion seen when the server ends the watch (and relisting on 410 Gone);
    handle(type, obj, t) gets every item and event with its arrival time. Returns once the first
    watch is open."""

    def __init__(self, path, params, handle):
        self.path, self.params, self.handle = path, params, handle
        self.error, self.stopped, self.conn = None, False, None
        self.rv = self.relist()
        self.resp = self.open()
        threading.Thread(target=self.loop, daemon=True).start()

    def relist(self):
        body = call("GET", self.path + "?" + urllib.parse.urlencode(self.params))
        for item in body["items"]:
            self.handle("ADDED", item, time.monotonic())
        return body["metadata"]["resourceVersion"]

    def open(self):
        self.conn = connect(timeout=None)
        q = dict(self.params, watch="1", allowWatchBookmarks="true",
                 timeoutSeconds=str(int(left())), resourceVersion=self.rv)
        self.conn.request("GET", self.path + "?" + urllib.parse.urlencode(q))
        resp = self.conn.getresponse()
        if resp.status != 200:
            raise RuntimeError("watch %s: HTTP %d" % (self.path, resp.status))
        return resp

    def loop(self):
        restarts = 0
        while not self.stopped and restarts < 100:
            gone = self.read()
            if self.stopped or self.error:
                return
            restarts += 1
            try:
                if gone:
                    self.rv = self.relist()
                self.resp = self.open()
            except (OSError, RuntimeError, http.client.HTTPException) as e:
                self.error = "cannot resume the watch: %s" % e
                return
        if not self.stopped:
            self.error = "the watch ended 100 times"

    def read(self):
        """Reads events until the watch ends; True if it ended with 410 Gone."""
        # read1 and our own line split, not readline: http.client's readline on a chunked body
        # was seen sitting on events that had arrived.
        buf = b""
        try:
            while True:
                data = self.resp.read1(1 << 16)
                if not data:
                    return False
                at = time.monotonic()
                buf += data
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    if not line.strip():
                        continue
                    ev = json.loads(line)
                    obj = ev["object"]
                    if ev["type"] == "ERROR":
                        if obj.get("code") == 410:
                            return True
                        self.error = obj.get("message", "watch error")
                        return False
                    self.rv = obj["metadata"].get("resourceVersion", self.rv)
                    if ev["type"] != "BOOKMARK":
                        self.handle(ev["type"], obj, at)
        except (OSError, ValueError, http.client.HTTPException) as e:
            if not self.stopped:
                log("watch %s: %s; resuming" % (self.path, e))
            return False

    def stop(self):
        self.stopped = True
        try:
            self.conn.sock.shutdown(socket.SHUT_RDWR)
        except (OSError, AttributeError):
            pass


def create_all(path_of, objects):
    """POSTs every (key, object) with CREATORS connections; returns {key: monotonic time the
    POST was sent}."""
    work = queue.Queue()
    for item in objects:
        work.put(item)
    sent, errors = {}, []
    lock = threading.Lock()

    def worker():
        conn = connect()
        while not errors:
            try:
                key, obj = work.get_nowait()
            except queue.Empty:
                break
            with lock:
                sent[key] = time.monotonic()
            for attempt in range(5):
                try:
                    call("POST", path_of(obj), obj, conn=conn)
                    break
                except (OSError, http.client.HTTPException) as e:  # a dropped keep-alive
                    conn.close()
                    conn = connect()
                    if attempt == 4:
                        errors.append(str(e))
                except RuntimeError as e:
                    if "HTTP 409" in str(e):  # created by a retried request
                        break
                    if "HTTP 429" in str(e) and attempt < 4:
                        time.sleep(0.2 * (attempt + 1))
                        continue
                    errors.append(str(e))
                    break
        conn.close()

    threads = [threading.Thread(target=worker) for _ in range(CREATORS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError("create: " + errors[0])
    return sent


def pct(values, p):
    v = sorted(values)
    return v[max(0, math.ceil(p * len(v)) - 1)] if v else None


def rnd(x, n=3):
    return None if x is None else round(x, n)


def wait_for(cv, pred, what, watches):
    with cv:
        while not pred():
            for w in watches:
                if w.error:
                    raise RuntimeError("watch ended while waiting for %s: %s" % (what, w.error))
            if time.monotonic() >= END:
                return False
            cv.wait(timeout=1.0)
    return True


def pod_manifest(name, scheduler):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": {"phalanx.dev/bench": "plain"}},
            "spec": {"schedulerName": scheduler, "terminationGracePeriodSeconds": 0,
                     "containers": [{"name": "c", "image": "registry.example/trainer:1",
                                     "resources": {"requests": GPU_REQ,
                                                   "limits": {"nvidia.com/gpu": "1"}}}]}}


def job_manifest(name, ns, queue_name, replicas):
    return {"apiVersion": "phalanx.dev/v1alpha1", "kind": "TrainingJob",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"queueName": queue_name, "replicas": replicas,
                     "template": {"spec": {"terminationGracePeriodSeconds": 0, "containers": [{
                         "name": "trainer", "image": "registry.example/trainer:1",
                         "resources": {"requests": GPU_REQ, "limits": {"nvidia.com/gpu": "1"}}}]}}}}


def gang_sizes(pods):
    """Sizes 1, 2, 4, ..., 64 in turn (a job mix of every size, 7 jobs per 127 pods), the last
    one cut to what is left, adding up to exactly `pods`."""
    sizes, cycle, i = [], [1, 2, 4, 8, 16, 32, 64], 0
    while sum(sizes) < pods:
        sizes.append(min(cycle[i % len(cycle)], pods - sum(sizes)))
        i += 1
    return sizes


def plain(ns, pods):
    cv = threading.Condition()
    bound = {}

    def on_pod(kind, obj, at):
        if kind in ("ADDED", "MODIFIED") and obj["spec"].get("nodeName"):
            with cv:
                if obj["metadata"]["name"] not in bound:
                    bound[obj["metadata"]["name"]] = at
                    cv.notify_all()

    w = Watch(PODS_PATH % ns, {}, on_pod)
    names = ["p-%05d" % i for i in range(pods)]
    t0 = time.monotonic()
    sent = create_all(lambda o: PODS_PATH % ns, [(n, pod_manifest(n, "default-scheduler")) for n in names])
    t_created = time.monotonic()
    log("plain: %d pods created in %.1fs" % (pods, t_created - t0))
    ok = wait_for(cv, lambda: len(bound) >= pods, "plain pods bound", [w])
    w.stop()
    if not ok:
        log("FAILED: %d of %d plain pods bound before the deadline" % (len(bound), pods))
        return None
    last = max(bound.values())
    lat = [bound[n] - sent[n] for n in names]
    return {"pods": pods, "create_s": rnd(t_created - t0, 2), "all_bound_s": rnd(last - t0, 2),
            "pods_per_s": rnd(pods / (last - t0), 1),
            "pod_bound_p50_s": rnd(pct(lat, 0.5)), "pod_bound_p99_s": rnd(pct(lat, 0.99))}


def gangs(ns, pods, queue_name):
    sizes = gang_sizes(pods)
    jobs = {"g-%04d" % i: s for i, s in enumerate(sizes)}
    cv = threading.Condition()
    bound = {}        # job -> {pod: t}
    seen = {}         # pod -> when the watch first showed it (created by the operator)
    max_partial = [0]  # the most gangs seen partly bound at one moment (while they bind)

    def on_pod(kind, obj, at):
        if kind not in ("ADDED", "MODIFIED"):
            return
        job = obj["metadata"].get("labels", {}).get("phalanx.dev/job")
        if job not in jobs:
            return
        with cv:
            seen.setdefault(obj["metadata"]["name"], at)
            if not obj["spec"].get("nodeName"):
                return
            b = bound.setdefault(job, {})
            if obj["metadata"]["name"] not in b:
                b[obj["metadata"]["name"]] = at
                cv.notify_all()

    w = Watch(PODS_PATH % ns, {"labelSelector": "phalanx.dev/job"}, on_pod)
    t0 = time.monotonic()
    sent = create_all(lambda o: JOBS_PATH % ns,
                      [(n, job_manifest(n, ns, queue_name, s)) for n, s in jobs.items()])
    t_created = time.monotonic()
    log("gangs: %d TrainingJobs (%d pods, sizes 1..%d) created in %.1fs" %
        (len(jobs), pods, max(sizes), t_created - t0))

    def total():
        return sum(len(b) for b in bound.values())
    ok = wait_for(cv, lambda: total() >= pods, "gang pods bound", [w])
    w.stop()
    partial = sorted(j for j, s in jobs.items() if 0 < len(bound.get(j, {})) < s)
    unbound = sorted(j for j in jobs if not bound.get(j))
    if not ok:
        log("FAILED: %d of %d gang pods bound before the deadline; %d gangs partly bound (%s), "
            "%d with none" % (total(), pods, len(partial), " ".join(partial[:5]), len(unbound)))
    last = max((t for b in bound.values() for t in b.values()), default=t0)
    lat = [max(bound[j].values()) - sent[j] for j in jobs if len(bound.get(j, {})) == jobs[j]]
    by_size = {}
    for j, s in jobs.items():
        if len(bound.get(j, {})) == s:
            by_size.setdefault(s, []).append(max(bound[j].values()) - sent[j])
    # Where the time went: the operator's pod creates (last pod seen), then create -> bound per
    # pod (kube-scheduler's queue, the extender's filter and bind).
    pod_bound = [t - seen[p] for b in bound.values() for p, t in b.items() if p in seen]
    return {"ok": ok, "pods": pods, "jobs": len(jobs), "create_s": rnd(t_created - t0, 2),
            "pods_created_s": rnd(max(seen.values(), default=t0) - t0, 2),
            "pod_bound_p50_s": rnd(pct(pod_bound, 0.5)), "pod_bound_p99_s": rnd(pct(pod_bound, 0.99)),
            "all_bound_s": rnd(last - t0, 2), "pods_per_s": rnd(total() / (last - t0), 1) if ok else None,
            "partial_gangs": len(partial), "gangs_without_pods_bound": len(unbound),
            "gang_bound_p50_s": rnd(pct(lat, 0.5)), "gang_bound_p99_s": rnd(pct(lat, 0.99)),
            "gang_bound_p50_s_by_size": {str(s): rnd(pct(v, 0.5)) for s, v in sorted(by_size.items())}}


def burst(ns, n, queue_name, ctq):
    cv = threading.Condition()
    queued, admitted = set(), {}

    def on_job(kind, obj, at):
        if kind not in ("ADDED", "MODIFIED"):
            return
        name, status = obj["metadata"]["name"], obj.get("status") or {}
        with cv:
            if status.get("phase") == "Queued":
                queued.add(name)
            if status.get("admission") and name not in admitted:
                admitted[name] = at
            cv.notify_all()

    w = Watch(JOBS_PATH % ns, {}, on_job)
    names = ["b-%05d" % i for i in range(n)]
    t0 = time.monotonic()
    create_all(lambda o: JOBS_PATH % ns, [(k, job_manifest(k, ns, queue_name, 1)) for k in names])
    t_created = time.monotonic()
    # The operator has seen every job (its job controller wrote phase Queued) before the queue
    # is released, so the figure is admission, not the informer catching up with creates.
    ok = wait_for(cv, lambda: len(queued) >= n or admitted, "held jobs Queued", [w])
    if admitted:
        log("FAILED: %d jobs admitted while ClusterTrainingQueue %s was held" % (len(admitted), ctq))
        return None
    if not ok:
        log("FAILED: only %d of %d held jobs reached phase Queued" % (len(queued), n))
        return None
    t_queued = time.monotonic()
    log("burst: %d jobs created in %.1fs, all Queued after %.1fs; releasing %s" %
        (n, t_created - t0, t_queued - t0, ctq))
    t_release = time.monotonic()
    call("PATCH", "/apis/phalanx.dev/v1alpha1/clustertrainingqueues/" + ctq,
         {"spec": {"stopPolicy": "None"}}, ctype="application/merge-patch+json")
    ok = wait_for(cv, lambda: len(admitted) >= n, "burst admissions", [w])
    w.stop()
    if not ok:
        log("FAILED: %d of %d released jobs admitted before the deadline" % (len(admitted), n))
        return None
    lat = [admitted[k] - t_release for k in names]
    last = max(lat)
    return {"jobs": n, "create_s": rnd(t_created - t0, 2), "queued_s": rnd(t_queued - t0, 2),
            "all_admitted_s": rnd(last, 2), "admitted_per_s": rnd(n / last, 1),
            "admit_p50_s": rnd(pct(lat, 0.5)), "admit_p99_s": rnd(pct(lat, 0.99))}


def wipe(ns):
    """One delete-collection request (grace 0); a loaded API server may answer 504 before it
    has deleted 10,000 pods while it goes on deleting, so the request is repeated until none
    is left."""
    t0 = time.monotonic()
    while time.monotonic() < END:
        try:
            call("DELETE", PODS_PATH % ns + "?gracePeriodSeconds=0&timeout=300s",
                 conn=connect(timeout=330))
        except (RuntimeError, OSError) as e:
            if isinstance(e, RuntimeError) and "HTTP 504" not in str(e) and "HTTP 500" not in str(e):
                raise
            log("wipe: %s; asking again" % str(e)[:80])
        if not call("GET", PODS_PATH % ns + "?limit=1")["items"]:
            return {"wipe_s": rnd(time.monotonic() - t0, 1)}
        time.sleep(2)
    log("FAILED: pods of %s still exist at the deadline" % ns)
    return None


def main():
    mode, args = sys.argv[1], sys.argv[2:]
    try:
        if mode in ("plain", "gangs"):
            before = apiserver_writes()
            if mode == "plain":
                out = plain(args[0], int(args[1]))
            else:
                out = gangs(args[0], int(args[1]), args[2])
            # Counted up to the last bind: what the API server had to take for this phase.
            out["apiserver_writes"] = writes_between(before, apiserver_writes())
        elif mode == "burst":
            out = burst(args[0], int(args[1]), args[2], args[3])
        elif mode == "wipe":
            out = wipe(args[0])
        else:
            sys.exit("bench-e2e.py: unknown mode " + mode)
    except RuntimeError as e:
        log("FAILED: " + str(e))
        sys.exit(1)
    if out is None:
        sys.exit(1)
    print(json.dumps(out))
    sys.exit(0 if out.get("ok", True) else 1)


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# The Helm chart charts/phalanx without a cluster (seconds):
#   1. its CRDs (files/crds/) are byte-identical copies of crds/, none missing, none extra;
#   2. Chart.yaml's appVersion is the project version (CMakeLists.txt);
#   3. README.md's values table documents every value of values.yaml (hack/chart-readme.sh
#      --check), and the check catches a value without a comment;
#   4. `helm lint --strict` and `helm template` pass for the default values and each preset
#      (values-*.yaml); the rendered objects are what the chart promises: CRDs kept on
#      uninstall, RBAC without wildcards, 2 leader-elected operator replicas with anti-affinity
#      and a PodDisruptionBudget, one scheduler pod (phalanx-scheduler + kube-scheduler with only
#      the `phalanx` profile, its extender on 127.0.0.1), each preset's topology levels,
#      Services with a `metrics` port, non-root read-only containers with requests and probes;
#   5. NOTES.txt renders for each preset with NodeFlavor YAML that parses;
#      mutual TLS on the Placement gRPC API: the generated server certificate names the
#      scheduler Service and the three certificates (scheduler, operator, read-only viewer)
#      chain to the one CA (openssl verify), each binary gets its TLS flags and its Secret
#      mounted, and only the operator's certificate may change reservations
#      (--grpc-tls-writers);
#   6. bad values fail the render with a message (two operators without leader election,
#      one TLS Secret given without the other; values.schema.json: an unknown anti-affinity
#      mode, topology preset or log level, workers 0, a loopback listenHost, a port out of
#      range, a misspelt key); tls.enabled=false
#      renders no TLS flag or Secret; given Secrets get --grpc-tls-writers only from tls.writers.
# Needs helm from hack/cluster/build.sh.
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
source "$REPO_ROOT/hack/cluster/lib.sh"
CHART="$REPO_ROOT/charts/phalanx"
HELM=$(phx_bin helm)
[[ -x $HELM ]] || die "helm $(phx_version helm) is not built at $HELM; run hack/cluster/build.sh"
TMP=$(mktemp -d /tmp/phalanx-chart-static.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# --- 1. CRDs -----------------------------------------------------------------------------
bad=0
for f in "$REPO_ROOT"/crds/*.yaml; do
  copy="$CHART/files/crds/$(basename "$f")"
  if [[ ! -f $copy ]]; then echo "  missing: charts/phalanx/files/crds/$(basename "$f")"; bad=1
  elif ! cmp -s "$f" "$copy"; then echo "  differs: $copy vs crds/$(basename "$f")"; bad=1; fi
done
for copy in "$CHART"/files/crds/*.yaml; do
  [[ -f $REPO_ROOT/crds/$(basename "$copy") ]] || { echo "  extra: $copy (not in crds/)"; bad=1; }
done
[[ $bad == 0 ]] && pass "charts/phalanx/files/crds/ is identical to crds/ ($(ls "$REPO_ROOT"/crds/*.yaml | wc -l) CRDs)" ||
  fail "the chart's CRDs differ from crds/: copy them with 'cp crds/*.yaml charts/phalanx/files/crds/' (and remove stale ones)"

# --- 2. appVersion -----------------------------------------------------------------------
project=$(sed -n 's/^project(phalanx VERSION \([0-9.]*\).*/\1/p' "$REPO_ROOT/CMakeLists.txt")
app=$(sed -n 's/^appVersion: "\(.*\)"/\1/p' "$CHART/Chart.yaml")
[[ -n $project && $app == "$project" ]] && pass "Chart.yaml appVersion $app is the project version" ||
  fail "Chart.yaml appVersion '$app', CMakeLists.txt project version '$project'"

# --- 3. README values table --------------------------------------------------------------
out=$("$REPO_ROOT/hack/chart-readme.sh" --check 2>&1) && pass "$out" || fail "hack/chart-readme.sh --check: $out"
cp -r "$CHART" "$TMP/chart"
printf '\nundocumented:\n  knob: 1\n' >>"$TMP/chart/values.yaml"
out=$(PHALANX_CHART_DIR="$TMP/chart" "$REPO_ROOT/hack/chart-readme.sh" --check 2>&1) &&
  fail "the README check accepted a value without a comment" ||
  { grep -q 'undocumented.knob' <<<"$out" && pass "the README check names a value without a comment: $out" ||
    fail "the README check failed without naming the value: $out"; }

# --- 4. lint and template, default and presets ---------------------------------------------
cp -r "$CHART" "$TMP/notes-chart"
cp "$CHART/templates/NOTES.txt" "$TMP/notes-chart/files/notes.txt"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: notes}\ndata:\n  notes: {{ tpl (.Files.Get "files/notes.txt") . | toJson }}\n' \
  >"$TMP/notes-chart/templates/zz-notes.yaml"
presets=(default "$CHART"/values-*.yaml)
for p in "${presets[@]}"; do
  name=$(basename "$p" .yaml); args=()
  [[ $p == default ]] || args=(-f "$p")
  if out=$("$HELM" lint --strict "$CHART" "${args[@]}" 2>&1); then pass "helm lint --strict ($name)"
  else fail "helm lint --strict ($name): $out"; fi
  if ! "$HELM" template phalanx "$CHART" -n phalanx-system "${args[@]}" >"$TMP/$name.yaml" 2>"$TMP/$name.err"; then
    fail "helm template ($name): $(cat "$TMP/$name.err")"; continue
  fi
  if out=$(python3 - "$TMP/$name.yaml" "$name" "$REPO_ROOT" "$p" <<'PY'
import glob, os, sys, yaml
rendered, name, root, values_file = sys.argv[1:5]
docs = [d for d in yaml.safe_load_all(open(rendered)) if d]
errors = []
def err(msg): errors.append(msg)
by_kind = {}
for d in docs:
    by_kind.setdefault(d["kind"], []).append(d)
def one(kind, name_):
    for d in by_kind.get(kind, []):
        if d["metadata"]["name"] == name_:
            return d
    err("no %s %s" % (kind, name_))
    return None
preset_values = yaml.safe_load(open(values_file)) if values_file != "default" else {}
want_preset = (preset_values.get("scheduler") or {}).get("topologyPreset", "eks")
avoid = preset_values.get("avoidInstanceTypes") or []

# CRDs: the files' specs, kept on uninstall.
crds = {d["metadata"]["name"]: d for d in by_kind.get("CustomResourceDefinition", [])}
for f in sorted(glob.glob(os.path.join(root, "crds", "*.yaml"))):
    src = yaml.safe_load(open(f))
    got = crds.get(src["metadata"]["name"])
    if got is None:
        err("CRD %s not rendered" % src["metadata"]["name"]); continue
    if got["spec"] != src["spec"]:
        err("CRD %s: rendered spec differs from %s" % (src["metadata"]["name"], f))
    if (got["metadata"].get("annotations") or {}).get("helm.sh/resource-policy") != "keep":
        err("CRD %s lacks helm.sh/resource-policy: keep" % src["metadata"]["name"])

# RBAC: no wildcard anywhere.
for kind in ("ClusterRole", "Role"):
    for r in by_kind.get(kind, []):
        for rule in r.get("rules", []):
            for field in ("verbs", "resources", "apiGroups", "resourceNames"):
                if "*" in (rule.get(field) or []):
                    err("%s %s has '*' in %s" % (kind, r["metadata"]["name"], field))
op_role = one("ClusterRole", "phalanx-operator")
if op_role:
    rules = {(g, res): set(rule["verbs"]) for rule in op_role["rules"] for g in rule["apiGroups"] for res in rule["resources"]}
    for key, verbs in {("phalanx.dev", "trainingjobs/status"): {"patch"}, ("", "pods"): {"create", "delete", "list", "watch"},
                       ("phalanx.dev", "clustertrainingqueues/status"): {"patch"}, ("", "events"): {"create", "patch"}}.items():
        if not verbs <= rules.get(key, set()):
            err("operator ClusterRole: %s/%s lacks %s" % (key[0], key[1], sorted(verbs - rules.get(key, set()))))
binds = {b["roleRef"]["name"] for b in by_kind.get("ClusterRoleBinding", [])}
for role in ("system:kube-scheduler", "system:volume-scheduler", "phalanx-scheduler", "phalanx-operator"):
    if role not in binds:
        err("no ClusterRoleBinding to %s" % role)

# Operator Deployment.
op = one("Deployment", "phalanx-operator")
if op:
    spec = op["spec"]["template"]["spec"]
    args = spec["containers"][0]["args"]
    if op["spec"]["replicas"] != 2: err("operator replicas %s" % op["spec"]["replicas"])
    for a in ("--leader-elect=true", "--lease-namespace=phalanx-system", "--lease-name=phalanx-operator",
              "--placement-address=phalanx-scheduler.phalanx-system.svc:9443"):
        if a not in args: err("operator args lack %s: %s" % (a, args))
    aff = spec.get("affinity") or {}
    if "podAntiAffinity" not in aff: err("operator has no pod anti-affinity")
    if avoid:
        terms = aff.get("nodeAffinity", {}).get("requiredDuringSchedulingIgnoredDuringExecution", {}).get("nodeSelectorTerms", [])
        if not any(e.get("values") == avoid for t in terms for e in t["matchExpressions"]):
            err("operator pods do not avoid %s" % avoid)
pdb = one("PodDisruptionBudget", "phalanx-operator")

# Scheduler Deployment: one pod, two containers, the preset's levels.
sch = one("Deployment", "phalanx-scheduler")
if sch:
    if sch["spec"]["replicas"] != 1 or sch["spec"]["strategy"]["type"] != "Recreate":
        err("scheduler: replicas %s strategy %s" % (sch["spec"]["replicas"], sch["spec"]["strategy"]))
    cs = {c["name"]: c for c in sch["spec"]["template"]["spec"]["containers"]}
    if set(cs) != {"phalanx-scheduler", "kube-scheduler"}: err("scheduler containers %s" % sorted(cs))
    else:
        a = cs["phalanx-scheduler"]["args"]
        if "--topology-preset=%s" % want_preset not in a: err("phalanx-scheduler args lack --topology-preset=%s: %s" % (want_preset, a))
        if "--extender-address=127.0.0.1:8888" not in a: err("the extender must listen on 127.0.0.1:8888: %s" % a)
        versions = dict(l.strip().split("=", 1) for l in open(os.path.join(root, "hack/cluster/versions.env")) if "=" in l and not l.startswith("#"))
        want_image = "registry.k8s.io/kube-scheduler:%s" % versions["KUBERNETES_VERSION"]
        if cs["kube-scheduler"]["image"] != want_image: err("kube-scheduler image %s, want %s" % (cs["kube-scheduler"]["image"], want_image))
    if avoid and "nodeAffinity" not in (sch["spec"]["template"]["spec"].get("affinity") or {}):
        err("scheduler pod does not avoid %s" % avoid)
cm = one("ConfigMap", "phalanx-kube-scheduler")
if cm:
    cfg = yaml.safe_load(cm["data"]["kube-scheduler-config.yaml"])
    if [p["schedulerName"] for p in cfg["profiles"]] != ["phalanx"]: err("kube-scheduler profiles %s" % cfg["profiles"])
    elif cfg["profiles"][0].get("plugins", {}).get("postFilter", {}).get("disabled") != [{"name": "DefaultPreemption"}]:
        err("the phalanx profile must not preempt (postFilter DefaultPreemption disabled): %s" % cfg["profiles"][0])
    ext = cfg["extenders"][0]
    if ext["urlPrefix"] != "http://127.0.0.1:8888/scheduler" or ext["bindVerb"] != "bind" or ext["ignorable"] is not False:
        err("kube-scheduler extender %s" % ext)
    le = cfg["leaderElection"]
    if le.get("resourceName") != "phalanx-kube-scheduler" or le.get("resourceNamespace") != "phalanx-system":
        err("kube-scheduler leaderElection %s" % le)

# Services with a metrics port.
for svc, ports in (("phalanx-operator", {"metrics"}), ("phalanx-scheduler", {"metrics", "grpc"})):
    s = one("Service", svc)
    if s and {p["name"] for p in s["spec"]["ports"]} != ports: err("Service %s ports %s" % (svc, s["spec"]["ports"]))

# NetworkPolicy: the unauthenticated Placement gRPC port open to the operator's pods only; the
# metrics/probe port and kube-scheduler's HTTPS port open to all (probes, Prometheus).
np = one("NetworkPolicy", "phalanx-scheduler")
if np and sch:
    spec = np["spec"]
    if spec["podSelector"]["matchLabels"] != sch["spec"]["selector"]["matchLabels"]:
        err("NetworkPolicy selects %s, not the scheduler pod" % spec["podSelector"])
    grpc = [r for r in spec["ingress"] if any(p["port"] == "grpc" for p in r.get("ports", []))]
    opens = [r for r in spec["ingress"] if "from" not in r]
    if len(grpc) != 1 or [f.get("podSelector", {}).get("matchLabels") for f in grpc[0].get("from", [])] != [op["spec"]["selector"]["matchLabels"]]:
        err("NetworkPolicy: gRPC must be open to the operator's pods only: %s" % spec["ingress"])
    if sorted(p["port"] for r in opens for p in r["ports"]) != ["https", "metrics"]:
        err("NetworkPolicy: metrics and https must be open to all: %s" % spec["ingress"])
    ports = {p["name"] for c in sch["spec"]["template"]["spec"]["containers"] for p in c.get("ports", [])}
    if not {"grpc", "metrics", "https"} <= ports:
        err("the NetworkPolicy's named ports are not all container ports: %s" % sorted(ports))

# Mutual TLS of the Placement API: generated Secrets, flags, mounts; the certificates are checked
# with openssl (SANs, chain to the one CA, key usage).
import base64, subprocess, tempfile
tls = {}
for who in ("scheduler", "operator", "viewer"):
    s = one("Secret", "phalanx-%s-tls" % who)
    if s:
        tls[who] = {k: base64.b64decode(v) for k, v in s["data"].items()}
        if set(tls[who]) != {"ca.crt", "tls.crt", "tls.key"}: err("Secret phalanx-%s-tls keys %s" % (who, sorted(tls[who])))
if set(tls) >= {"scheduler", "operator"} and "viewer" not in tls:
    err("the chart generated the TLS Secrets but no read-only phalanx-viewer-tls")
if set(tls) >= {"scheduler", "operator"} and all(t.get("ca.crt") == tls["scheduler"].get("ca.crt") for t in tls.values()):
    with tempfile.TemporaryDirectory() as d:
        for who in tls:
            for k, v in tls[who].items():
                open(os.path.join(d, "%s-%s" % (who, k)), "wb").write(v)
        for who in tls:
            r = subprocess.run(["openssl", "verify", "-CAfile", os.path.join(d, "scheduler-ca.crt"), os.path.join(d, "%s-tls.crt" % who)], capture_output=True, text=True)
            if r.returncode != 0: err("the %s certificate does not chain to the CA: %s" % (who, r.stdout + r.stderr))
            cert = subprocess.run(["openssl", "x509", "-in", os.path.join(d, "%s-tls.crt" % who), "-noout", "-modulus"], capture_output=True, text=True).stdout
            key = subprocess.run(["openssl", "rsa", "-in", os.path.join(d, "%s-tls.key" % who), "-noout", "-modulus"], capture_output=True, text=True).stdout
            if not cert or cert != key: err("the %s key does not match its certificate" % who)
        for who, cn in (("operator", "phalanx-operator"), ("viewer", "phalanx-viewer")):
            subject = subprocess.run(["openssl", "x509", "-in", os.path.join(d, "%s-tls.crt" % who), "-noout", "-subject"], capture_output=True, text=True).stdout
            if "CN = %s" % cn not in subject and "CN=%s" % cn not in subject: err("the %s certificate's subject is %s, not CN %s" % (who, subject.strip(), cn))
        text = subprocess.run(["openssl", "x509", "-in", os.path.join(d, "scheduler-tls.crt"), "-noout", "-text"], capture_output=True, text=True).stdout
        for name in ("phalanx-scheduler.phalanx-system.svc", "phalanx-scheduler.phalanx-system.svc.cluster.local"):
            if "DNS:" + name not in text: err("the scheduler certificate does not name %s" % name)
elif tls:
    err("the TLS Secrets do not share one CA")
# Only the operator's certificate may change reservations; the viewer's may read.
want_flags = {"phalanx-scheduler": ["--grpc-tls-cert=/etc/phalanx/tls/tls.crt", "--grpc-tls-key=/etc/phalanx/tls/tls.key", "--grpc-tls-client-ca=/etc/phalanx/tls/ca.crt", "--grpc-tls-writers=phalanx-operator"],
              "phalanx-operator": ["--placement-tls-ca=/etc/phalanx/tls/ca.crt", "--placement-tls-cert=/etc/phalanx/tls/tls.crt", "--placement-tls-key=/etc/phalanx/tls/tls.key"]}
for dep in by_kind.get("Deployment", []):
    ps = dep["spec"]["template"]["spec"]
    c = ps["containers"][0]
    for a in want_flags.get(c["name"], []):
        if a not in c["args"]: err("%s args lack %s" % (c["name"], a))
    mounts = {m["name"]: m["mountPath"] for m in c.get("volumeMounts", [])}
    vols = {v["name"]: v.get("secret", {}).get("secretName") for v in ps.get("volumes", [])}
    want_secret = "%s-tls" % dep["metadata"]["name"]
    if mounts.get("placement-tls") != "/etc/phalanx/tls" or vols.get("placement-tls") != want_secret:
        err("%s: Secret %s not mounted at /etc/phalanx/tls: %s %s" % (dep["metadata"]["name"], want_secret, mounts, vols))
    if (ps.get("securityContext") or {}).get("fsGroup") is None:
        err("%s: no fsGroup to read the 0440 TLS Secret" % dep["metadata"]["name"])

# Every pod: non-root, seccomp; every container: read-only, no caps, requests, probes.
for dep in by_kind.get("Deployment", []):
    ps = dep["spec"]["template"]["spec"]
    psc = ps.get("securityContext") or {}
    if psc.get("runAsNonRoot") is not True or psc.get("seccompProfile", {}).get("type") != "RuntimeDefault":
        err("%s: pod securityContext %s" % (dep["metadata"]["name"], psc))
    for c in ps["containers"]:
        sc = c.get("securityContext") or {}
        where = "%s/%s" % (dep["metadata"]["name"], c["name"])
        if sc.get("readOnlyRootFilesystem") is not True or sc.get("allowPrivilegeEscalation") is not False or sc.get("capabilities", {}).get("drop") != ["ALL"]:
            err("%s: securityContext %s" % (where, sc))
        if not (c.get("resources") or {}).get("requests"): err("%s: no resource requests" % where)
        if c.get("livenessProbe", {}).get("httpGet", {}).get("path") != "/healthz": err("%s: liveness not on /healthz" % where)
        if "readinessProbe" not in c: err("%s: no readiness probe" % where)
        if c["name"] == "phalanx-scheduler" and c["readinessProbe"]["httpGet"]["path"] != "/readyz":
            err("%s: readiness not on /readyz" % where)
print("; ".join(errors) if errors else "%d objects: %s" % (len(docs), ", ".join("%d %s" % (len(v), k) for k, v in sorted(by_kind.items()))))
sys.exit(1 if errors else 0)
PY
  ); then pass "helm template ($name): $out"; else fail "helm template ($name): $out"; fi

  # --- 5. NOTES.txt: rendered through tpl in a copy of the chart (helm renders NOTES.txt only
  # on install, which needs a cluster).
  notes=$("$HELM" template phalanx "$TMP/notes-chart" -n phalanx-system "${args[@]}" --show-only templates/zz-notes.yaml 2>&1 |
    python3 -c 'import sys, yaml; print(yaml.safe_load(sys.stdin)["data"]["notes"])' 2>&1)
  yaml_part=$(sed -n "/^kubectl apply -f - <<'YAML'/,/^YAML$/p" <<<"$notes" | sed '1d;$d')
  if out=$(python3 -c 'import sys, yaml; d=[x for x in yaml.safe_load_all(sys.stdin) if x]; k=[x["kind"] for x in d]; assert "NodeFlavor" in k, k; print(", ".join("%s %s" % (x["kind"], x["metadata"]["name"]) for x in d))' <<<"$yaml_part" 2>&1); then
    pass "NOTES.txt ($name) shows objects to apply: $out"
  else
    fail "NOTES.txt ($name): no NodeFlavor YAML that parses: $out; notes: $(head -c 600 <<<"$notes")"
  fi
done

# --- 6. bad values fail with a message ----------------------------------------------------
out=$("$HELM" template phalanx "$CHART" --set operator.leaderElection.enabled=false 2>&1) &&
  fail "two operators without leader election rendered" ||
  { grep -q 'needs operator.replicas=1' <<<"$out" && pass "two operators without leader election are refused" || fail "unexpected error: $out"; }
out=$("$HELM" template phalanx "$CHART" --set operator.leaderElection.enabled=false --set operator.replicas=1 2>&1) &&
  pass "one operator without leader election renders" || fail "one operator without leader election: $out"
out=$("$HELM" template phalanx "$CHART" --set operator.replicas=1 2>&1) && ! grep -q '^kind: PodDisruptionBudget' <<<"$out" &&
  pass "one operator replica: no PodDisruptionBudget (it would block every drain)" || fail "operator.replicas=1 rendered a PodDisruptionBudget or failed: $(tail -3 <<<"$out")"
out=$("$HELM" template phalanx "$CHART" -n phalanx-system --set scheduler.topology=fleet 2>&1)
if check=$(python3 -c '
import sys, yaml
docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
dep = next(d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "phalanx-scheduler")
args = dep["spec"]["template"]["spec"]["containers"][0]["args"]
role = next(d for d in docs if d["kind"] == "ClusterRole" and d["metadata"]["name"] == "phalanx-scheduler")
rule = [r for r in role["rules"] if "networktopologies" in r["resources"]]
print(args, rule)
sys.exit(0 if "--topology=fleet" in args and not any(a.startswith("--topology-preset") for a in args) and
         rule == [{"apiGroups": ["phalanx.dev"], "resources": ["networktopologies"], "resourceNames": ["fleet"], "verbs": ["get"]}] else 1)
' <<<"$out" 2>&1); then pass "scheduler.topology=fleet: --topology=fleet and get on networktopologies/fleet only"
else fail "scheduler.topology=fleet: $check"; fi
out=$("$HELM" template phalanx "$CHART" --set tls.schedulerSecret=mine 2>&1) &&
  fail "tls.schedulerSecret without tls.operatorSecret rendered" ||
  { grep -q 'tls.schedulerSecret and tls.operatorSecret go together' <<<"$out" && pass "one TLS Secret without the other is refused" || fail "unexpected error: $out"; }
out=$("$HELM" template phalanx "$CHART" -n phalanx-system --set tls.enabled=false 2>&1) &&
  ! grep -qE -- '--(grpc|placement)-tls-|kind: Secret|placement-tls' <<<"$out" &&
  pass "tls.enabled=false: no TLS flag, Secret or mount" || fail "tls.enabled=false: $(grep -E -- 'tls|Secret' <<<"$out" | head -5)"
out=$("$HELM" template phalanx "$CHART" -n phalanx-system --set tls.schedulerSecret=s,tls.operatorSecret=o 2>&1) &&
  ! grep -q 'kind: Secret' <<<"$out" && grep -q 'secretName: s$' <<<"$out" && grep -q 'secretName: o$' <<<"$out" &&
  pass "given TLS Secrets are mounted and none is generated" || fail "given TLS Secrets: $(grep -E 'secretName|kind: Secret' <<<"$out")"
! grep -q -- '--grpc-tls-writers' <<<"$out" &&
  pass "given TLS Secrets without tls.writers: every client may change reservations, as before" ||
  fail "given TLS Secrets: $(grep -- '--grpc-tls-writers' <<<"$out")"
out=$("$HELM" template phalanx "$CHART" -n phalanx-system --set tls.schedulerSecret=s,tls.operatorSecret=o \
      --set 'tls.writers={op.example,ops}' 2>&1) && grep -q -- '--grpc-tls-writers=op.example,ops$' <<<"$out" &&
  pass "tls.writers names who may change reservations: $(grep -o -- '--grpc-tls-writers=.*' <<<"$out")" ||
  fail "tls.writers: $(grep -- 'grpc-tls' <<<"$out" | head -5)"
# values.schema.json: a value the binaries would refuse at start (CrashLoopBackOff), or a key
# helm would silently ignore, fails `helm install` / `helm template` and names the value.
bad_value() { # --set value, what the error must name
  local out
  out=$("$HELM" template phalanx "$CHART" --set "$1" 2>&1) && { fail "$1 rendered"; return; }
  grep -qF -- "$2" <<<"$out" && pass "$1 is refused: $(grep -F -- "$2" <<<"$out" | head -1 | sed 's/^ *//')" ||
    fail "$1: unexpected error: $out"
}
bad_value operator.podAntiAffinity=sometimes "at '/operator/podAntiAffinity': value must be one of 'soft', 'hard', 'none'"
bad_value scheduler.topologyPreset=ekss "at '/scheduler/topologyPreset': value must be one of 'eks', 'eks-4layer', 'gb200'"
bad_value operator.workers=0 "at '/operator/workers': minimum: got 0, want 1"
bad_value operator.logLevel=verbose "at '/operator/logLevel': value must be one of"
bad_value listenHost=127.0.0.1 "at '/listenHost'"
bad_value operator.replica=3 "additional properties 'replica' not allowed"
bad_value scheduler.grpcPort=70000 "at '/scheduler/grpcPort': maximum: got 70,000, want 65,535"
finish

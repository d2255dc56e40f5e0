#!/usr/bin/env bash
# The Helm chart charts/phalanx without a cluster (seconds):
#   1. its CRDs (files/crds/) are byte-identical copies of crds/, none missing, none extra;
#   2. Chart.yaml's appVersion is the project version (CMakeLists.txt);
#   3. README.md's values table documents every value of values.yaml (hack/chart-readme.sh
#      --check), and the check catches a value without a comment;
#   4. `helm lint --strict` and `helm template` pass for the default values and each preset
#      (values-*.yaml); the rendered objects are what the chart promises: CRDs kept on
#      uninstall, RBAC without wildcards, tenant roles aggregated into admin/edit/view that write
#      no status subresource, 2 leader-elected operator replicas with anti-affinity
#      and a PodDisruptionBudget, one scheduler pod (phalanx-scheduler + kube-scheduler with only
#      the `phalanx` profile, its extender on 127.0.0.1), each preset's topology levels,
#      Services with a `metrics` port, non-root read-only containers with requests and probes;
#   5. NOTES.txt renders for each preset with NodeFlavor YAML that parses, and its last step
#      (explain through a port-forward) works with the values' TLS: under the default mutual TLS
#      the printed commands, run with a stand-in kubectl, export the viewer certificate, its CA
#      and a server name the scheduler's certificate carries; none of that without TLS;
#      mutual TLS on the Placement gRPC API: the generated server certificate names the
#      scheduler Service and the three certificates (scheduler, operator, read-only viewer)
#      chain to the one CA (openssl verify), each binary gets its TLS flags and its Secret
#      mounted, and only the operator's certificate may change reservations
#      (--grpc-tls-writers);
#   6. bad values fail the render with a message (two operators without leader election,
#      one TLS Secret given without the other; values.schema.json: an unknown anti-affinity
#      mode, topology preset or log level, workers 0, a loopback listenHost, a port out of
#      range, a misspelt key); tls.enabled=false
#      renders no TLS flag or Secret; given Secrets get --grpc-tls-writers only from tls.writers;
#      the status ValidatingAdmissionPolicy, when the API server serves it, covers the status of
#      every CRD that has one and lets only the operator's ServiceAccount (and
#      statusPolicy.extraWriters) write it; statusPolicy.enabled and rbac.tenantRoles turn them off;
#      kubeScheduler.rbac.builtinRoles binds kube-scheduler to the built-in roles instead of the
#      chart's own (which has no pods delete and no cluster-wide Lease rule, step 4).
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
# Tenant roles (docs/security.md): aggregated into the built-in roles, no write on any status
# subresource, reads only in the view role.
READ = {"get", "list", "watch"}
agg = "rbac.authorization.k8s.io/aggregate-to-"
for role_name, labels, jobs_verbs in (("phalanx-tenant-edit", {"admin", "edit"}, READ | {"create", "update", "patch", "delete"}),
                                      ("phalanx-tenant-view", {"view"}, READ)):
    r = one("ClusterRole", role_name)
    if not r: continue
    got = {k[len(agg):] for k, v in (r["metadata"].get("labels") or {}).items() if k.startswith(agg) and v == "true"}
    if got != labels: err("%s aggregates into %s, want %s" % (role_name, sorted(got), sorted(labels)))
    verbs = {}
    for rule in r["rules"]:
        for res in rule["resources"]:
            verbs.setdefault(res, set()).update(rule["verbs"])
            if res.endswith("/status") and set(rule["verbs"]) - READ:
                err("%s may %s %s" % (role_name, sorted(set(rule["verbs"]) - READ), res))
    if not jobs_verbs <= verbs.get("trainingjobs", set()):
        err("%s: trainingjobs lacks %s" % (role_name, sorted(jobs_verbs - verbs.get("trainingjobs", set()))))
    if role_name == "phalanx-tenant-view" and set().union(*verbs.values()) - READ:
        err("phalanx-tenant-view grants %s" % sorted(set().union(*verbs.values()) - READ))
    if verbs.get("trainingqueues", set()) != READ:
        err("%s: trainingqueues %s, want read only" % (role_name, sorted(verbs.get("trainingqueues", set()))))
    # `kubectl phalanx explain` resolves a job's priority from the PriorityClasses.
    if role_name == "phalanx-tenant-view" and verbs.get("priorityclasses", set()) != READ:
        err("phalanx-tenant-view: priorityclasses %s, want read" % sorted(verbs.get("priorityclasses", set())))
# The status policy needs the API server's ValidatingAdmissionPolicy, which helm template's
# built-in capabilities do not list: not rendered here (step 6 renders it with --api-versions).
for kind in ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"):
    if by_kind.get(kind): err("%s rendered without the API server serving it" % kind)
op_role = one("ClusterRole", "phalanx-operator")
if op_role:
    rules = {(g, res): set(rule["verbs"]) for rule in op_role["rules"] for g in rule["apiGroups"] for res in rule["resources"]}
    for key, verbs in {("phalanx.dev", "trainingjobs/status"): {"patch"}, ("", "pods"): {"create", "delete", "list", "watch"},
                       ("phalanx.dev", "clustertrainingqueues/status"): {"patch"}, ("", "events"): {"create", "patch"}}.items():
        if not verbs <= rules.get(key, set()):
            err("operator ClusterRole: %s/%s lacks %s" % (key[0], key[1], sorted(verbs - rules.get(key, set()))))
binds = {b["roleRef"]["name"] for b in by_kind.get("ClusterRoleBinding", [])}
for role in ("phalanx-kube-scheduler-minimal", "phalanx-scheduler", "phalanx-operator"):
    if role not in binds:
        err("no ClusterRoleBinding to %s" % role)
for role in ("system:kube-scheduler", "system:volume-scheduler"):
    if role in binds:
        err("a ClusterRoleBinding to the built-in %s without kubeScheduler.rbac.builtinRoles" % role)
# kube-scheduler's own ClusterRole (docs/security.md): what the profile uses, not pods delete
# (preemption is off) nor any Lease (its own is a Role in the release namespace).
ks_role = one("ClusterRole", "phalanx-kube-scheduler-minimal")
if ks_role:
    ks = {}
    for rule in ks_role["rules"]:
        for g in rule["apiGroups"]:
            for res in rule["resources"]:
                ks.setdefault((g, res), set()).update(rule["verbs"])
    for key, verbs in {("", "pods"): READ, ("", "pods/binding"): {"create"}, ("", "nodes"): READ,
                       ("", "pods/status"): {"patch", "update"}, ("", "events"): {"create", "patch"},
                       ("authentication.k8s.io", "tokenreviews"): {"create"},
                       ("", "persistentvolumeclaims"): READ | {"update", "patch"},
                       ("resource.k8s.io", "resourceclaims/status"): {"update"}}.items():
        if not verbs <= ks.get(key, set()):
            err("kube-scheduler ClusterRole: %s/%s lacks %s" % (key[0], key[1], sorted(verbs - ks.get(key, set()))))
    if "delete" in ks.get(("", "pods"), set()): err("kube-scheduler ClusterRole may delete pods")
    for key in ks:
        if key[0] == "coordination.k8s.io": err("kube-scheduler ClusterRole grants %s/%s cluster-wide" % key)

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

# NetworkPolicy: the Placement gRPC port (unauthenticated without TLS) open to the operator's pods only; the
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

# --- 5b. NOTES.txt's last step (explain through a port-forward) with the values' TLS. With the
# default mutual TLS the printed commands are run by bash with a stand-in kubectl that answers
# `get secret` from the Secrets of the same render: the files the exported
# PHALANX_SCHEDULER_TLS_* name must hold the viewer Secret, its certificate must chain to the CA,
# and the server name must be one the scheduler's certificate carries. tls.enabled=false prints
# no TLS variable; given Secrets print no generated Secret's name.
mkdir -p "$TMP/bin" "$TMP/home"
cat >"$TMP/bin/kubectl" <<'STUB'
#!/usr/bin/env python3
# Stand-in kubectl: `get secret NAME -o jsonpath={.data.KEY}` from $NOTES_SECRETS; port-forward does nothing.
import json, os, re, sys
args = sys.argv[1:]
if "port-forward" in args: sys.exit(0)
if "get" in args and "secret" in args:
    name = args[args.index("secret") + 1]
    path = next(a.split("=", 1)[1] if a.startswith("jsonpath=") else a for a in args[args.index("-o") + 1:][:1])
    key = re.fullmatch(r"\{\.data\.(.*)\}", path).group(1).replace("\\.", ".")
    secrets = json.load(open(os.environ["NOTES_SECRETS"]))
    if name not in secrets or key not in secrets[name]:
        sys.exit("Error from server (NotFound): secrets %s (key %s)" % (name, key))
    sys.stdout.write(secrets[name][key]); sys.exit(0)
sys.exit("stand-in kubectl: unexpected %s" % args)
STUB
chmod +x "$TMP/bin/kubectl"
notes_render() { # out-prefix helm-args...: the notes as text and the rendered Secrets as JSON, from one render
  local out=$1; shift
  "$HELM" template phalanx "$TMP/notes-chart" -n phalanx-system "$@" >"$out.yaml" 2>&1 &&
    python3 - "$out" <<'PY2'
import json, sys, yaml
out = sys.argv[1]
docs = [d for d in yaml.safe_load_all(open(out + ".yaml")) if d]
open(out + ".notes", "w").write(next(d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "notes")["data"]["notes"])
json.dump({d["metadata"]["name"]: d.get("data", {}) for d in docs if d["kind"] == "Secret"}, open(out + ".secrets", "w"))
json.dump([d for d in docs if d["kind"] == "Service"], open(out + ".services", "w"))
PY2
}
if notes_render "$TMP/tls-default"; then
  # From the port-forward to the line before explain (whose <name> placeholders bash cannot run).
  steps=$(sed -n '/ port-forward svc\//,/kubectl phalanx explain/p' "$TMP/tls-default.notes" | sed '$d')
  explain=$(grep -m1 'kubectl phalanx explain' "$TMP/tls-default.notes")
  if out=$(cd "$TMP" && HOME="$TMP/home" PATH="$TMP/bin:$PATH" NOTES_SECRETS="$TMP/tls-default.secrets" \
             bash -euo pipefail -c "$steps"$'\n''env | grep "^PHALANX_SCHEDULER_TLS_" | sort || true' 2>&1) &&
     check=$(python3 - "$TMP/tls-default" "$explain" "$steps" "$out" 2>&1 <<'PY2'
import base64, json, re, subprocess, sys
prefix, explain, steps, exported = sys.argv[1:5]
env = dict(line.split("=", 1) for line in exported.split("\n") if line.startswith("PHALANX_SCHEDULER_TLS_"))
secrets = json.load(open(prefix + ".secrets"))
services = {s["metadata"]["name"]: s for s in json.load(open(prefix + ".services"))}
errors = []
want = {"CA": "ca.crt", "CERT": "tls.crt", "KEY": "tls.key"}
for var, key in want.items():
    path = env.get("PHALANX_SCHEDULER_TLS_" + var)
    if not path: errors.append("PHALANX_SCHEDULER_TLS_%s not exported" % var); continue
    if open(path, "rb").read() != base64.b64decode(secrets["phalanx-viewer-tls"][key]):
        errors.append("%s does not hold phalanx-viewer-tls's %s" % (path, key))
if not errors:
    r = subprocess.run(["openssl", "verify", "-CAfile", env["PHALANX_SCHEDULER_TLS_CA"], env["PHALANX_SCHEDULER_TLS_CERT"]], capture_output=True, text=True)
    if r.returncode != 0: errors.append("the exported certificate does not chain to the exported CA: " + r.stdout + r.stderr)
    server = subprocess.run(["openssl", "x509", "-noout", "-text"], input=base64.b64decode(secrets["phalanx-scheduler-tls"]["tls.crt"]), capture_output=True).stdout.decode()
    name = env.get("PHALANX_SCHEDULER_TLS_SERVER_NAME", "")
    if not name or "DNS:" + name not in server: errors.append("server name %r is not in the scheduler's certificate" % name)
m = re.search(r"port-forward svc/(\S+) (\d+)", steps)
ports = [p["port"] for p in services.get(m.group(1) if m else "", {}).get("spec", {}).get("ports", [])] if m else []
if not m or int(m.group(2)) not in ports: errors.append("the port-forward does not name a Service port: %s" % (m.group(0) if m else steps[:200]))
elif "--server 127.0.0.1:%s" % m.group(2) not in explain: errors.append("explain does not use the forwarded port: " + explain)
print("; ".join(errors) if errors else "viewer files, CA chain, server name %s, %s" % (name, m.group(0)))
sys.exit(1 if errors else 0)
PY2
     ); then pass "NOTES.txt (default, mutual TLS): the explain step as printed: $check"
  else fail "NOTES.txt (default, mutual TLS): the explain step as printed: ${check:-$out}"; fi
else fail "NOTES.txt (default) render: $(tail -3 "$TMP/tls-default.yaml")"; fi
if notes_render "$TMP/tls-off" --set tls.enabled=false &&
   ! grep -q 'PHALANX_SCHEDULER_TLS_\|viewer-tls' "$TMP/tls-off.notes" &&
   grep -q 'kubectl phalanx explain <name> -n <namespace> --server 127.0.0.1:9443$' "$TMP/tls-off.notes"; then
  pass "NOTES.txt (tls.enabled=false): explain through the port-forward without TLS variables"
else fail "NOTES.txt (tls.enabled=false): $(grep -E 'TLS|viewer|explain' "$TMP/tls-off.notes" "$TMP/tls-off.yaml" | head -5)"; fi
if notes_render "$TMP/tls-given" --set tls.schedulerSecret=s,tls.operatorSecret=o &&
   ! grep -q 'viewer-tls' "$TMP/tls-given.notes" && grep -q 'PHALANX_SCHEDULER_TLS_CERT=<a client certificate>' "$TMP/tls-given.notes"; then
  pass "NOTES.txt (given TLS Secrets): asks for a client certificate of your CA, names no generated Secret"
else fail "NOTES.txt (given TLS Secrets): $(grep -E 'TLS|viewer' "$TMP/tls-given.notes" "$TMP/tls-given.yaml" | head -5)"; fi

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
out=$("$HELM" template phalanx "$CHART" -n phalanx-system --set kubeScheduler.rbac.builtinRoles=true 2>&1)
if check=$(python3 -c '
import sys, yaml
docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
binds = sorted(d["roleRef"]["name"] for d in docs if d["kind"] == "ClusterRoleBinding")
own = [d for d in docs if d["kind"] == "ClusterRole" and d["metadata"]["name"] == "phalanx-kube-scheduler-minimal"]
print(binds, len(own))
sys.exit(0 if {"system:kube-scheduler", "system:volume-scheduler"} <= set(binds) and
         "phalanx-kube-scheduler-minimal" not in binds and not own else 1)
' <<<"$out" 2>&1); then pass "kubeScheduler.rbac.builtinRoles=true binds the built-in roles instead of the chart's: $check"
else fail "kubeScheduler.rbac.builtinRoles=true: $check"; fi
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
# The status policy (docs/security.md) when the API server serves ValidatingAdmissionPolicy:
# UPDATE of every status subresource the CRDs have, allowed only to the operator's ServiceAccount
# (and statusPolicy.extraWriters), with a Deny binding; statusPolicy.enabled=false and
# rbac.tenantRoles=false leave the policy and the tenant roles out.
VAP=(--api-versions admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy)
status_policy() { # helm args...: "<expression> | <resources> | <binding policy> <actions>"
  "$HELM" template rel "$CHART" -n ops "${VAP[@]}" "$@" 2>&1 | python3 -c '
import sys, yaml
docs = [d for d in yaml.safe_load_all(sys.stdin) if d]
p = [d for d in docs if d["kind"] == "ValidatingAdmissionPolicy"]
b = [d for d in docs if d["kind"] == "ValidatingAdmissionPolicyBinding"]
if not p or not b: print("none"); sys.exit(0)
rule = p[0]["spec"]["matchConstraints"]["resourceRules"]
print("%s | %s %s %s | %s %s %s" % (p[0]["spec"]["validations"][0]["expression"], rule[0]["apiGroups"], rule[0]["operations"],
      sorted(rule[0]["resources"]), b[0]["spec"]["policyName"] == p[0]["metadata"]["name"], b[0]["spec"]["validationActions"],
      p[0]["spec"]["failurePolicy"]))'
}
want_status=$(python3 -c '
import glob, sys, yaml
print(sorted("%s/status" % c["spec"]["names"]["plural"] for f in sorted(glob.glob(sys.argv[1] + "/crds/*.yaml"))
             for c in [yaml.safe_load(open(f))] if "status" in (c["spec"]["versions"][0].get("subresources") or {})))' "$REPO_ROOT")
out=$(status_policy)
[[ $out == "request.userInfo.username in [\"system:serviceaccount:ops:rel-phalanx-operator\"] | ['phalanx.dev'] ['UPDATE'] $want_status | True ['Deny'] Fail" ]] &&
  pass "statusPolicy: only the operator's ServiceAccount may write $want_status (Deny): $out" || fail "statusPolicy: $out (want every CRD's status: $want_status)"
out=$(status_policy --set operator.serviceAccount.name=op --set 'statusPolicy.extraWriters={system:serviceaccount:ops:repair}')
[[ $out == 'request.userInfo.username in ["system:serviceaccount:ops:op","system:serviceaccount:ops:repair"] |'* ]] &&
  pass "statusPolicy follows operator.serviceAccount.name and adds statusPolicy.extraWriters" || fail "statusPolicy with a named ServiceAccount and extraWriters: $out"
[[ $(status_policy --set statusPolicy.enabled=false) == none ]] && pass "statusPolicy.enabled=false renders no policy" ||
  fail "statusPolicy.enabled=false: $(status_policy --set statusPolicy.enabled=false)"
out=$("$HELM" template phalanx "$CHART" --set rbac.tenantRoles=false 2>&1) && ! grep -q 'tenant-' <<<"$out" &&
  pass "rbac.tenantRoles=false renders no tenant role" || fail "rbac.tenantRoles=false: $(grep -n 'tenant-' <<<"$out" | head -3)"
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

#!/usr/bin/env bash
# Start (or restart) kube-scheduler against the running local cluster.
# Usage: hack/cluster/start-scheduler.sh [CONFIG]
#   CONFIG: a KubeSchedulerConfiguration file (e.g. with a phalanx profile and extender).
#     Its clientConnection.kubeconfig is set to the cluster's scheduler kubeconfig if it has
#     none; a literal @PHALANX_SCHEDULER_KUBECONFIG@ in the file is replaced by that path.
#     Without CONFIG a default configuration (leader election off) is used.
# Env: PHALANX_KUBE_SCHEDULER_KUBECONFIG: the kubeconfig it runs with (API client, delegated
#   authentication and authorization; default: the cluster's system:kube-scheduler certificate),
#   e.g. a ServiceAccount's from hack/cluster/sa-kubeconfig.sh.
# Serves /healthz on https://127.0.0.1:$SCHEDULER_PORT (see $PHALANX_CLUSTER_DIR/env);
# logs to $PHALANX_CLUSTER_DIR/logs/kube-scheduler.log; stopped by down.sh.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
DIR="$PHALANX_CLUSTER_DIR"
[[ -f $DIR/env ]] || { echo "[scheduler] FAILED: no running cluster in $DIR (run hack/cluster/up.sh)" >&2; exit 1; }
# shellcheck disable=SC1091
source "$DIR/env"
phx_need_bin kube-scheduler
KC="${PHALANX_KUBE_SCHEDULER_KUBECONFIG:-$DIR/kube-scheduler.kubeconfig}"
OUT="$DIR/kube-scheduler-config.yaml"
if [[ $# -ge 1 ]]; then
  [[ -f $1 ]] || { echo "[scheduler] FAILED: config $1 not found" >&2; exit 1; }
  if python3 -c 'import yaml' 2>/dev/null; then
  python3 - "$1" "$OUT" "$KC" <<'PY'
import sys, yaml
src, out, kc = sys.argv[1:4]
text = open(src).read().replace("@PHALANX_SCHEDULER_KUBECONFIG@", kc)
doc = yaml.safe_load(text)
if not isinstance(doc, dict) or doc.get("kind") != "KubeSchedulerConfiguration":
    sys.exit("[scheduler] FAILED: %s is not a KubeSchedulerConfiguration" % src)
cc = doc.setdefault("clientConnection", {}) or {}
doc["clientConnection"] = cc
if not cc.get("kubeconfig"):
    cc["kubeconfig"] = kc
open(out, "w").write(yaml.safe_dump(doc, sort_keys=False))
PY
  else
    # no PyYAML: substitute the placeholder, or add clientConnection if the file has none
    sed "s|@PHALANX_SCHEDULER_KUBECONFIG@|$KC|g" "$1" >"$OUT"
    if ! grep -q '^\s*kubeconfig:' "$OUT"; then
      if grep -q '^clientConnection:' "$OUT"; then
        echo "[scheduler] FAILED: $1 has clientConnection without kubeconfig; add 'kubeconfig: @PHALANX_SCHEDULER_KUBECONFIG@' (or install python3-yaml)" >&2
        exit 1
      fi
      printf 'clientConnection:\n  kubeconfig: %s\n' "$KC" >>"$OUT"
    fi
  fi
else
  cat >"$OUT" <<CFG
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $KC
leaderElection:
  leaderElect: false
CFG
fi
phx_stop kube-scheduler 30 || { echo "[scheduler] FAILED to stop the previous kube-scheduler" >&2; exit 1; }
{ echo "#!/usr/bin/env bash"; printf 'exec'; printf ' %q' "$(phx_bin kube-scheduler)" \
    --config="$OUT" --bind-address=127.0.0.1 --secure-port="$SCHEDULER_PORT" \
    --authentication-kubeconfig="$KC" --authorization-kubeconfig="$KC" \
    --cert-dir="$DIR/pki/scheduler-certdir" --v=1; echo; } >"$DIR/run/kube-scheduler.sh"
pid=$(phx_start kube-scheduler)
phx_wait 60 "kube-scheduler /healthz" kube-scheduler curl -skf --max-time 2 "https://127.0.0.1:$SCHEDULER_PORT/healthz"
echo "[scheduler] kube-scheduler $KUBERNETES_VERSION running (pid $pid, config $OUT)" >&2

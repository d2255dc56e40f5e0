#!/usr/bin/env bash
# The hack/cluster scripts themselves, on a private cluster in a temp state dir (it does
# not use PHALANX_KUBECONFIG, so it can run beside the other tests): up.sh prints the
# kubeconfig last and refuses a second start; kube-scheduler starts from a config and binds
# a pod; a watch resumed across restart-apiserver.sh loses nothing (events or 410+relist); compact-etcd.sh makes an old
# resourceVersion answer 410 Gone; down.sh stops every recorded PID and is safe twice.
# Needs the binaries from hack/cluster/build.sh.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
H="$REPO_ROOT/hack/cluster"
export PHALANX_CLUSTER_DIR
PHALANX_CLUSTER_DIR=$(mktemp -d /tmp/phalanx-lifecycle.XXXXXX)
rmdir "$PHALANX_CLUSTER_DIR"
PIDS=""
cleanup() { "$H/down.sh" >/dev/null 2>&1 || true; }
trap cleanup EXIT

t0=$SECONDS
if ! out=$("$H/up.sh" --ttl 900 2>"$PHALANX_CLUSTER_DIR.up.log"); then
  cat "$PHALANX_CLUSTER_DIR.up.log"; rm -f "$PHALANX_CLUSTER_DIR.up.log"
  die "up.sh failed"
fi
rm -f "$PHALANX_CLUSTER_DIR.up.log"
PHALANX_KUBECONFIG=$(echo "$out" | tail -1)
[[ $PHALANX_KUBECONFIG == "$PHALANX_CLUSTER_DIR/kubeconfig" ]] && pass "up.sh in $((SECONDS - t0))s; last line is the kubeconfig" ||
  fail "up.sh last line '$PHALANX_KUBECONFIG' is not $PHALANX_CLUSTER_DIR/kubeconfig"
# shellcheck disable=SC1091
source "$PHALANX_CLUSTER_DIR/env"
PIDS=$(awk '{print $2}' "$PHALANX_CLUSTER_DIR/pids")
# "pid starttime" of every process started, so that the check after down.sh cannot mistake a
# recycled PID (pid_max is 32,768 here and ctest runs other tests beside this one) for ours.
PID_LINES=$(awk '{print $2, $3}' "$PHALANX_CLUSTER_DIR/pids")
for c in etcd kube-apiserver kube-controller-manager kwok watchdog; do
  grep -q "^$c " "$PHALANX_CLUSTER_DIR/pids" && pass "pids file records $c" || fail "pids file lacks $c"
done
# every listening socket of our processes is on 127.0.0.1 (from /proc/net/tcp{,6}: no ss needed)
listen=$(python3 - $PIDS <<'PY'
import os, sys
inodes = {}
for pid in sys.argv[1:]:
    try:
        for fd in os.listdir("/proc/%s/fd" % pid):
            try:
                t = os.readlink("/proc/%s/fd/%s" % (pid, fd))
            except OSError:
                continue
            if t.startswith("socket:["):
                inodes[t[8:-1]] = pid
    except OSError:
        pass
for f in ("/proc/net/tcp", "/proc/net/tcp6"):
    for line in open(f).read().splitlines()[1:]:
        c = line.split()
        if c[3] == "0A" and c[9] in inodes:          # LISTEN
            ip, port = c[1].split(":")
            print("%s:%d" % (ip, int(port, 16)))
PY
)
bad=$(echo "$listen" | grep -v '^0100007F:' | grep . || true)
if [[ -n $listen && -z $bad ]]; then pass "all $(echo "$listen" | wc -l) listening sockets are on 127.0.0.1"; else fail "sockets beyond loopback (hex ip:port): ${bad:-none found}"; fi

if "$H/up.sh" >/dev/null 2>&1; then fail "second up.sh on a running cluster succeeded"; else pass "second up.sh refuses a running cluster"; fi
kc get --raw /readyz >/dev/null 2>&1 && pass "cluster still ready after the refused start" || fail "refused start broke the cluster"

# kube-scheduler from a config file with a second profile
cfg="$PHALANX_CLUSTER_DIR/test-scheduler.yaml"
cat >"$cfg" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
profiles:
- schedulerName: default-scheduler
- schedulerName: phalanx
YAML
if "$H/start-scheduler.sh" "$cfg" 2>/dev/null; then pass "start-scheduler.sh"; else fail "start-scheduler.sh failed"; fi
"$H/fake-nodes.sh" --preset eks --count 2 --prefix lc >/dev/null 2>&1 || fail "fake-nodes.sh"
kc apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: scheduled, namespace: default}
spec:
  schedulerName: phalanx
  containers: [{name: c, image: busybox, resources: {limits: {nvidia.com/gpu: 8}}}]
YAML
if eventually 60 bash -c "[[ \$(kubectl --kubeconfig='$PHALANX_KUBECONFIG' get pod scheduled -o jsonpath='{.status.phase}') == Running ]]"; then
  pass "pod with schedulerName phalanx bound by kube-scheduler and Running on $(kc get pod scheduled -o jsonpath='{.spec.nodeName}')"
else
  fail "pod not scheduled/running: $(kc get pod scheduled -o wide 2>&1)"
fi

# A watch resumed from its last resourceVersion sees changes made across an apiserver restart.
rv=$(kc get --raw /api/v1/namespaces/default/configmaps | jq -r .metadata.resourceVersion)
[[ $rv =~ ^[0-9]+$ ]] || fail "could not read the list resourceVersion: $rv"
kc create configmap before-restart -n default >/dev/null
if "$H/restart-apiserver.sh" 2>/dev/null; then pass "restart-apiserver.sh"; else fail "restart-apiserver.sh"; fi
kc create configmap after-restart -n default >/dev/null || fail "create after restart"
events=$(kc get --raw "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=$rv&timeoutSeconds=3&allowWatchBookmarks=true" 2>&1)
# A fresh kube-apiserver's watch cache starts at the current etcd revision, so resuming from
# an older resourceVersion may legitimately answer 410 Gone (then a client relists). Either
# the watch replays both changes, or it is 410 and a relist has both: nothing is lost.
if [[ $events == *'"name":"before-restart"'* && $events == *'"name":"after-restart"'* ]]; then
  pass "watch resumed from rv $rv across the restart replays both changes"
elif [[ $events == *'"code":410'* ]]; then
  list=$(kc get configmaps -n default -o name)
  [[ $list == *before-restart* && $list == *after-restart* ]] &&
    pass "watch resumed from rv $rv across the restart got 410 Gone; the relist has both changes" ||
    fail "relist after 410 lacks the changes: $list"
else
  fail "resumed watch neither replayed the changes nor answered 410: $events"
fi
if eventually 30 bash -c "kubectl --kubeconfig='$PHALANX_KUBECONFIG' get nodes -l phalanx.dev/fake-node-prefix=lc -o jsonpath='{.items[*].status.conditions[?(@.type==\"Ready\")].status}' | grep -qx 'True True'"; then
  pass "fake nodes Ready after the restart"
else
  fail "fake nodes not Ready after the restart: $(kc get nodes 2>&1)"
fi

# Crash restart of etcd (SIGKILL) keeps the data.
# On failure, say which half failed and what etcd and kube-apiserver logged last (the step
# once failed in a loaded CI run and passed alone: the reason should be in the next report).
if ! restart_out=$("$H/restart.sh" etcd --kill 2>&1); then
  fail "etcd crash restart: restart.sh failed: $(tail -3 <<<"$restart_out" | tr '\n' ' ');" \
    "etcd log: $(tail -3 "$PHALANX_CLUSTER_DIR/logs/etcd.log" 2>/dev/null | cut -c1-300 | tr '\n' ' ')"
elif eventually 60 kc get configmap after-restart -n default; then
  pass "etcd SIGKILL restart keeps data"
else
  fail "etcd crash restart: etcd is healthy again but kube-apiserver did not serve the" \
    "configmap within 60 s: $(kc get configmap after-restart -n default 2>&1 | tail -1);" \
    "kube-apiserver log: $(grep -v '^I' "$PHALANX_CLUSTER_DIR/logs/kube-apiserver.log" 2>/dev/null |
      tail -3 | cut -c1-300 | tr '\n' ' ')"
fi

# Compaction: an old resourceVersion is now 410 Gone.
old=$rv
for i in 1 2 3; do kc create configmap "churn-$i" -n default >/dev/null; done
if rev=$("$H/compact-etcd.sh" 2>/dev/null); then pass "compact-etcd.sh compacted to revision $rev"; else fail "compact-etcd.sh"; fi
sleep 1
gone=$(kc get --raw "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=$old&timeoutSeconds=2" 2>&1)
if [[ $gone == *'"code":410'* || $gone == *"too old resource version"* ]]; then
  pass "watch from a compacted resourceVersion gets 410 Gone"
else
  # the watch cache may still hold the window; a list at the exact old RV must be gone in etcd
  gone=$(kc get --raw "/api/v1/namespaces/default/configmaps?resourceVersion=$old&resourceVersionMatch=Exact&limit=500" 2>&1)
  [[ $gone == *"too old"* || $gone == *"410"* || $gone == *"Expired"* ]] &&
    pass "exact read at a compacted resourceVersion gets 410 Gone" || fail "no 410 after compaction: $gone"
fi

# down.sh stops everything, twice is fine.
PID_LINES+=$'\n'$(awk '{print $2, $3}' "$PHALANX_CLUSTER_DIR/pids")  # and the restarted ones
"$H/down.sh" >/dev/null 2>&1 && pass "down.sh" || fail "down.sh failed"
# shellcheck source=../../../hack/cluster/lib.sh
source "$H/lib.sh"  # phx_alive: the PID is alive and still the process that was started
# Our processes still running: the recorded PIDs, and anything whose command line names the
# state dir (every component's does). Each one's command line is kept when it is found, so
# that a failure explains itself even if the process is gone by the time it is printed.
declare -A what
find_left() {
  left=""
  local p st
  while read -r p st; do
    [[ -n $p ]] && phx_alive "$p" "$st" && left="$left $p"
  done <<<"$PID_LINES"
  for p in $(pgrep -f "$PHALANX_CLUSTER_DIR/" 2>/dev/null); do
    [[ -d /proc/$p && $(awk '{print $3}' "/proc/$p/stat" 2>/dev/null) != Z ]] && left="$left $p"
  done
  for p in $left; do what[$p]=$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-160); done
}
# A process caught in the middle of its exit is not left behind: one seen right after down.sh
# gets up to 10 s to be gone (it was seen once as alive and gone a moment later).
find_left
first=$left
deadline=$((SECONDS + 10))
while [[ -n $left ]] && ((SECONDS < deadline)); do sleep 0.5; find_left; done
for p in $first; do
  [[ " $left " == *" $p "* ]] && state="still running after 10 s" || state="exited within 10 s of down.sh"
  echo "after down.sh: $p ($state) ${what[$p]:-}" >&2
done
[[ -z $left ]] && pass "no process left behind" || fail "processes left behind:$left"
[[ ! -e $PHALANX_CLUSTER_DIR ]] && pass "state dir removed" || fail "state dir $PHALANX_CLUSTER_DIR still there"
"$H/down.sh" >/dev/null 2>&1 && pass "second down.sh is a no-op" || fail "second down.sh failed"
trap - EXIT
finish

#!/usr/bin/env bash
# hack/demo.sh as a new user runs it (the README's "Run it on a local cluster"), on a private
# cluster dir: every example TrainingJob ends Running, the GB200 job inside one NVLink clique,
# and the script stops everything it started.
source "$(dirname "${BASH_SOURCE[0]}")/../cluster/lib.sh"
export PHALANX_BUILD_DIR="${PHALANX_BUILD_DIR:-$REPO_ROOT/build}"
export PHALANX_CLUSTER_DIR
PHALANX_CLUSTER_DIR=$(mktemp -d /tmp/phalanx-e2e-demo.XXXXXX)
rmdir "$PHALANX_CLUSTER_DIR"
trap '"$REPO_ROOT/hack/phalanx-down.sh" >/dev/null 2>&1 || true' EXIT
out=$(timeout 600 "$REPO_ROOT/hack/demo.sh" 2>&1); rc=$?
[[ $rc == 0 ]] && pass "hack/demo.sh exits 0" || { echo "$out" | tail -40; die "hack/demo.sh exit $rc"; }
for job in team-llm/llama-pretrain-64 team-research/mistral-finetune team-llm/moe-gb200-tp16; do
  grep -q "^$job: Running:" <<<"$out" && pass "$job Running" || fail "$job not Running: $(grep "^$job" <<<"$out")"
done
cliques=$(grep -E '^ +moe-gb200-tp16-[0-9]+ ' <<<"$out" | awk '{print $4}' | sort -u)
[[ $(wc -l <<<"$cliques") == 1 && -n $cliques ]] && pass "all 16 GB200 ranks in one NVLink clique ($cliques)" ||
  fail "GB200 ranks span cliques: $cliques"
grep -qE '^team-llm +training +llm ' <<<"$out" && pass "the demo lists the teams' TrainingQueues (phalanx queues -A)" ||
  fail "the demo's queue listing has no team-llm TrainingQueue: $(grep -A12 'NAMESPACE' <<<"$out" | head -8)"
grep -q "stopping everything" <<<"$out" && pass "the demo stops what it started" || fail "no stop message"
sleep 2
if [[ -f $PHALANX_CLUSTER_DIR/pids ]] && grep -q . "$PHALANX_CLUSTER_DIR/pids" 2>/dev/null; then
  fail "processes still recorded in $PHALANX_CLUSTER_DIR/pids: $(cat "$PHALANX_CLUSTER_DIR/pids")"
else
  pass "no process of the demo left running"
fi
finish

#!/usr/bin/env bash
# docs/cli.md is the --help of every binary and `phalanx` command of this build, verbatim
# (hack/cli-reference.sh --check), so the reference cannot drift from the flags; and the check
# does catch a stale copy. Needs PHALANX_BUILD_DIR (ctest sets it). Fix a failure with
# hack/cli-reference.sh.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
failed=0
pass() { echo "PASS: cli_reference_test: $*"; }
fail() { echo "FAIL: cli_reference_test: $*"; failed=1; }

out=$("$ROOT/hack/cli-reference.sh" --check 2>&1) && pass "$out" || fail "$out"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
sed 's/--min-cycle-interval-ms/--min-cycle-interval-s/' "$ROOT/docs/cli.md" >"$TMP/cli.md"
out=$(PHALANX_CLI_REFERENCE="$TMP/cli.md" "$ROOT/hack/cli-reference.sh" --check 2>&1)
rc=$?
[[ $rc == 1 && $out == *stale* && $out == *--min-cycle-interval-s* ]] &&
  pass "a copy with a renamed flag is reported stale, naming the line (exit 1)" ||
  fail "the check of a stale copy: exit $rc, '$out'"
exit $failed

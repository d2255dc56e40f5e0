#!/usr/bin/env bash
# Hostile input against the real binaries on a private control plane (issue #12): phalanx-scheduler
# and phalanx-operator started by hack/phalanx-up.sh with small limits given as flags
# (PHALANX_SCHEDULER_ARGS / PHALANX_OPERATOR_ARGS), then
#   1. the extender port: a body one byte over --extender-max-body-bytes (413), truncated and
#      wrong-typed JSON (400 naming the field), a wrong method (405 + Allow) and content type
#      (415), a half body that stalls (closed after --http-read-timeout-seconds, no answer),
#      seeded random requests (400 or closed);
#   2. both probe ports: POST (405), a body over 64 KiB (413), a TLS hello (400);
#   3. the gRPC port: seeded random bytes, with and without the HTTP/2 preface (closed), an
#      invalid Placement call (refused naming the field);
#   4. every refusal the servers made themselves is in phalanx_http_requests_rejected_total;
#   5. and after all of it a TrainingJob of the shipped example queues is admitted over gRPC and
#      its gang bound by kube-scheduler through the extender: both binaries kept serving.
# The same cases in depth, fast and without an API server: tests/integration/hostile/.
# Needs hack/cluster/build.sh binaries and $PHALANX_BUILD_DIR (phalanx-scheduler,
# phalanx-operator, phalanx) and python3.
source "$(dirname "${BASH_SOURCE[0]}")/../operator/lib.sh"
PHALANX="$BUILD/cli/phalanx"
[[ -x $PHALANX ]] || die "$PHALANX is not built"
command -v python3 >/dev/null || die "python3 is not installed (hack/setup.sh installs it)"

LIMIT=65536
export PHALANX_SCHEDULER_ARGS="--extender-max-body-bytes $LIMIT --http-read-timeout-seconds 2 --grpc-max-message-bytes $LIMIT"
export PHALANX_OPERATOR_ARGS="--http-read-timeout-seconds 2"
start_cluster --nodes 8 --ttl 600
EXT="${PHALANX_EXTENDER_URL:?env lacks PHALANX_EXTENDER_URL}"
EXT_PORT=${EXT##*:}; EXT_PORT=${EXT_PORT%%/*}
GRPC_PORT=${PHALANX_SCHEDULER_GRPC##*:}
SCHED_HEALTH=$PHALANX_SCHEDULER_HEALTH_PORT
OP_HEALTH=$PHALANX_OPERATOR_HEALTH_PORT

# curl's answer as "<status> <body>" (body on one line).
post() { # url body [content-type]
  curl -s --max-time 10 -o "$PHALANX_CLUSTER_DIR/body" -w '%{http_code}' -X POST \
    -H "Content-Type: ${3:-application/json}" --data-binary @- "$1" <<<"$2" || true
  printf ' %s' "$(tr '\n' ' ' <"$PHALANX_CLUSTER_DIR/body")"
}
expect() { # description want got
  [[ $3 == "$2"* ]] && pass "$1: $3" || fail "$1: want '$2...', got '$3'"
}

# --- 1. the extender port ------------------------------------------------------------------
pod='{"metadata":{"name":"p","namespace":"ml"}}'
# curl's --data-binary @- with <<< adds a newline: pad to exactly LIMIT + 1 bytes with it.
big=$(printf '{"Pod":%s,"NodeNames":["n0"]}%*s' "$pod" $((LIMIT - 48)) '')
expect "a body one byte over --extender-max-body-bytes" \
  "413 request body larger than $LIMIT bytes" "$(post "$EXT/filter" "${big:0:LIMIT}")"
expect "a body at the limit is decoded" "200 " "$(post "$EXT/filter" "${big:0:LIMIT-1}")"
expect "truncated JSON" "400 phalanx extender: malformed JSON" "$(post "$EXT/filter" '{"Pod":{"metadata":{"na')"
expect "a string where an object goes" "400 phalanx extender: Pod: expected an object" \
  "$(post "$EXT/filter" '{"Pod":"p","NodeNames":["n0"]}')"
expect "a number in NodeNames" "400 phalanx extender: NodeNames[1]: expected a string" \
  "$(post "$EXT/prioritize" "{\"Pod\":$pod,\"NodeNames\":[\"n0\",7]}")"
expect "null Node in bind" "400 phalanx extender: Node: missing" \
  "$(post "$EXT/bind" '{"PodName":"p","PodNamespace":"ml","Node":null}')"
expect "a non-JSON content type" "415 phalanx extender: bind takes application/json, not text/plain" \
  "$(post "$EXT/bind" '{}' text/plain)"
head=$(curl -s --max-time 10 -D - -o /dev/null "$EXT/filter" | tr -d '\r')
[[ $head == "HTTP/1.1 405"* && $head == *"Allow: POST"* ]] && pass "GET on filter: 405 with Allow: POST" ||
  fail "GET on filter: $head"

# Raw sockets for what curl will not send. Prints one line per case: "<case> <first status line
# or 'none'> <seconds until the server closed>".
python3 - "$EXT_PORT" "$SCHED_HEALTH" "$OP_HEALTH" "$GRPC_PORT" >"$PHALANX_CLUSTER_DIR/raw.txt" <<'PY' ||
import random, socket, sys, time
ext, sched_health, op_health, grpc = (int(p) for p in sys.argv[1:5])

def exchange(port, data, wait=8.0):
    s = socket.create_connection(("127.0.0.1", port), timeout=wait)
    start = time.monotonic()
    try:
        s.sendall(data)
    except OSError:
        pass
    got = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    except socket.timeout:
        return first_line(got), "open"
    except OSError:
        pass
    finally:
        s.close()
    return first_line(got), "%.1f" % (time.monotonic() - start)

def first_line(got):
    # The answer's first line as one printable word (an HTTP/2 server answers in binary frames).
    if not got:
        return "none"
    line = got.split(b"\r\n")[0][:60].decode("latin1")
    return "".join(c if "!" <= c <= "~" else "_" for c in line)

body = b'{"Pod":{"metadata":{"name":"p","namespace":"ml"}},"NodeNames":["n0"]}'
stall = (b"POST /scheduler/filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
         b"Content-Length: %d\r\n\r\n" % len(body)) + body[: len(body) // 2]
print("stall", *exchange(ext, stall))
rng = random.Random(20261125)
for i in range(10):
    junk = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 2048)))
    print("random-request-%d" % i, *exchange(ext, junk))
for name, port in (("scheduler-probes", sched_health), ("operator-probes", op_health)):
    print(name + "-tls-hello", *exchange(port, b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"))
    print(name + "-big", *exchange(port, b"POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 70000\r\n\r\n"))
    print(name + "-post", *exchange(port, b"POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
for i in range(10):
    junk = bytes(rng.randrange(256) for _ in range(rng.randrange(16, 1024)))
    print("grpc-random-%d" % i, *exchange(grpc, junk if i % 2 else preface + junk))
PY
  die "the raw-socket client failed: $(cat "$PHALANX_CLUSTER_DIR/raw.txt")"
raw() { awk -v c="$1" '$1 == c {print $2, $3}' "$PHALANX_CLUSTER_DIR/raw.txt"; }

read -r line secs <<<"$(raw stall)"
[[ $line == none && $secs != open ]] && awk -v s="$secs" 'BEGIN{exit !(s >= 1.5 && s < 6)}' &&
  pass "a stalled half body: closed after ${secs}s (--http-read-timeout-seconds 2), no answer" ||
  fail "a stalled half body: answer '$line', closed after '$secs' s"
bad=0
for i in $(seq 0 9); do
  read -r line secs <<<"$(raw random-request-$i)"
  [[ ($line == HTTP/1.1_400_* || $line == none) && $secs != open ]] || { bad=$((bad + 1)); echo "  random request $i: $line $secs"; }
done
[[ $bad == 0 ]] && pass "10 seeded random requests: 400 or closed, none left open" || fail "$bad random requests answered otherwise"

# --- 2. the probe ports --------------------------------------------------------------------
for who in scheduler operator; do
  expect "$who probes: a TLS hello" "HTTP/1.1_400" "$(raw $who-probes-tls-hello)"
  expect "$who probes: a 70,000-byte body" "HTTP/1.1_413" "$(raw $who-probes-big)"
  expect "$who probes: POST /healthz" "HTTP/1.1_405" "$(raw $who-probes-post)"
done

# --- 3. the gRPC port ----------------------------------------------------------------------
bad=0
for i in $(seq 0 9); do
  read -r line secs <<<"$(raw grpc-random-$i)"
  [[ $secs != open ]] || { bad=$((bad + 1)); echo "  grpc garbage $i: connection still open"; }
done
[[ $bad == 0 ]] && pass "10 seeded random byte strings on the gRPC port: each connection closed" ||
  fail "$bad gRPC connections left open after garbage"
# The CLI checks what it can; an elastic range is passed through as given.
out=$("$PHALANX" placement explain --server "$PHALANX_SCHEDULER_GRPC" --job ml/x --elastic 4:2:1 2>&1)
[[ $out == *"request.elastic.min (4) > request.elastic.max (2)"* ]] &&
  pass "an invalid Placement call is refused naming the field: $out" || fail "invalid Placement call: $out"

# --- 4. the refusals are counted -----------------------------------------------------------
m=$(curl -sf --max-time 10 "http://127.0.0.1:$SCHED_HEALTH/metrics")
o=$(curl -sf --max-time 10 "http://127.0.0.1:$OP_HEALTH/metrics")
series() { grep -E "^phalanx_http_requests_rejected_total\{server=\"$2\",reason=\"$3\"\} " <<<"$1" | awk '{print $2}'; }
for check in "extender body_too_large 1" "extender timeout 1" "extender malformed 1" "probes body_too_large 1" "probes malformed 1"; do
  read -r server reason at_least <<<"$check"
  v=$(series "$m" "$server" "$reason")
  [[ -n $v ]] && awk -v v="$v" -v n="$at_least" 'BEGIN{exit !(v >= n)}' &&
    pass "phalanx-scheduler counted $server/$reason: $v" || fail "phalanx-scheduler $server/$reason: '$v'"
done
v=$(series "$o" probes body_too_large)
[[ $v == 1 ]] && pass "phalanx-operator counted probes/body_too_large: $v" || fail "phalanx-operator probes/body_too_large: '$v'"
grep -qE '^phalanx_extender_requests_total\{verb="filter",outcome="bad_request"\} [1-9]' <<<"$m" &&
  pass "the extender's own 400s are bad_request outcomes" || fail "no filter bad_request outcome counted"

# --- 5. both binaries kept serving ---------------------------------------------------------
apply_example_queues
job team-llm survivor 2
if eventually 120 all_running team-llm survivor 2; then
  pass "after all of it, TrainingJob team-llm/survivor was admitted and both pods bound and Running"
else
  fail "team-llm/survivor not Running: phase $(phase team-llm survivor), $(cond team-llm survivor Queued)"
fi
curl -sf --max-time 5 "http://127.0.0.1:$SCHED_HEALTH/readyz" >/dev/null && curl -sf --max-time 5 "http://127.0.0.1:$OP_HEALTH/readyz" >/dev/null &&
  pass "both /readyz still 200" || fail "a /readyz is not 200"
out=$(check_invariants) && pass "invariants hold" || fail "invariants broken: $out"
finish

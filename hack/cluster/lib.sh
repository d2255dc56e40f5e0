# Shared helpers for hack/cluster/*.sh. Source it; do not execute.
# shellcheck shell=bash
PHX_CLUSTER_HACK="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$PHX_CLUSTER_HACK/versions.env"
PHALANX_CACHE="${PHALANX_CACHE:-$HOME/.cache/phalanx}"
PHALANX_CLUSTER_DIR="${PHALANX_CLUSTER_DIR:-/tmp/phalanx-cluster}"
export PATH="/usr/local/go/bin:$PATH"

# "+patched.<hash of the patches>" when hack/cluster/<module dir>/patches/ holds patches that
# hack/cluster/build.sh applies to the upstream source, else nothing: a changed patch builds
# into a new cache directory, as a version bump does.
phx_patch_tag() { # module dir
  local p
  mapfile -t p < <(phx_patches "$1")
  ((${#p[@]})) || return 0
  echo "+patched.$(cat "${p[@]}" | sha256sum | cut -c1-8)"
}

# The patches of a module dir (hack/cluster/<dir>/patches/*.patch), one path per line, in the
# order they apply; nothing when it has none.
phx_patches() { # module dir
  local p
  for p in "$PHX_CLUSTER_HACK/$1"/patches/*.patch; do
    [[ -f $p ]] && echo "$p"
  done
  return 0
}

# Version of each binary, as pinned (and patched).
phx_version() {
  case $1 in
    kube-apiserver|kube-controller-manager|kube-scheduler) echo "$KUBERNETES_VERSION" ;;
    etcd|etcdctl) echo "$ETCD_VERSION" ;;
    kwok) echo "$KWOK_VERSION$(phx_patch_tag kwok)" ;;
    helm) echo "$HELM_VERSION" ;;
    *) echo "unknown binary $1" >&2; return 1 ;;
  esac
}

# Path of a cached binary: $PHALANX_CACHE/bin/<name>-<version>/<name>
phx_bin() {
  local v; v=$(phx_version "$1") || return 1
  echo "$PHALANX_CACHE/bin/$1-$v/$1"
}

# Exit with a message naming what is missing if a binary is not built.
phx_need_bin() {
  local b; b=$(phx_bin "$1")
  if [[ ! -x "$b" ]]; then
    echo "FATAL: $1 $(phx_version "$1") is not built at $b; run hack/cluster/build.sh" >&2
    exit 1
  fi
}

# A free TCP port on 127.0.0.1 (bound and released; good enough for tests on one machine).
# A port is free when asked, but not bound until its server starts: two calls (one script's
# etcd and kube-controller-manager, or two e2e tests running side by side) could otherwise be
# handed the same port, and the second server fails with "address already in use" (seen in CI).
# Every port handed out is recorded, under a lock, in $PHALANX_PORT_REGISTRY for 10 minutes and
# never handed out again in that time. Ports are taken below the kernel's ephemeral range
# (net.ipv4.ip_local_port_range): a port the kernel handed out by bind(0) is one it also gives
# to outgoing connections, so when a server was killed and restarted (restart.sh etcd --kill)
# a client connection could already hold it and the restart failed with "bind: address already
# in use" (cluster_lifecycle_test, CI 2026-11-30).
PHALANX_PORT_REGISTRY=${PHALANX_PORT_REGISTRY:-${TMPDIR:-/tmp}/phalanx-ports-handed-out}
phx_free_port() {
  if PHX_REG=$PHALANX_PORT_REGISTRY python3 - 2>/dev/null <<'PY'
import fcntl, os, random, socket, time
now, keep = time.time(), 600
try:
    low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
except (OSError, ValueError, IndexError):
    low = 32768
low = max(low, 12000)
with open(os.environ["PHX_REG"], "a+") as f:
    fcntl.flock(f, fcntl.LOCK_EX)
    f.seek(0)
    recent = {}
    for line in f:
        parts = line.split()
        if len(parts) == 2 and now - float(parts[1]) < keep:
            recent[int(parts[0])] = float(parts[1])
    for _ in range(200):
        port = random.randrange(10000, low)
        if port in recent:
            continue
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            s.close()
        break
    else:
        raise SystemExit(1)
    recent[port] = now
    f.seek(0)
    f.truncate()
    f.write("".join(f"{p} {t}\n" for p, t in recent.items()))
    print(port)
PY
  then
    return 0
  fi
  # no python3: probe random ports below the usual ephemeral range until nothing answers
  local p i
  for ((i = 0; i < 200; i++)); do
    p=$((10000 + RANDOM % 22000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  echo "phx_free_port: no free port found" >&2
  return 1
}

# ---- process management (used by up.sh, down.sh, restart.sh, start-scheduler.sh) ----
# $PHALANX_CLUSTER_DIR/pids has one line per started process: "<name> <pid> <starttime>"
# where <starttime> is field 22 of /proc/<pid>/stat, so a recycled PID is never signalled.
# $PHALANX_CLUSTER_DIR/run/<name>.sh is the exact command line of each component, so a
# single component can be restarted with the same flags (restart.sh).

phx_starttime() { # pid -> starttime or empty
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  stat=${stat##*) }         # drop "pid (comm) " (comm may contain spaces)
  # shellcheck disable=SC2086
  set -- $stat
  echo "${20}"              # field 22 overall = 20th after pid and comm
}

phx_alive() { # pid starttime
  [[ -n ${1:-} && -d /proc/$1 ]] || return 1
  local st; st=$(phx_starttime "$1")
  [[ -n $st && $st == "${2:-$st}" ]] || return 1
  # a zombie has exited already
  [[ $(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) != Z ]]
}

# Record (replace) the pid line of a component.
phx_record_pid() { # name pid
  local f="$PHALANX_CLUSTER_DIR/pids"
  touch "$f"
  local st; st=$(phx_starttime "$2")
  { grep -v "^$1 " "$f" || true; echo "$1 $2 $st"; } >"$f.tmp" && mv "$f.tmp" "$f"
}

phx_pid_of() { # name -> "pid starttime"
  awk -v n="$1" '$1==n {print $2, $3}' "$PHALANX_CLUSTER_DIR/pids" 2>/dev/null
}

# Start $PHALANX_CLUSTER_DIR/run/<name>.sh in its own session (setsid), detached from this
# shell, logs appended to logs/<name>.log, and record its PID. It outlives the caller;
# down.sh stops it by PID.
phx_start() { # name
  local name=$1 dir=$PHALANX_CLUSTER_DIR
  mkdir -p "$dir/logs"
  echo "=== start $(date -u +%FT%TZ) ===" >>"$dir/logs/$name.log"
  setsid bash "$dir/run/$name.sh" >>"$dir/logs/$name.log" 2>&1 </dev/null &
  local pid=$!
  phx_record_pid "$name" "$pid"
  echo "$pid"
}

# Stop one process by PID: SIGTERM, wait up to $2 seconds, then SIGKILL. Returns 0 when gone.
phx_stop_pid() { # pid timeout starttime
  local pid=$1 t=${2:-15} st=${3:-}
  phx_alive "$pid" "$st" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  local i
  for ((i = 0; i < t * 10; i++)); do
    phx_alive "$pid" "$st" || return 0
    sleep 0.1
  done
  echo "[down] pid $pid did not exit after ${t}s of SIGTERM; sending SIGKILL" >&2
  kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    phx_alive "$pid" "$st" || return 0
    sleep 0.1
  done
  echo "[down] pid $pid still alive after SIGKILL" >&2
  return 1
}

# Stop a named component recorded in the pids file and drop its line.
phx_stop() { # name [timeout]
  local name=$1 t=${2:-15} line pid st
  line=$(phx_pid_of "$name")
  [[ -n $line ]] || return 0
  read -r pid st <<<"$line"
  phx_stop_pid "$pid" "$t" "$st" || return 1
  local f="$PHALANX_CLUSTER_DIR/pids"
  { grep -v "^$name " "$f" || true; } >"$f.tmp" && mv "$f.tmp" "$f"
}

# Wait until a command succeeds, up to $1 seconds; fail naming what and the log.
phx_wait() { # timeout what logname cmd...
  local t=$1 what=$2 log=$3; shift 3
  local deadline=$((SECONDS + t))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= deadline)); then
      echo "[up] FAILED: $what not ready after ${t}s; last lines of $PHALANX_CLUSTER_DIR/logs/$log.log:" >&2
      tail -n 30 "$PHALANX_CLUSTER_DIR/logs/$log.log" >&2 2>/dev/null || true
      return 1
    fi
    # fail fast if the process died
    local line pid st
    line=$(phx_pid_of "$log")
    if [[ -n $line ]]; then
      read -r pid st <<<"$line"
      if ! phx_alive "$pid" "$st"; then
        echo "[up] FAILED: $what (pid $pid) exited; last lines of $PHALANX_CLUSTER_DIR/logs/$log.log:" >&2
        tail -n 30 "$PHALANX_CLUSTER_DIR/logs/$log.log" >&2 2>/dev/null || true
        return 1
      fi
    fi
    sleep 0.3
  done
}

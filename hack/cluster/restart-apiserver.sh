#!/usr/bin/env bash
# Restart kube-apiserver of the running local cluster (same flags/port/certs); waits for /readyz.
# Usage: hack/cluster/restart-apiserver.sh [--down-for SECONDS]
exec "$(dirname "${BASH_SOURCE[0]}")/restart.sh" kube-apiserver "$@"

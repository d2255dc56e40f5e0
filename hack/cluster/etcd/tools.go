//go:build tools

// Package tools pins the upstream commands built by hack/cluster/build.sh.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "go.etcd.io/etcd/etcdctl/v3"
)

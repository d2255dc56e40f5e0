//go:build tools

// Package tools pins the upstream commands built by hack/cluster/build.sh.
package tools

import (
	_ "sigs.k8s.io/kwok/cmd/kwok"
)

//go:build tools

// Package tools pins the upstream commands built by hack/cluster/build.sh.
package tools

import (
	_ "helm.sh/helm/v3/cmd/helm"
)

//go:build tools

// Package tools pins the Kubernetes end-to-end test tree and the ginkgo CLI that runs it in
// parallel, for go mod tidy.
package tools

import (
	_ "github.com/onsi/ginkgo/v2/ginkgo"
	_ "k8s.io/kubernetes/test/e2e"
)

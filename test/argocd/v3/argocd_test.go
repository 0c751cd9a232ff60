// Package argocd_test runs test/argocd/cmpsuite against Argo CD v3's own CMP
// server code, through the adapter in adapter_test.go.
package argocd_test

import (
	"testing"

	"github.com/tenancy-dev/tenancy/test/argocd/cmpsuite"
)

func TestArgoCD(t *testing.T) { cmpsuite.Run(t, argoCD{}) }

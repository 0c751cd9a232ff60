// Package kaiwork is what the suites that run the real KAI Scheduler share:
// building KAI from its release source and starting a control plane of
// their own with what KAI's chart installs besides its components (Start),
// simulated GPU Nodes (UseNodes), and making a rendered agreement the
// cluster's with no work left over (UseAgreement, ClearWorkloads). The KAI
// suite (../../kai) checks the render's behaviour with it, the contention
// proof (../../contention/kai) the numbers of explain --contention.
package kaiwork

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/await"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
)

// QueueGVR is KAI's Queue.
var QueueGVR = schema.GroupVersionResource{Group: "scheduling.run.ai", Version: "v2", Resource: "queues"}

// ManagedBy selects what tenancy renders.
const ManagedBy = "app.kubernetes.io/managed-by=tenancy"

// Cluster is a running KAI control plane as a suite's checks use it.
type Cluster struct {
	CP *controlplane.ControlPlane
	// Tenancy is the tenancy binary; RepoRoot the clone it renders from
	// (agreement paths are relative to it).
	Tenancy, RepoRoot string
	// Namespaces are every namespace the suite runs work in:
	// ClearWorkloads empties them.
	Namespaces []string
	// Waits are the suite's deadlines and its summary of the cluster.
	Waits await.Waits
}

// Ctx is a check's context for one step: a few minutes at most, cancelled
// when the check ends.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func (c *Cluster) waitFor(t testing.TB, what string, cond await.Cond) {
	t.Helper()
	c.Waits.Until(t, Ctx(t), what, cond)
}

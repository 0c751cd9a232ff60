package kai

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/windowsproc"
)

// queueGPULimit is a KAI Queue's spec.resources.gpu.limit as the API
// server has it: what `tenancy windows` changes for a window's borrow.
func queueGPULimit(ctx context.Context, name string) (float64, error) {
	q, err := env.cp.Dynamic.Resource(queueGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return 0, err
	}
	v, ok, err := unstructured.NestedFieldNoCopy(q.Object, "spec", "resources", "gpu", "limit")
	if err != nil || !ok {
		return 0, fmt.Errorf("queue %s has no spec.resources.gpu.limit (%v)", name, err)
	}
	switch n := v.(type) {
	case int64:
		return float64(n), nil
	case float64:
		return n, nil
	}
	return 0, fmt.Errorf("queue %s: gpu limit %v (%T)", name, v, v)
}

// TestKAIWindowBorrow: a lending window's borrow in the real KAI. Outside
// the window training may borrow nothing: of 12 pods, 8 bind (its Queue's
// limit 8) although 16 GPUs are idle. Then `tenancy windows --backend kai`
// (the repository's binary, its clock started inside the window) applies
// the window's borrow 8 to the Queue's gpu limit (16, under its field
// manager), and KAI binds the other 4. What KAI cannot take from a window,
// its lendable, is refused or warned by the render (docs/kai.md).
func TestKAIWindowBorrow(t *testing.T) {
	begin(t)
	path := testdata("kai-windows.toml")
	clearWorkloads(t)
	useNodes(t, h100Nodes())
	all := render(t, path)
	var objs []*obj
	for _, o := range all {
		// The controller runs as a process below, not as the rendered
		// Deployment (no kube-scheduler runs here to place it).
		if o.GetNamespace() == "tenancy-system" || o.GetName() == "tenancy-system" || strings.HasPrefix(o.GetName(), "tenancy-windows-") {
			continue
		}
		objs = append(objs, o)
	}
	if len(objs) == len(all) {
		t.Fatal("the KAI render of an agreement with a window has no windows controller")
	}
	applyAgreement(t, objs)
	if got, err := queueGPULimit(ctxFor(t), "training"); err != nil || got != 8 {
		t.Fatalf("training's Queue as rendered: gpu limit %v (%v), want 8 (guaranteed 8, borrow 0 outside the window)", got, err)
	}
	trainingNoPriority := work{ns: "training", queue: "training"}
	pods(t, trainingNoPriority, "w", 12)
	// Watched for a settle that training stays within its limit 8 outside
	// the window.
	waitBound(t, "training", "w", 8)

	// 12:00 UTC on a Monday: inside the window, which is every day.
	w, err := windowsproc.Start(env.tenancy,
		"--agreement", filepath.Join(env.repoRoot, path),
		"--backend", "kai",
		"--kubeconfig", env.cp.Kubeconfig,
		"--namespace", "default",
		"--lease", "tenancy-windows-kai-e2e",
		"--identity", "kai-e2e",
		"--metrics-address", "127.0.0.1:0",
		"--fake-start", time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC).Format(time.RFC3339))
	if err != nil {
		t.Fatalf("start tenancy windows: %v", err)
	}
	t.Cleanup(func() {
		w.Stop()
		if t.Failed() {
			t.Logf("tenancy windows said:\n%s", w.Log())
		}
	})
	waitFor(t, "training's Queue gpu limit 16 inside the window", func(ctx context.Context) (bool, string) {
		got, err := queueGPULimit(ctx, "training")
		return err == nil && got == 16, fmt.Sprintf("%v (%v)", got, err)
	})
	q, err := env.cp.Dynamic.Resource(queueGVR).Get(ctxFor(t), "training", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owned := false
	for _, m := range q.GetManagedFields() {
		owned = owned || m.Manager == "tenancy-windows"
	}
	if !owned {
		t.Errorf("training's Queue has no managedFields entry of tenancy-windows: %v", q.GetManagedFields())
	}
	reached(t, "training", "w", 12) // every pod: no settle can fail
	waitQueueGPUs(t, "training", 12)
}

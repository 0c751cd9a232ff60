package argocd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/windowsproc"
)

// TestWindowSync (in loop_test.go, so that TestRemoveTeam stays last) uses
// these: the windows controller as a process, and what it changes in
// inference's ClusterQueue.

const (
	// windowManager is the server-side apply field manager of `tenancy
	// windows` (windowctl.FieldManager), which the Application's
	// ignoreDifferences names.
	windowManager = "tenancy-windows"
	// respectIgnoreDifferences is the sync option docs/argocd.md tells
	// users to add beside the ignoreDifferences.
	respectIgnoreDifferences = "RespectIgnoreDifferences=true"
)

// windowStart is the instant the controller's clock starts at: noon UTC on
// a Monday, four hours into windowAgreement's window and eight before it
// closes, so the window is open for the whole check however slow the
// machine, and no edge falls inside it.
var windowStart = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

// windowAgreement is the reference agreement with a lending window for
// inference: it lends 6 of its 8 GPUs from 08:00 to 20:00 UTC, every day
// (0 outside, as in the reference).
func windowAgreement(t *testing.T) []byte {
	t.Helper()
	ref := string(readAgreement(t, "tenancy.toml"))
	const team = "[teams.inference]\nguaranteed = 8\nlendable = 0\nborrow = 0\n"
	if !strings.Contains(ref, team) {
		t.Fatal("the reference tenancy.toml no longer has the inference team this check gives a window")
	}
	return []byte(strings.Replace(ref, team, team+`
# Inference's traffic is low in the daytime of this test: it lends 6.
[[teams.inference.windows]]
from = "08:00"
to = "20:00"
lendable = 6
`, 1))
}

// startWindowsController runs the controller on agreement with its clock
// starting at start. It applies once at start-up, then at edges and every
// --resync; the resync is an hour so that it applies exactly once during
// the check: a sync that reverted its value would stay visible instead of
// being repaired within the default 30 s. Each identity has a Lease of its
// own, so a restarted controller need not wait for a killed one's to
// expire.
func startWindowsController(t *testing.T, agreement []byte, start time.Time, identity string) *windowsproc.Controller {
	t.Helper()
	file := filepath.Join(t.TempDir(), "tenancy.toml")
	if err := os.WriteFile(file, agreement, 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := windowsproc.Start(env.tenancy,
		"--agreement", file,
		"--kubeconfig", env.cp.Kubeconfig,
		"--namespace", "default",
		"--lease", "tenancy-windows-"+identity,
		"--identity", identity,
		"--metrics-address", "127.0.0.1:0",
		"--resync", "1h",
		"--fake-start", start.Format(time.RFC3339))
	if err != nil {
		t.Fatalf("start tenancy windows: %v", err)
	}
	t.Cleanup(func() {
		w.Stop()
		if t.Failed() {
			t.Logf("tenancy windows log:\n%s", w.Log())
		}
	})
	return w
}

// queueState is what the check reads of inference's ClusterQueue.
type queueState struct {
	lendingLimit int64 // of nvidia.com/gpu in flavor h100
	generation   int64 // any spec change, a revert included, raises it
	// windowOwns: the tenancy-windows managedFields entry holds
	// spec.resourceGroups, which is what managedFieldsManagers ignores.
	windowOwns bool
	managers   []string
}

func (q queueState) String() string {
	return fmt.Sprintf("lendingLimit %d, generation %d, tenancy-windows owns spec.resourceGroups: %v, managers %v", q.lendingLimit, q.generation, q.windowOwns, q.managers)
}

func inferenceQueue(ctx context.Context, t *testing.T) queueState {
	t.Helper()
	o, err := env.cp.Dynamic.Resource(kueueGVR("clusterqueues")).Get(ctx, "inference", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get ClusterQueue inference: %v", err)
	}
	q := queueState{lendingLimit: -1, generation: o.GetGeneration()}
	rgs, _, _ := unstructured.NestedSlice(o.Object, "spec", "resourceGroups")
	for _, rg := range rgs {
		flavors, _, _ := unstructured.NestedSlice(rg.(map[string]any), "flavors")
		for _, f := range flavors {
			f := f.(map[string]any)
			if f["name"] != "h100" {
				continue
			}
			rs, _, _ := unstructured.NestedSlice(f, "resources")
			for _, r := range rs {
				r := r.(map[string]any)
				if r["name"] != "nvidia.com/gpu" {
					continue
				}
				v, err := resource.ParseQuantity(fmt.Sprint(r["lendingLimit"]))
				if err != nil {
					t.Fatalf("ClusterQueue inference: lendingLimit %v: %v", r["lendingLimit"], err)
				}
				q.lendingLimit = v.Value()
			}
		}
	}
	for _, mf := range o.GetManagedFields() {
		q.managers = append(q.managers, mf.Manager+"/"+string(mf.Operation))
		if mf.Manager != windowManager || mf.FieldsV1 == nil {
			continue
		}
		var fields map[string]map[string]any
		if err := json.Unmarshal(mf.FieldsV1.Raw, &fields); err != nil {
			t.Fatalf("managedFields of %s: %v", windowManager, err)
		}
		_, q.windowOwns = fields["f:spec"]["f:resourceGroups"]
	}
	return q
}

// syncNow starts a sync of the Application at revision, as `argocd app
// sync` has Argo CD's API server do (none runs here): it writes the
// operation, whose sync options are the Application's own unless the
// request names others (server/application's Sync), and the application
// controller runs it, reading RespectIgnoreDifferences from the operation
// (controller/sync.go), as for an automated sync, which copies the
// Application's. who names the operation, so that the check waits for this
// one and no other.
func syncNow(t *testing.T, revision, who string, syncOptions []string) *appStatus {
	t.Helper()
	op := map[string]any{"operation": map[string]any{
		"initiatedBy": map[string]any{"username": who},
		"sync":        map[string]any{"revision": revision, "prune": true, "syncOptions": syncOptions},
	}}
	patch, err := json.Marshal(op)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.cp.Dynamic.Resource(appGVR).Namespace(argoNamespace).Patch(ctxFor(t), appName, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("start a sync: %v", err)
	}
	s := waitApp(t, "the sync "+who+" finished", 2*time.Minute, func(s *appStatus) bool {
		o := s.OperationState
		return o != nil && o.Operation.InitiatedBy.Username == who && o.Phase != "Running"
	})
	if s.OperationState.Phase != "Succeeded" {
		t.Fatalf("sync %s: %s", who, s.summary())
	}
	return s
}

// syncedQueue reports whether the Application lists inference's
// ClusterQueue Synced and Healthy.
func syncedQueue(s *appStatus) bool {
	for _, r := range resourcesOf(s, "ClusterQueue") {
		if r.Name == "inference" {
			return r.Status == "Synced" && r.Health != nil && r.Health.Status == "Healthy"
		}
	}
	return false
}

// setIgnoreDifferences sets the Application's ignoreDifferences to
// application()'s, or removes them.
func setIgnoreDifferences(t *testing.T, on bool) {
	t.Helper()
	var v any
	if on {
		v, _, _ = unstructured.NestedSlice(application(env.repo.URL).Object, "spec", "ignoreDifferences")
	}
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"ignoreDifferences": v}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.cp.Dynamic.Resource(appGVR).Namespace(argoNamespace).Patch(ctxFor(t), appName, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("set ignoreDifferences: %v", err)
	}
}

// appliedQueue reports whether the last sync applied inference's
// ClusterQueue (Argo CD applies every resource of the Application, not
// only those it shows OutOfSync), so a sync that kept its value did so
// while writing it.
func appliedQueue(s *appStatus) (string, bool) {
	if s.OperationState == nil || s.OperationState.SyncResult == nil {
		return "", false
	}
	for _, r := range s.OperationState.SyncResult.Resources {
		if r.Kind == "ClusterQueue" && r.Name == "inference" {
			return r.Message, r.Status == "Synced"
		}
	}
	return "", false
}

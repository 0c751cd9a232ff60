package argocd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

// appName is the one Application the checks drive; appPath is its source
// path in the repository.
const (
	appName = "gpu-queues"
	appPath = "clusters/gpu"
)

var appGVR = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}

// application is the Application docs/argocd.md tells users to write:
// the tenancy plugin, the in-cluster destination, automated sync with
// prune and self-heal, allowEmpty unset, and what "Lending windows: let the
// controller own its fields" adds for agreements with windows, taken from
// `tenancy argocd ignore-differences` as the docs say. Every check
// runs with the latter, windows or not: the docs give it as an addition to
// the one Application, so it must change nothing for an agreement without
// windows, and the checks before TestWindowSync prove that.
func application(repoURL string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1",
		"kind":       "Application",
		"metadata":   map[string]any{"name": appName, "namespace": argoNamespace},
		"spec": map[string]any{
			"project": "default",
			"source": map[string]any{
				"repoURL":        repoURL,
				"targetRevision": "main",
				"path":           appPath,
				"plugin":         map[string]any{"name": "tenancy"},
			},
			"destination":       map[string]any{"server": "https://kubernetes.default.svc"},
			"ignoreDifferences": windowField("ignoreDifferences"),
			"syncPolicy": map[string]any{
				"automated":   map[string]any{"prune": true, "selfHeal": true},
				"syncOptions": windowField("syncPolicy", "syncOptions"),
			},
		},
	}}
}

// windowField is a list from the spec `tenancy argocd ignore-differences`
// printed (env.windowFields), deep-copied so a check may change its
// Application freely.
func windowField(path ...string) []any {
	v, _, _ := unstructured.NestedSlice(env.windowFields, append([]string{"spec"}, path...)...)
	return v
}

// appStatus is the part of an Application's status the checks read.
type appStatus struct {
	Sync struct {
		Status   string `json:"status"`
		Revision string `json:"revision"`
	} `json:"sync"`
	Health struct {
		Status  string `json:"status"`
		Message string `json:"message"`
	} `json:"health"`
	Conditions []struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"conditions"`
	OperationState *struct {
		Phase     string `json:"phase"`
		Message   string `json:"message"`
		StartedAt string `json:"startedAt"`
		Operation struct {
			InitiatedBy struct {
				Username  string `json:"username"`
				Automated bool   `json:"automated"`
			} `json:"initiatedBy"`
		} `json:"operation"`
		SyncResult *struct {
			Revision  string `json:"revision"`
			Resources []struct {
				Group   string `json:"group"`
				Kind    string `json:"kind"`
				Name    string `json:"name"`
				Status  string `json:"status"`
				Message string `json:"message"`
			} `json:"resources"`
		} `json:"syncResult"`
	} `json:"operationState"`
	Resources []appResource `json:"resources"`
}

type appResource struct {
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	Health    *struct {
		Status  string `json:"status"`
		Message string `json:"message"`
	} `json:"health"`
	RequiresPruning bool `json:"requiresPruning"`
}

func (r appResource) String() string {
	h := "-"
	if r.Health != nil {
		h = r.Health.Status
		if r.Health.Message != "" {
			h += " (" + r.Health.Message + ")"
		}
	}
	return fmt.Sprintf("%s/%s %s/%s sync=%s health=%s", r.Group, r.Kind, r.Namespace, r.Name, r.Status, h)
}

func (s *appStatus) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sync=%s revision=%.8s health=%s", s.Sync.Status, s.Sync.Revision, s.Health.Status)
	if s.OperationState != nil {
		fmt.Fprintf(&b, " operation=%s (%s)", s.OperationState.Phase, s.OperationState.Message)
	}
	for _, c := range s.Conditions {
		fmt.Fprintf(&b, "\n  condition %s: %s", c.Type, c.Message)
	}
	for _, r := range s.Resources {
		fmt.Fprintf(&b, "\n  %s", r)
	}
	return b.String()
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func getApp(ctx context.Context) (*unstructured.Unstructured, *appStatus, error) {
	return getAppNamed(ctx, appName)
}

// getAppNamed reads the Application name and its status.
func getAppNamed(ctx context.Context, name string) (*unstructured.Unstructured, *appStatus, error) {
	u, err := env.cp.Dynamic.Resource(appGVR).Namespace(argoNamespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	var s appStatus
	if err := decodeInto(u.Object["status"], &s); err != nil {
		return nil, nil, fmt.Errorf("decode Application status: %w", err)
	}
	return u, &s, nil
}

// decodeInto converts an unstructured value into a typed one via JSON.
func decodeInto(v any, into any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, into)
}

// ensureApp creates the Application once.
func ensureApp(t *testing.T) {
	t.Helper()
	ctx := ctxFor(t)
	_, err := env.cp.Dynamic.Resource(appGVR).Namespace(argoNamespace).Create(ctx, application(env.repo.URL), metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create Application: %v", err)
	}
}

// refresh asks the controller for a comparison with the latest commit, as
// `argocd app get --refresh` (or a Git webhook) does, and waits until it
// has happened. kind is "normal" or "hard" (hard also regenerates the
// manifests, running the plugin again).
func refresh(t *testing.T, kind string) *appStatus {
	t.Helper()
	return refreshApp(t, appName, kind)
}

// refreshApp is refresh for the Application name.
func refreshApp(t *testing.T, name, kind string) *appStatus {
	t.Helper()
	ctx := ctxFor(t)
	annotate := func(value string) {
		t.Helper()
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"argocd.argoproj.io/refresh":%s}}}`, value)
		if _, err := env.cp.Dynamic.Resource(appGVR).Namespace(argoNamespace).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatalf("request refresh: %v", err)
		}
	}
	annotate(strconv.Quote(kind))
	var last *appStatus
	asked := time.Now()
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 90*time.Second, true, func(ctx context.Context) (bool, error) {
		u, s, err := getAppNamed(ctx, name)
		if err != nil {
			return false, nil
		}
		last = s
		// The controller removes the annotation in the same update that
		// writes the comparison's result (reconciledAt has only seconds, so
		// it cannot tell two refreshes in one second apart).
		_, pending := u.GetAnnotations()["argocd.argoproj.io/refresh"]
		if pending && time.Since(asked) > 30*time.Second {
			// Once, on a loaded machine, the controller left a refresh
			// request unprocessed for 90 s and took the next one at once.
			// Ask again as a user would: setting the same value is a no-op
			// patch that no watch sees, so remove the annotation first.
			t.Logf("refresh (%s) still pending after %s; asking again", kind, time.Since(asked).Round(time.Second))
			annotate("null")
			annotate(strconv.Quote(kind))
			asked = time.Now()
		}
		return !pending, nil
	})
	if err != nil {
		t.Fatalf("refresh (%s) of %s did not happen: %v\nlast status: %s", kind, name, err, last.summary())
	}
	return last
}

// waitApp polls the Application until cond holds.
func waitApp(t *testing.T, what string, timeout time.Duration, cond func(*appStatus) bool) *appStatus {
	t.Helper()
	return waitAppNamed(t, appName, what, timeout, cond)
}

// waitAppNamed is waitApp for the Application name.
func waitAppNamed(t *testing.T, name, what string, timeout time.Duration, cond func(*appStatus) bool) *appStatus {
	t.Helper()
	ctx := ctxFor(t)
	var last *appStatus
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, s, err := getAppNamed(ctx, name)
		if err != nil {
			return false, nil
		}
		last = s
		return cond(s), nil
	})
	if err != nil {
		summary := "none"
		if last != nil {
			summary = last.summary()
		}
		t.Fatalf("waiting for the Application %s: %s: %v\nlast status: %s", name, what, err, summary)
	}
	return last
}

// syncedAt reports whether the Application is Synced and Healthy compared
// with revision, with no sync running. (A commit that changes nothing the
// plugin renders needs no sync, so the last sync's revision may be older.)
func syncedAt(revision string) func(*appStatus) bool {
	return func(s *appStatus) bool {
		return s.Sync.Status == "Synced" && s.Sync.Revision == revision && s.Health.Status == "Healthy" &&
			(s.OperationState == nil || s.OperationState.Phase != "Running")
	}
}

// didSyncTo reports whether the last sync applied revision and succeeded,
// and the Application is Synced and Healthy at it.
func didSyncTo(revision string) func(*appStatus) bool {
	return func(s *appStatus) bool {
		return appliedAt(revision)(s) && s.Health.Status == "Healthy"
	}
}

// appliedAt reports whether the last sync applied revision and succeeded,
// and the Application is Synced at it, whatever its health: a cluster
// without Kueue gives its queues no status to be healthy by.
func appliedAt(revision string) func(*appStatus) bool {
	return func(s *appStatus) bool {
		return s.Sync.Status == "Synced" && s.Sync.Revision == revision &&
			s.OperationState != nil && s.OperationState.Phase == "Succeeded" &&
			s.OperationState.SyncResult != nil && s.OperationState.SyncResult.Revision == revision
	}
}

// commitAgreement commits content as the Application's tenancy.toml (nil
// deletes it), pushes, refreshes, and returns the commit.
func commitAgreement(t *testing.T, msg string, content []byte) string {
	t.Helper()
	sha, err := env.repo.commit(ctxFor(t), msg, map[string][]byte{filepath.Join(appPath, "tenancy.toml"): content})
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	refresh(t, "normal")
	return sha
}

// readAgreement returns a file of the repository (the reference agreement,
// test data).
func readAgreement(t *testing.T, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(env.repoRoot, rel))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// syncReference commits the reference agreement (unless the repository
// already holds it) with the kueue backend and waits until it is synced.
func syncReference(t *testing.T) string {
	t.Helper()
	ensureApp(t)
	setBackend(t, "")
	sha := commitAgreement(t, "reference agreement", readAgreement(t, "tenancy.toml"))
	waitApp(t, "synced and healthy at the reference agreement", 2*time.Minute, syncedAt(sha))
	return sha
}

// setBackend sets the plugin's backend parameter ("" removes it, which
// means kueue).
func setBackend(t *testing.T, backend string) {
	t.Helper()
	params := "null"
	if backend != "" {
		params = fmt.Sprintf(`[{"name":"backend","string":%q}]`, backend)
	}
	patch := fmt.Sprintf(`{"spec":{"source":{"plugin":{"name":"tenancy","parameters":%s}}}}`, params)
	if _, err := env.cp.Dynamic.Resource(appGVR).Namespace(argoNamespace).Patch(ctxFor(t), appName, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("set backend parameter: %v", err)
	}
}

// resourcesOf returns the Application's managed resources of one kind.
func resourcesOf(s *appStatus, kind string) []appResource {
	var out []appResource
	for _, r := range s.Resources {
		if r.Kind == kind {
			out = append(out, r)
		}
	}
	return out
}

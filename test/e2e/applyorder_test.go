package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
)

// This file sorts before checks_test.go, so its check runs first, on a
// cluster that no other check has given Namespaces yet.

// onePassAgreements is every agreement of examples/ (and the root one) and
// of test/e2e/testdata, each with the backend it is rendered for: testdata's
// kai-* files are KAI agreements, the rest Kueue's; the examples are
// rendered for KAI too, except those KAI refuses (quotas on several
// flavors). examples/large comes last: its 300 Namespaces then never have to
// be deleted for a later agreement.
func onePassAgreements(t *testing.T) []onePassCase {
	t.Helper()
	var cases []onePassCase
	ex := examples(t)
	for _, name := range sortedKeys(ex) {
		cases = append(cases, onePassCase{name: name + "/kueue", path: ex[name]})
		if name != "multi-flavor" && name != "large" {
			cases = append(cases, onePassCase{name: name + "/kai", path: ex[name], args: []string{"--backend", "kai"}})
		}
	}
	files, err := filepath.Glob(filepath.Join(env.repoRoot, "test", "e2e", "testdata", "*.toml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no agreements in test/e2e/testdata: %v", err)
	}
	for _, f := range files {
		base := filepath.Base(f)
		c := onePassCase{name: "testdata/" + strings.TrimSuffix(base, ".toml"), path: testdata(base)}
		if strings.HasPrefix(base, "kai-") {
			c.args = []string{"--backend", "kai"}
		}
		cases = append(cases, c)
	}
	slices.SortStableFunc(cases, func(a, b onePassCase) int {
		return boolOrder(strings.HasPrefix(a.name, "large/")) - boolOrder(strings.HasPrefix(b.name, "large/"))
	})
	return cases
}

type onePassCase struct {
	name, path string
	args       []string
}

func boolOrder(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestStreamAppliesInOnePass (issue 28, item 3): every agreement's render is
// applied to the API server as `kubectl apply -f` would, object by object in
// the stream's order, once, with no retry, and every object is accepted.
// Before each agreement, what an earlier agreement left that it would meet
// is deleted and waited for (clearFor), so that no object lands in a
// Namespace the stream itself has not created yet: a Namespace after the
// objects that live in it fails here as it does on a fresh cluster.
func TestStreamAppliesInOnePass(t *testing.T) {
	begin(t)
	installKAICRDs(t)
	// The next check starts from a clean slate: no agreement applied, and
	// none of the cluster-scoped objects this one left (a KAI default
	// PriorityClass would refuse the next render's).
	var kinds []*unstructuredObj
	t.Cleanup(func() {
		currentFamily = ""
		prune(t, nil)
		deleteManaged(t, kinds)
	})
	for _, c := range onePassAgreements(t) {
		t.Run(c.name, func(t *testing.T) {
			objs := render(t, append(slices.Clone(c.args), c.path)...)
			clearFor(t, objs)
			kinds = append(kinds, objs...)
			ctx := ctxFor(t)
			opts := metav1.ApplyOptions{FieldManager: "tenancy-e2e-onepass", Force: true}
			for i, o := range objs {
				res, err := env.cp.Applier.Resource(o)
				if err == nil {
					_, err = res.Apply(ctx, o.GetName(), o, opts)
				}
				if err != nil {
					t.Fatalf("object %d of %d, %s: %v", i+1, len(objs), controlplane.Describe(o), err)
				}
			}
			t.Logf("%d objects applied in one pass: %s", len(objs), kindCounts(objs))
		})
	}
}

// clearFor makes the cluster look, to objs, like one no agreement was ever
// applied to: it deletes the managed Kueue objects, quotas and guardrails
// (prune), the tenancy-managed objects of every cluster-scoped kind objs
// holds (an earlier agreement's default PriorityClass, a flavor whose
// topology is immutable, a KAI Queue tree), and the Namespaces objs renders.
func clearFor(t *testing.T, objs []*unstructuredObj) {
	t.Helper()
	prune(t, nil)
	deleteManaged(t, objs)
	deleteNamespaces(t, byKind(objs, "Namespace"))
}

// deleteManaged deletes the tenancy-managed objects of each cluster-scoped
// kind among objs, Namespaces aside, and waits until they are gone.
func deleteManaged(t *testing.T, objs []*unstructuredObj) {
	t.Helper()
	ctx := ctxFor(t)
	seen := map[string]bool{}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		if o.GetNamespace() != "" || o.GetKind() == "Namespace" || seen[gvk.String()] {
			continue
		}
		seen[gvk.String()] = true
		res, err := env.cp.Applier.Resource(o)
		if err != nil {
			t.Fatalf("%s: %v", gvk, err)
		}
		list, err := res.List(ctx, metav1.ListOptions{LabelSelector: managedBy})
		if err != nil {
			t.Fatalf("list %s: %v", gvk, err)
		}
		for _, item := range list.Items {
			if err := res.Delete(ctx, item.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Fatalf("delete %s: %v", controlplane.Describe(&item), err)
			}
		}
		waitFor(t, "managed "+gvk.Kind+" gone", func(ctx context.Context) (bool, string) {
			list, err := res.List(ctx, metav1.ListOptions{LabelSelector: managedBy})
			if err != nil {
				return false, err.Error()
			}
			return len(list.Items) == 0, fmt.Sprintf("%d left", len(list.Items))
		})
	}
}

// deleteNamespaces deletes those of nss that exist and waits until they are
// gone (the namespace controller first deletes what they hold).
func deleteNamespaces(t *testing.T, nss []*unstructuredObj) {
	t.Helper()
	ctx := ctxFor(t)
	core := env.cp.Kube.CoreV1().Namespaces()
	var doomed []string
	for _, ns := range nss {
		err := core.Delete(ctx, ns.GetName(), metav1.DeleteOptions{})
		switch {
		case err == nil:
			doomed = append(doomed, ns.GetName())
		case !apierrors.IsNotFound(err):
			t.Fatalf("delete Namespace %s: %v", ns.GetName(), err)
		}
	}
	for _, name := range doomed {
		waitFor(t, "Namespace "+name+" gone", func(ctx context.Context) (bool, string) {
			_, err := core.Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, ""
			}
			if err != nil {
				return false, err.Error()
			}
			return false, "still terminating"
		})
	}
	if len(doomed) > 0 {
		t.Logf("deleted %d Namespaces an earlier agreement left", len(doomed))
	}
}

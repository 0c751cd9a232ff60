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
// flavors). examples/large comes last: the prune before each later
// agreement would otherwise delete its 2,000 objects again and again.
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
// applied to the API server as `kubectl apply -f` would, in the stream's
// order, once, with no retry (applyInOnePass), and every object is
// accepted. Before each agreement, the cluster-scoped objects an earlier
// agreement left that it would meet are deleted and waited for (clearFor),
// and its Namespaces are given names no earlier agreement used
// (freshNamespaces), so that no object lands in a Namespace the stream
// itself has not created yet: a Namespace after the objects that live in it
// fails here as it does on a fresh cluster.
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
	for i, c := range onePassAgreements(t) {
		t.Run(c.name, func(t *testing.T) {
			objs := freshNamespaces(render(t, append(slices.Clone(c.args), c.path)...), fmt.Sprintf("p%d-", i))
			clearFor(t, objs)
			kinds = append(kinds, objs...)
			applyInOnePass(t, objs)
			t.Logf("%d objects applied in one pass: %s", len(objs), kindCounts(objs))
		})
	}
}

// applyInOnePass applies objs as `kubectl apply -f` would, in the stream's
// order, each once, with no retry, and fails at the first object refused.
// A run of objects of one kind (a LocalQueue per team, 600 in
// examples/large) is applied concurrently: none of them depends on another,
// and every one still meets only what the stream put before the run. KAI
// Queues keep the stream's strict order: a Queue names its parent.
func applyInOnePass(t *testing.T, objs []*unstructuredObj) {
	t.Helper()
	ctx := ctxFor(t)
	opts := metav1.ApplyOptions{FieldManager: "tenancy-e2e-onepass", Force: true}
	apply := func(i int) error {
		o := objs[i]
		res, err := env.cp.Applier.Resource(o)
		if err == nil {
			_, err = res.Apply(ctx, o.GetName(), o, opts)
		}
		if err != nil {
			return fmt.Errorf("object %d of %d, %s: %v", i+1, len(objs), controlplane.Describe(o), err)
		}
		return nil
	}
	for start := 0; start < len(objs); {
		end := start + 1
		if objs[start].GetKind() != "Queue" {
			for end < len(objs) && objs[end].GetKind() == objs[start].GetKind() {
				end++
			}
		}
		errs := make([]error, end-start)
		controlplane.Parallel(end-start, func(j int) { errs[j] = apply(start + j) })
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		start = end
	}
}

// freshNamespaces renames every Namespace objs renders, and the namespace
// of every object in one, with prefix, so that no Namespace of the stream
// exists before the stream creates it, as on a fresh cluster, without
// waiting for the namespace controller to delete an earlier agreement's
// (several seconds each, most of this check's time). Names elsewhere in
// the objects (a NetworkPolicy's namespace selector) are left as rendered:
// the API server's acceptance does not read them, and the guardrails
// select team Namespaces by their labels, which are kept.
func freshNamespaces(objs []*unstructuredObj, prefix string) []*unstructuredObj {
	renamed := map[string]string{}
	for _, o := range byKind(objs, "Namespace") {
		renamed[o.GetName()] = prefix + o.GetName()
	}
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			o.SetName(renamed[o.GetName()])
			labels := o.GetLabels()
			if _, ok := labels["kubernetes.io/metadata.name"]; ok {
				labels["kubernetes.io/metadata.name"] = o.GetName()
				o.SetLabels(labels)
			}
		} else if n, ok := renamed[o.GetNamespace()]; ok {
			o.SetNamespace(n)
		}
	}
	return objs
}

// clearFor makes the cluster look, to objs, like one no agreement was ever
// applied to: it deletes the managed Kueue objects, quotas and guardrails
// (prune), the tenancy-managed objects of every cluster-scoped kind objs
// holds (an earlier agreement's default PriorityClass, a flavor whose
// topology is immutable, a KAI Queue tree). objs' Namespaces are new
// (freshNamespaces).
func clearFor(t *testing.T, objs []*unstructuredObj) {
	t.Helper()
	prune(t, nil)
	deleteManaged(t, objs)
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

package controlplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Applier applies objects with server-side apply under one field manager.
type Applier struct {
	dyn     dynamic.Interface
	mapper  *restmapper.DeferredDiscoveryRESTMapper
	manager string
}

// NewApplier returns an Applier for cfg applying as fieldManager.
func NewApplier(cfg *rest.Config, fieldManager string) (*Applier, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Applier{
		dyn:     dyn,
		mapper:  restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)),
		manager: fieldManager,
	}, nil
}

// Resource returns the dynamic client for obj's kind, in its namespace when
// the kind is namespaced. Discovery is refreshed once when the kind is
// unknown, so CRDs installed a moment ago are found.
func (a *Applier) Resource(obj *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := obj.GroupVersionKind()
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		a.mapper.Reset()
		m, err = a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("map %s: %w", gvk, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ns := obj.GetNamespace()
		if ns == "" {
			ns = "default"
		}
		return a.dyn.Resource(m.Resource).Namespace(ns), nil
	}
	return a.dyn.Resource(m.Resource), nil
}

// Apply server-side applies objs (forcing ownership) and returns what the
// server answered for each, aligned with objs (nil where it failed).
// Namespaces and CRDs go first; within each of those steps objects are
// applied by a few workers at once. With dryRun nothing is persisted. Every
// object is tried; the error joins all failures.
func (a *Applier) Apply(ctx context.Context, objs []*unstructured.Unstructured, dryRun bool) ([]*unstructured.Unstructured, error) {
	opts := metav1.ApplyOptions{FieldManager: a.manager, Force: true}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	out := make([]*unstructured.Unstructured, len(objs))
	errs := make([]error, len(objs))
	for rank := 0; rank <= 2; rank++ {
		var idx []int
		for i, o := range objs {
			if applyRank(o) == rank {
				idx = append(idx, i)
			}
		}
		Parallel(len(idx), func(k int) {
			i := idx[k]
			res, err := a.Resource(objs[i])
			if err != nil {
				errs[i] = err
				return
			}
			got, err := res.Apply(ctx, objs[i].GetName(), objs[i], opts)
			if err != nil {
				errs[i] = fmt.Errorf("apply %s: %w", Describe(objs[i]), err)
				return
			}
			out[i] = got
		})
	}
	return out, errors.Join(errs...)
}

// Parallel calls fn(0) .. fn(n-1) on a few goroutines and waits for all.
func Parallel(n int, fn func(i int)) {
	const workers = 8
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// applyRank puts namespaces and CRDs before everything that may live in or
// be typed by them.
func applyRank(o *unstructured.Unstructured) int {
	switch o.GetKind() {
	case "Namespace":
		return 0
	case "CustomResourceDefinition":
		return 1
	default:
		return 2
	}
}

// Describe names an object as Kind/namespace/name.
func Describe(o *unstructured.Unstructured) string {
	if ns := o.GetNamespace(); ns != "" {
		return fmt.Sprintf("%s/%s/%s", o.GetKind(), ns, o.GetName())
	}
	return fmt.Sprintf("%s/%s", o.GetKind(), o.GetName())
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// WaitCRDsEstablished waits until every CRD has the Established condition,
// then refreshes discovery.
func (a *Applier) WaitCRDsEstablished(ctx context.Context, timeout time.Duration) error {
	var pending []string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		list, err := a.dyn.Resource(crdGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		pending = pending[:0]
		for _, crd := range list.Items {
			if !HasCondition(&crd, "Established", "True") {
				pending = append(pending, crd.GetName())
			}
		}
		return len(pending) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("CRDs not established: %v: %w", pending, err)
	}
	a.mapper.Reset()
	return nil
}

// HasCondition reports whether obj's status has a condition of type typ
// with the given status.
func HasCondition(obj *unstructured.Unstructured, typ, status string) bool {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == typ && m["status"] == status {
			return true
		}
	}
	return false
}

// ConditionSummary lists obj's status conditions as type=status (reason:
// message), for failure messages.
func ConditionSummary(obj *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	var parts []string
	for _, c := range conds {
		m, _ := c.(map[string]any)
		parts = append(parts, fmt.Sprintf("%v=%v (%v: %v)", m["type"], m["status"], m["reason"], m["message"]))
	}
	return strings.Join(parts, "; ")
}

// ParseManifests decodes a YAML stream (documents separated by ---) into
// objects, skipping empty documents.
func ParseManifests(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for i := 0; ; i++ {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("document %d has no apiVersion or kind", i)
		}
		out = append(out, u)
	}
}

// ReadManifestFile parses the YAML stream in path.
func ReadManifestFile(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	objs, err := ParseManifests(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return objs, nil
}

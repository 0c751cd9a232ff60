// Package render holds the contract every family of rendered objects keeps
// (Family), the object type they all produce, and the labels every object of
// an agreement carries.
//
// A family is a scheduler backend (render/kueue, render/kai) or a family of
// objects beside one (render/namespaces, render/guard, render/monitor). It
// reads a plan only, never TOML: its Check returns located diagnostics, their
// positions taken from the origins the plan keeps for each value, and its
// Render returns objects. render runs the Checks of a backend's families,
// then the Renders; tenancy check runs the same and drops the output, so an
// agreement that checks clean renders.
package render

import (
	"fmt"
	"reflect"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// Backend is gpu.Backend, the one backend type, named here too for the
// families that render for one.
type Backend = gpu.Backend

// The backends (gpu.Kueue, gpu.KAI).
const (
	Kueue = gpu.Kueue
	KAI   = gpu.KAI
)

// Family is one family of rendered objects. Check reports what the family
// refuses (errors) or can only approximate (warnings) of a plan, each
// diagnostic located through the plan's origins; it runs on every plan,
// also of an agreement that failed validation, so one run reports every
// problem. Render is called only on a plan whose checks found no error;
// the diagnostics it returns are its own failures (an error stops the
// rendering).
type Family interface {
	Check(p *plan.Agreement) diag.List
	Render(p *plan.Agreement) ([]Object, diag.List)
}

// Object is one rendered Kubernetes object: its fields as the API server's
// JSON gives them (unstructured content: maps, slices, strings, int64,
// float64, bool), and its canonical YAML once encoded. Kind, name and the
// rest are read from the fields, so they cannot disagree with them.
type Object struct {
	Fields map[string]any
	YAML   []byte // set by package encode; without a leading ---
}

// APIVersion returns the object's apiVersion.
func (o Object) APIVersion() string { return str(o.Fields, "apiVersion") }

// Kind returns the object's kind.
func (o Object) Kind() string { return str(o.Fields, "kind") }

// Namespace returns the object's namespace; empty when cluster-scoped.
func (o Object) Namespace() string { return str(o.metadata(), "namespace") }

// Name returns the object's name.
func (o Object) Name() string { return str(o.metadata(), "name") }

// metadata and str read the fields as unstructured.Unstructured's getters
// do (a value that is missing or not a string reads as ""), without the
// variadic path walk they take: sorting and diffing 50,000 objects read
// these four a few times each, and the walk was a tenth of diff's CPU.
func (o Object) metadata() map[string]any {
	m, _ := o.Fields["metadata"].(map[string]any)
	return m
}

func str(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// FromTyped converts a typed API object (a pointer to a struct) to an Object
// with structured-merge-diff's reflection (value.NewValueReflect), the walk
// the API server uses for managed fields: encoding/json's field rules without
// the JSON, and the same maps as apimachinery's DefaultUnstructuredConverter,
// whose custom-marshaler path it shares. It replaces that converter because
// the converter's field cache copies itself once per struct field it meets, so
// a process's first render paid about 3 ms for it (docs/bench.md); this cache
// is filled a struct type at a time. The walk over that cache is the
// package's own (walk), which allocates only the maps it returns; the
// library's walk is kept for what walk refuses, so errors stay its own.
// Status and the null creationTimestamp every typed object carries are
// dropped: a client must not send them.
func FromTyped(obj any) (Object, error) {
	if libraryWalk.Load() {
		return fromTypedByLibrary(obj)
	}
	if fields, ok := walked(obj); ok {
		return fromFields(fields, obj)
	}
	return fromTypedByLibrary(obj)
}

// libraryWalk makes FromTyped take the library's walk only (WithLibraryWalk).
var libraryWalk atomic.Bool

// WithLibraryWalk runs f with FromTyped converting by structured-merge-diff's
// own walk instead of walk: the reference the test holding walk to it
// renders. Every FromTyped while f runs, on any goroutine, takes it; it
// changes no output, only the time.
func WithLibraryWalk(f func()) {
	libraryWalk.Store(true)
	defer libraryWalk.Store(false)
	f()
}

// walked converts obj with walk; false when obj is not a pointer or walk
// panicked (what the library refuses, or panics on), which the library's
// own walk then says.
func walked(obj any) (fields any, ok bool) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer {
		return nil, false
	}
	defer func() {
		if recover() != nil {
			fields, ok = nil, false
		}
	}()
	return walk(v, nil), true
}

// fromTypedByLibrary is FromTyped with the library's walk, for what walk
// refuses, and the reference walk is held to.
func fromTypedByLibrary(obj any) (_ Object, err error) {
	// The reflector panics on a kind JSON cannot hold (a channel, a func);
	// no API type has one, but a panic must not be the way a render fails.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("render: converting %T: %v", obj, r)
		}
	}()
	v, err := value.NewValueReflect(obj)
	if err != nil {
		return Object{}, err
	}
	return fromFields(v.Unstructured(), obj)
}

// fromFields is a converted object without the fields a client must not
// send.
func fromFields(converted any, obj any) (Object, error) {
	fields, ok := converted.(map[string]any)
	if !ok {
		return Object{}, fmt.Errorf("render: %T is not an object", obj)
	}
	delete(fields, "status")
	if meta, ok := fields["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	return Object{Fields: fields}, nil
}

// Labels tenancy puts on every object, so operators can find and select
// what the agreement owns.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "tenancy"
	// PoolLabel names the agreement's pool on every object.
	PoolLabel = "tenancy.dev/pool"
	// TeamLabel names the team on every object that belongs to one team.
	TeamLabel = "tenancy.dev/team"
)

// Labels returns the labels of an object of the pool, and of team when it
// is not empty.
func Labels(pool, team string) map[string]string {
	l := map[string]string{ManagedByLabel: ManagedBy, PoolLabel: pool}
	if team != "" {
		l[TeamLabel] = team
	}
	return l
}

// Meta returns the metadata of an object of the pool (and of team, when not
// empty).
func Meta(pool, team, name, namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: Labels(pool, team)}
}

// NamespaceNameLabel is set by the API server on every Namespace; rendering
// it keeps the object read back equal to the object rendered.
const NamespaceNameLabel = corev1.LabelMetadataName

// Objects converts typed objects in order. A Namespace's spec is dropped:
// the agreement sets nothing there (the API server adds its finalizer), and
// writing spec: {} would claim a field nobody renders.
func Objects[T any](typed []T) ([]Object, error) {
	out := make([]Object, 0, len(typed))
	for _, t := range typed {
		o, err := FromTyped(t)
		if err != nil {
			return nil, err
		}
		if _, ok := any(t).(*corev1.Namespace); ok {
			delete(o.Fields, "spec")
		}
		out = append(out, o)
	}
	return out, nil
}

package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestObjectReadsAsUnstructured: Object's getters read what
// unstructured.Unstructured's do, also of fields that are missing or of
// another type.
func TestObjectReadsAsUnstructured(t *testing.T) {
	for name, fields := range map[string]map[string]any{
		"whole":              {"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "ml", "namespace": "x"}},
		"none":               {},
		"nil":                nil,
		"metadata not a map": {"metadata": "ml"},
		"metadata nil":       {"metadata": nil},
		"not strings":        {"apiVersion": int64(1), "kind": true, "metadata": map[string]any{"name": int64(2), "namespace": []any{"x"}}},
		"typed map":          {"metadata": map[string]string{"name": "ml"}},
	} {
		t.Run(name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: fields}
			o := Object{Fields: fields}
			want := []string{u.GetAPIVersion(), u.GetKind(), u.GetNamespace(), u.GetName()}
			got := []string{o.APIVersion(), o.Kind(), o.Namespace(), o.Name()}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-unstructured,+Object):\n%s", diff)
			}
		})
	}
}

// TestFromTypedWalks: the package's walk converts the objects the families
// render (a fallback to the library's would hide its cost behind equal
// output), and what it refuses is converted, or refused, by the library's
// walk with the library's words.
func TestFromTypedWalks(t *testing.T) {
	ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: Meta("pool", "ml", "ml", "")}
	q := resource.MustParse("8")
	rq := &corev1.ResourceQuota{ObjectMeta: Meta("pool", "ml", "q", "ml"), Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"nvidia.com/gpu": q}}}
	for _, obj := range []any{ns, rq} {
		if _, ok := walked(obj); !ok {
			t.Errorf("%T: walk refused it", obj)
		}
		got, err := FromTyped(obj)
		if err != nil {
			t.Fatal(err)
		}
		want, err := fromTypedByLibrary(obj)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.Fields, got.Fields); diff != "" {
			t.Errorf("%T (-library,+walk):\n%s", obj, diff)
		}
	}
	type odd struct {
		C chan int `json:"c"`
	}
	type big struct {
		N uint64 `json:"n"`
	}
	for _, obj := range []any{&odd{C: make(chan int)}, &big{N: 1}, odd{}, (*odd)(nil)} {
		if fields, ok := walked(obj); ok && fields != nil {
			t.Errorf("%T: walk converted what the library refuses", obj)
		}
		_, err := FromTyped(obj)
		_, want := fromTypedByLibrary(obj)
		if err == nil || want == nil || err.Error() != want.Error() {
			t.Errorf("%T: error %v, the library's %v", obj, err, want)
		}
	}
}

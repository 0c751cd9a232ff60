package generator_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/internal/windowstest"
)

// TestDescriptors: what each backend's descriptor says is what its render
// holds: the team queues have its apiVersion and kind, the team Namespaces
// carry its queue label exactly when it says so, the windows controller's
// ClusterRole names its group and resource, and every field the controller
// owns is on the rendered queue.
func TestDescriptors(t *testing.T) {
	src := generator.Source{Path: "tenancy.toml", Data: []byte(windowstest.Agreement)}
	for _, b := range gpu.Backends {
		t.Run(string(b), func(t *testing.T) {
			d := gpu.Describe(b)
			res, err := generator.Render(src, generator.Options{Backend: b})
			if err != nil {
				t.Fatal(err)
			}
			queues, labelled, roles := 0, 0, 0
			for _, o := range res.Objects {
				switch o.Kind() {
				case d.QueueKind:
					if o.APIVersion() != d.QueueAPIVersion("") {
						t.Errorf("%s %s: apiVersion %s, descriptor %s", o.Kind(), o.Name(), o.APIVersion(), d.QueueAPIVersion(""))
					}
					queues++
				case "Namespace":
					if _, ok := (&unstructured.Unstructured{Object: o.Fields}).GetLabels()[d.QueueLabel]; ok {
						labelled++
					}
				case "ClusterRole":
					rules := o.Fields["rules"].([]any)
					first := rules[0].(map[string]any)
					if diff := cmp.Diff([]any{d.QueueGroup}, first["apiGroups"]); diff != "" {
						t.Errorf("ClusterRole apiGroups (-want,+got):\n%s", diff)
					}
					if diff := cmp.Diff([]any{d.QueueResource}, first["resources"]); diff != "" {
						t.Errorf("ClusterRole resources (-want,+got):\n%s", diff)
					}
					roles++
				}
			}
			if queues == 0 || roles != 1 {
				t.Errorf("%d %s(s), %d ClusterRole(s)", queues, d.QueueKind, roles)
			}
			if d.NamespaceQueueLabel != (labelled > 0) {
				t.Errorf("NamespaceQueueLabel %v, but %d Namespace(s) carry %s", d.NamespaceQueueLabel, labelled, d.QueueLabel)
			}
		})
	}
}

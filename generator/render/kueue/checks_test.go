package kueue_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/internal/diagtest"
)

func errAt(line, col int, path string, typ field.ErrorType) diag.Diagnostic {
	return diagtest.Error("tenancy.toml", line, col, path, typ)
}

// header is the start of most cases: lines 1-4.
const header = `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 32
`

// flavorsOf returns an agreement with n flavors, each of its own MIG
// resource when distinct is set, and one team guaranteed one of each.
func flavorsOf(n int, distinct bool) string {
	var b strings.Builder
	b.WriteString("version = 1\nname = \"gpu-pool\"\n")
	for i := range n {
		resource := "nvidia.com/gpu"
		if distinct {
			resource = fmt.Sprintf("nvidia.com/mig-%dg.10gb", i+1)
		}
		fmt.Fprintf(&b, "[flavors.f%02d]\nresource = %q\ncapacity = 1\n", i, resource)
	}
	for i := range n {
		fmt.Fprintf(&b, "[teams.a.flavors.f%02d]\nguaranteed = 1\n", i)
	}
	return b.String()
}

// TestCheck: what Kueue's API refuses is an error of the Kueue backend's
// check, at the value it is about, in both Kueue API versions; the KAI
// backend, which renders no ResourceFlavor, ClusterQueue or Topology, does
// not report it.
func TestCheck(t *testing.T) {
	tests := map[string]struct {
		src  string
		want diag.List
	}{
		"topology with the hostname above the finest level": {
			src: header + `node_labels = { "nvidia.com/gpu.product" = "H100" }
[topology]
levels = ["kubernetes.io/hostname", "cloud.example.com/gpu"]
[teams.a]
`,
			want: diag.List{errAt(7, 11, "topology.levels[0]", field.ErrorTypeForbidden)},
		},
		"more node labels and tolerations than a ResourceFlavor holds": {
			src: header + `node_labels = { a = "1", b = "2", c = "3", d = "4", e = "5", f = "6", g = "7", h = "8", i = "9" }
tolerations = [
  { key = "a" }, { key = "b" }, { key = "c" }, { key = "d" },
  { key = "e" }, { key = "f" }, { key = "g" }, { key = "h" },
  { key = "i" },
]
[teams.a]
`,
			want: diag.List{
				errAt(5, 89, "flavors.h100.node_labels.i", field.ErrorTypeTooMany),
				errAt(9, 3, "flavors.h100.tolerations[8]", field.ErrorTypeTooMany),
			},
		},
		"a team named default while default_queue renders the default LocalQueue": {
			src: header + `[guardrails]
default_queue = true
[teams.default]
namespaces = ["ml"]
`,
			want: diag.List{errAt(7, 8, "teams.default", field.ErrorTypeDuplicate)},
		},
		"a team named default without default_queue": {
			src: header + `[teams.default]
namespaces = ["ml"]
`,
		},
		"64 flavors": {src: flavorsOf(64, false)},
		"65 flavors": {
			src:  flavorsOf(65, false),
			want: diag.List{errAt(195, 10, "flavors.f64", field.ErrorTypeTooMany)},
		},
		"21 flavors of 21 resources": {src: flavorsOf(21, true)},
		"22 flavors of 22 resources": {
			src:  flavorsOf(22, true),
			want: diag.List{errAt(3, 10, "flavors", field.ErrorTypeTooMany)},
		},
		"63 resources": {
			src:  flavorsOf(63, true),
			want: diag.List{errAt(3, 10, "flavors", field.ErrorTypeTooMany)},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			src := generator.Source{Path: "tenancy.toml", Data: []byte(tc.src)}
			for _, api := range []string{generator.KueueV1beta2, generator.KueueV1beta1} {
				opts := generator.Options{Backend: generator.Kueue, KueueAPI: api}
				_, warnings, err := generator.Check(src, opts)
				got := diag.List(warnings)
				var ae *generator.AgreementError
				if errors.As(err, &ae) {
					got = ae.Diagnostics
				} else if err != nil {
					t.Fatalf("Check %s: %v", api, err)
				}
				if diff := diagtest.Diff(t, tc.want, got); diff != "" {
					t.Errorf("Check %s (-want,+got):\n%s", api, diff)
				}
				for _, d := range got {
					if !strings.HasPrefix(d.Message, "kueue: ") {
						t.Errorf("%s: want a message starting with \"kueue: \"", d)
					}
				}
			}
			_, _, err := generator.Check(src, generator.Options{Backend: generator.KAI})
			var ae *generator.AgreementError
			if errors.As(err, &ae) {
				for _, d := range ae.Diagnostics.Errors() {
					if strings.HasPrefix(d.Message, "kueue: ") {
						t.Errorf("KAI reports Kueue's limit: %s", d)
					}
				}
			}
		})
	}
}

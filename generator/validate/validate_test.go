package validate_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/internal/diagtest"
)

// errAt and warnAt are the diagnostics expected for tenancy.toml.
func errAt(line, col int, path string, typ field.ErrorType) diag.Diagnostic {
	return diagtest.Error("tenancy.toml", line, col, path, typ)
}

func warnAt(line, col int, path string, typ field.ErrorType) diag.Diagnostic {
	return diagtest.Warning("tenancy.toml", line, col, path, typ)
}

// header is the start of most cases: lines 1-4.
const header = `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 32
`

// backends are the option sets every case is rendered with.
var backends = map[string]generator.Options{
	"kueue v1beta2": {Backend: generator.Kueue, KueueAPI: generator.KueueV1beta2},
	"kueue v1beta1": {Backend: generator.Kueue, KueueAPI: generator.KueueV1beta1},
	"kai":           {Backend: generator.KAI},
}

// TestAgreementProblems runs each agreement through the library's pipeline
// (load, decode, validate) as every wrapper does, and compares all the
// problems reported: message, line, column and field path.
func TestAgreementProblems(t *testing.T) {
	tests := map[string]struct {
		src string
		// want lists every diagnostic in the order reported. Cases with
		// only warnings must still render.
		want diag.List
	}{
		"the reference agreement is valid": {
			src: header + `[priorities]
critical = 1000
[teams.training]
guaranteed = 16
lendable = 8
borrow = 8
[teams.research]
guaranteed = 8
lendable = 8
borrow = 8
[teams.inference]
guaranteed = 8
`,
		},
		"TOML syntax error": {
			src: header + `[teams.a
guaranteed = 8
`,
			want: diag.List{errAt(5, 9, "", field.ErrorTypeInvalid)},
		},
		"unknown key lendible": {
			src: header + `[teams.a]
guaranteed = 8
lendible = 4
`,
			want: diag.List{errAt(7, 1, "teams.a.lendible", field.ErrorTypeNotSupported)},
		},
		"unknown keys at every level": {
			src: `version = 1
name = "gpu-pool"
flavours = 1
[flavors.h100]
capacity = 32
capcity = 32
tolerations = [{ operator = "Exists", efect = "NoSchedule" }]
[teams.a]
guaranted = 8
[teams.a.flavors.h100]
lendible = 0
[topology]
level = []
`,
			want: diag.List{
				errAt(3, 1, "flavours", field.ErrorTypeNotSupported),
				errAt(4, 10, "flavors.h100.node_labels", field.ErrorTypeRequired),
				errAt(6, 1, "flavors.h100.capcity", field.ErrorTypeNotSupported),
				errAt(7, 39, "flavors.h100.tolerations[0].efect", field.ErrorTypeNotSupported),
				errAt(9, 1, "teams.a.guaranted", field.ErrorTypeNotSupported),
				errAt(11, 1, "teams.a.flavors.h100.lendible", field.ErrorTypeNotSupported),
				errAt(12, 2, "topology.levels", field.ErrorTypeRequired),
				errAt(13, 1, "topology.level", field.ErrorTypeNotSupported),
			},
		},
		"wrong types": {
			src: `version = "1"
name = { pool = "gpu" }
[flavors.h100]
capacity = "32"
resource = 1
[teams.a]
guaranteed = true
namespaces = "a"
reclaim = 1
`,
			want: diag.List{
				errAt(1, 11, "version", field.ErrorTypeTypeInvalid),
				errAt(2, 8, "name", field.ErrorTypeTypeInvalid),
				errAt(4, 12, "flavors.h100.capacity", field.ErrorTypeTypeInvalid),
				errAt(5, 12, "flavors.h100.resource", field.ErrorTypeTypeInvalid),
				errAt(7, 14, "teams.a.guaranteed", field.ErrorTypeTypeInvalid),
				errAt(8, 14, "teams.a.namespaces", field.ErrorTypeTypeInvalid),
				errAt(9, 11, "teams.a.reclaim", field.ErrorTypeTypeInvalid),
			},
		},
		"negative GPU counts": {
			src: `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = -32
[teams.a]
guaranteed = -8
lendable = -1
borrow = -2
`,
			want: diag.List{
				errAt(4, 12, "flavors.h100.capacity", field.ErrorTypeInvalid),
				errAt(6, 14, "teams.a.guaranteed", field.ErrorTypeInvalid),
				errAt(7, 12, "teams.a.lendable", field.ErrorTypeInvalid),
				errAt(8, 10, "teams.a.borrow", field.ErrorTypeInvalid),
			},
		},
		"zero capacity": {
			src: `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 0
[teams.a]
`,
			want: diag.List{errAt(4, 12, "flavors.h100.capacity", field.ErrorTypeInvalid)},
		},
		"missing capacity": {
			src: `version = 1
name = "gpu-pool"
[flavors.h100]
resource = "nvidia.com/gpu"
[teams.a]
`,
			want: diag.List{errAt(3, 10, "flavors.h100.capacity", field.ErrorTypeRequired)},
		},
		"non-integer GPU counts": {
			src: header + `[teams.a]
guaranteed = 8.5
lendable = 8.0
`,
			want: diag.List{
				errAt(6, 14, "teams.a.guaranteed", field.ErrorTypeTypeInvalid),
				errAt(7, 12, "teams.a.lendable", field.ErrorTypeTypeInvalid),
			},
		},
		"counts too large": {
			src: `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 9007199254740993
[teams.a]
guaranteed = 8
borrow = 9223372036854775807
weight = 9007199254740993
`,
			want: diag.List{
				errAt(4, 12, "flavors.h100.capacity", field.ErrorTypeTooLong),
				errAt(7, 10, "teams.a.borrow", field.ErrorTypeTooLong),
				warnAt(7, 10, "teams.a.borrow", field.ErrorTypeInvalid),
				errAt(8, 10, "teams.a.weight", field.ErrorTypeTooLong),
			},
		},
		"guarantees that overflow int64 still exceed the capacity": {
			src: header + `[teams.a]
guaranteed = 9007199254740992
[teams.b]
guaranteed = 9007199254740992
`,
			want: diag.List{errAt(4, 12, "flavors.h100.capacity", field.ErrorTypeInvalid)},
		},
		"lendable above guaranteed": {
			src: header + `[teams.a]
guaranteed = 8
lendable = 9
[teams.b]
lendable = 1
`,
			want: diag.List{
				errAt(7, 12, "teams.a.lendable", field.ErrorTypeInvalid),
				errAt(9, 12, "teams.b.lendable", field.ErrorTypeInvalid),
			},
		},
		"guarantees above the flavor's capacity": {
			src: header + `[teams.a]
guaranteed = 24
[teams.b]
guaranteed = 9
`,
			want: diag.List{errAt(4, 12, "flavors.h100.capacity", field.ErrorTypeInvalid)},
		},
		"guarantees above capacity per flavor": {
			src: `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 8
[flavors.mig]
resource = "nvidia.com/mig-1g.10gb"
capacity = 7
[teams.a.flavors.h100]
guaranteed = 8
[teams.a.flavors.mig]
guaranteed = 7
[teams.b.flavors.mig]
guaranteed = 1
`,
			want: diag.List{errAt(7, 12, "flavors.mig.capacity", field.ErrorTypeInvalid)},
		},
		"borrow larger than what others lend is a warning": {
			src: header + `[teams.a]
guaranteed = 8
lendable = 8
borrow = 4
[teams.b]
guaranteed = 8
lendable = 4
borrow = 9
`,
			want: diag.List{warnAt(12, 10, "teams.b.borrow", field.ErrorTypeInvalid)},
		},
		"duplicate namespaces across teams": {
			src: header + `[teams.a]
namespaces = ["shared", "a"]
[teams.b]
namespaces = ["b", "shared"]
[teams.shared]
`,
			want: diag.List{
				errAt(8, 20, "teams.b.namespaces[1]", field.ErrorTypeDuplicate),
				errAt(9, 8, "teams.shared", field.ErrorTypeDuplicate),
			},
		},
		"duplicate namespace within a team": {
			src: header + `[teams.a]
namespaces = ["a", "a-dev", "a"]
`,
			want: diag.List{errAt(6, 29, "teams.a.namespaces[2]", field.ErrorTypeDuplicate)},
		},
		"empty namespaces": {
			src: header + `[teams.a]
namespaces = []
`,
			want: diag.List{errAt(6, 14, "teams.a.namespaces", field.ErrorTypeRequired)},
		},
		"names that are not DNS-1123 labels": {
			src: `version = 1
name = "GPU_pool"
[flavors.H100]
capacity = 32
[teams.Training]
namespaces = ["ml.training"]
[teams."a.b"]
[teams.c]
namespaces = ["-c", "` + strings.Repeat("x", 64) + `"]
`,
			want: diag.List{
				errAt(2, 8, "name", field.ErrorTypeInvalid),
				errAt(3, 10, "flavors.H100", field.ErrorTypeInvalid),
				errAt(5, 8, "teams.Training", field.ErrorTypeInvalid),
				errAt(6, 15, "teams.Training.namespaces[0]", field.ErrorTypeInvalid),
				errAt(7, 8, "teams[a.b]", field.ErrorTypeInvalid),
				errAt(9, 15, "teams.c.namespaces[0]", field.ErrorTypeInvalid),
				errAt(9, 21, "teams.c.namespaces[1]", field.ErrorTypeInvalid),
			},
		},
		"invalid priority names": {
			src: header + `[priorities]
High = 10
"very.high" = 20
[teams.a]
`,
			want: diag.List{errAt(6, 8, "priorities.High", field.ErrorTypeInvalid)},
		},
		"invalid priority names, written as tables": {
			src: header + `[priorities]
High = { value = 10, preemptible = false }
[priorities.Low]
value = 1
[teams.a]
`,
			want: diag.List{
				errAt(6, 18, "priorities.High.value", field.ErrorTypeInvalid),
				errAt(8, 9, "priorities.Low.value", field.ErrorTypeInvalid),
			},
		},
		"priority tables outside int32": {
			src: header + `[priorities]
above = { value = 2147483648, preemptible = false }
[teams.a]
`,
			want: diag.List{errAt(6, 19, "priorities.above.value", field.ErrorTypeInvalid)},
		},
		"unknown flavor references": {
			src: header + `[teams.a.flavors.h100]
guaranteed = 8
[teams.a.flavors.a100]
guaranteed = 8
[teams.b.flavors.H100]
borrow = 1
`,
			want: diag.List{
				errAt(7, 18, "teams.a.flavors.a100", field.ErrorTypeNotFound),
				errAt(9, 18, "teams.b.flavors.H100", field.ErrorTypeNotFound),
			},
		},
		"priority values outside int32": {
			src: header + `[priorities]
max = 2147483647
min = -2147483648
above = 2147483648
below = -2147483649
[teams.a]
`,
			want: diag.List{
				errAt(8, 9, "priorities.above", field.ErrorTypeInvalid),
				errAt(9, 9, "priorities.below", field.ErrorTypeInvalid),
			},
		},
		"no teams": {
			src:  header,
			want: diag.List{errAt(1, 1, "teams", field.ErrorTypeRequired)},
		},
		"empty teams table": {
			src:  header + "[teams]\n",
			want: diag.List{errAt(1, 1, "teams", field.ErrorTypeRequired)},
		},
		"no flavors": {
			src: `version = 1
name = "gpu-pool"
[teams.a]
`,
			want: diag.List{errAt(1, 1, "flavors", field.ErrorTypeRequired)},
		},
		"empty file": {
			src: "",
			want: diag.List{
				errAt(1, 1, "flavors", field.ErrorTypeRequired),
				errAt(1, 1, "name", field.ErrorTypeRequired),
				errAt(1, 1, "teams", field.ErrorTypeRequired),
				errAt(1, 1, "version", field.ErrorTypeRequired),
			},
		},
		"version missing": {
			src:  strings.TrimPrefix(header, "version = 1\n") + "[teams.a]\n",
			want: diag.List{errAt(1, 1, "version", field.ErrorTypeRequired)},
		},
		"version wrong": {
			src:  strings.Replace(header, "version = 1", "version = 2", 1) + "[teams.a]\n",
			want: diag.List{errAt(1, 11, "version", field.ErrorTypeNotSupported)},
		},
		"name missing": {
			src:  strings.Replace(header, `name = "gpu-pool"`, `# no name`, 1) + "[teams.a]\n",
			want: diag.List{errAt(1, 1, "name", field.ErrorTypeRequired)},
		},
		"quota shorthand with several flavors": {
			src: header + `[flavors.a100]
capacity = 8
[teams.a]
weight = 2
borrow = 4
guaranteed = 8
`,
			want: diag.List{errAt(9, 10, "teams.a.borrow", field.ErrorTypeForbidden)},
		},
		"shorthand and flavors table together": {
			src: header + `[teams.a]
guaranteed = 8
[teams.a.flavors.h100]
guaranteed = 8
`,
			want: diag.List{errAt(7, 18, "teams.a.flavors.h100", field.ErrorTypeForbidden)},
		},
		"reserved namespaces": {
			src: header + `[teams.a]
namespaces = ["kube-system", "kube-public", "kube-node-lease", "a"]
[teams.kube-system]
`,
			want: diag.List{
				errAt(6, 15, "teams.a.namespaces[0]", field.ErrorTypeForbidden),
				errAt(6, 30, "teams.a.namespaces[1]", field.ErrorTypeForbidden),
				errAt(6, 45, "teams.a.namespaces[2]", field.ErrorTypeForbidden),
				errAt(7, 8, "teams.kube-system", field.ErrorTypeForbidden),
			},
		},
		"the default namespace, the windows controller's and the components'": {
			src: header + `[teams.a]
namespaces = ["default", "tenancy-system", "kueue-system", "kai-scheduler", "kai-resource-reservation", "argocd", "a"]
[teams.default]
`,
			want: diag.List{
				errAt(6, 15, "teams.a.namespaces[0]", field.ErrorTypeForbidden),
				errAt(6, 26, "teams.a.namespaces[1]", field.ErrorTypeForbidden),
				errAt(6, 44, "teams.a.namespaces[2]", field.ErrorTypeForbidden),
				errAt(6, 60, "teams.a.namespaces[3]", field.ErrorTypeForbidden),
				errAt(6, 77, "teams.a.namespaces[4]", field.ErrorTypeForbidden),
				errAt(6, 105, "teams.a.namespaces[5]", field.ErrorTypeForbidden),
				errAt(7, 8, "teams.default", field.ErrorTypeForbidden),
			},
		},
		"components elsewhere: their namespaces are refused, the upstream names free": {
			src: header + `[components]
kueue_namespace = "kueue"
argocd_namespace = "gitops"
kai_namespace = "Kai"
[monitoring]
namespace = "observability"
[teams.a]
namespaces = ["kueue-system", "argocd", "kueue", "gitops", "observability", "kai-scheduler"]
`,
			want: diag.List{
				errAt(8, 17, "components.kai_namespace", field.ErrorTypeInvalid),
				errAt(12, 41, "teams.a.namespaces[2]", field.ErrorTypeForbidden),
				errAt(12, 50, "teams.a.namespaces[3]", field.ErrorTypeForbidden),
				errAt(12, 60, "teams.a.namespaces[4]", field.ErrorTypeForbidden),
			},
		},
		"the monitoring namespace, by default": {
			src: header + `[monitoring]
[teams.monitoring]
`,
			want: diag.List{errAt(6, 8, "teams.monitoring", field.ErrorTypeForbidden)},
		},
		"weight 0 is explained": {
			src: header + `[teams.a]
weight = 0
`,
			want: diag.List{warnAt(6, 10, "teams.a.weight", field.ErrorTypeInvalid)},
		},
		"reclaim, weight and vms": {
			src: header + `[teams.a]
reclaim = "never"
weight = -1
vms = -2
`,
			want: diag.List{
				errAt(6, 11, "teams.a.reclaim", field.ErrorTypeNotSupported),
				errAt(7, 10, "teams.a.weight", field.ErrorTypeInvalid),
				errAt(8, 7, "teams.a.vms", field.ErrorTypeInvalid),
			},
		},
		"resources": {
			src: `version = 1
name = "gpu-pool"
[flavors.a]
resource = "cpu"
capacity = 1
[flavors.b]
resource = "gpu"
capacity = 1
[flavors.c]
resource = "nvidia.com/mig 1g"
capacity = 1
[teams.t]
`,
			want: diag.List{
				errAt(4, 12, "flavors.a.resource", field.ErrorTypeForbidden),
				errAt(7, 12, "flavors.b.resource", field.ErrorTypeInvalid),
				errAt(10, 12, "flavors.c.resource", field.ErrorTypeInvalid),
			},
		},
		"node labels": {
			src: `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 32
node_labels = { "nvidia.com/gpu product" = "H100", "nvidia.com/gpu.product" = "H100 80GB" }
[teams.a]
`,
			want: diag.List{
				errAt(5, 17, "flavors.h100.node_labels[nvidia.com/gpu product]", field.ErrorTypeInvalid),
				errAt(5, 52, "flavors.h100.node_labels[nvidia.com/gpu.product]", field.ErrorTypeInvalid),
			},
		},
		"tolerations": {
			src: header + `tolerations = [
  { key = "a", operator = "Within", effect = "NoSchedule" },
  { key = "b", operator = "Equal", value = "x", effect = "Never" },
  { key = "c", operator = "Exists", value = "x" },
  { operator = "Equal", value = "x" },
  { operator = "Exists" },
]
[teams.a]
`,
			want: diag.List{
				errAt(6, 27, "flavors.h100.tolerations[0].operator", field.ErrorTypeNotSupported),
				errAt(7, 58, "flavors.h100.tolerations[1].effect", field.ErrorTypeNotSupported),
				errAt(8, 45, "flavors.h100.tolerations[2].value", field.ErrorTypeForbidden),
				errAt(9, 3, "flavors.h100.tolerations[3].key", field.ErrorTypeRequired),
			},
		},
		"topology with zero levels": {
			src: header + `node_labels = { "nvidia.com/gpu.product" = "H100" }
[topology]
levels = []
[teams.a]
`,
			want: diag.List{errAt(6, 2, "topology.levels", field.ErrorTypeRequired)},
		},
		"topology without levels": {
			src: header + `node_labels = { "nvidia.com/gpu.product" = "H100" }
[topology]
[teams.a]
`,
			want: diag.List{errAt(6, 2, "topology.levels", field.ErrorTypeRequired)},
		},
		"topology with a duplicate level": {
			src: header + `node_labels = { "nvidia.com/gpu.product" = "H100" }
[topology]
levels = ["cloud.example.com/rack", "cloud.example.com/block", "cloud.example.com/rack"]
[teams.a]
`,
			want: diag.List{errAt(7, 64, "topology.levels[2]", field.ErrorTypeDuplicate)},
		},
		"topology with invalid and too many levels": {
			src: header + `node_labels = { "nvidia.com/gpu.product" = "H100" }
[topology]
levels = ["rack name", "l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9", "l10", "l11", "l12", "l13", "l14", "l15", "l16"]
[teams.a]
`,
			want: diag.List{
				errAt(7, 11, "topology.levels[0]", field.ErrorTypeInvalid),
				errAt(7, 120, "topology.levels[16]", field.ErrorTypeTooMany),
			},
		},
		"topology needs node labels on every flavor": {
			src: header + `[flavors.a100]
capacity = 8
node_labels = { "nvidia.com/gpu.product" = "A100" }
[topology]
levels = ["kubernetes.io/hostname"]
[teams.a.flavors.h100]
guaranteed = 8
`,
			want: diag.List{errAt(3, 10, "flavors.h100.node_labels", field.ErrorTypeRequired)},
		},
		"table defined twice": {
			src: header + `[teams.a]
guaranteed = 8
[teams.a]
borrow = 8
`,
			want: diag.List{errAt(7, 8, "teams.a", field.ErrorTypeDuplicate)},
		},
		"key defined twice": {
			src: header + `[teams.a]
guaranteed = 8
guaranteed = 16
`,
			want: diag.List{errAt(7, 1, "teams.a.guaranteed", field.ErrorTypeDuplicate)},
		},
		"file over 1 MiB": {
			src:  strings.Repeat("#", generator.MaxAgreementSize+1),
			want: diag.List{{Severity: diag.Error, Type: field.ErrorTypeTooLong, File: "tenancy.toml"}},
		},
		"file of exactly 1 MiB is read": {
			src: header + "[teams.a]\n" + strings.Repeat("#", generator.MaxAgreementSize-len(header)-len("[teams.a]\n")),
		},
		"all problems are reported at once, in position order": {
			src: `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 12
[priorities]
urgent = 3000000000
[teams.training]
guaranteed = 16
lendable = 20
lendible = 4
[teams.research]
namespaces = ["training", "Research"]
guaranteed = 8.5
borrow = 4
[teams.research.flavors.a100]
guaranteed = 1
`,
			want: diag.List{
				errAt(4, 12, "flavors.h100.capacity", field.ErrorTypeInvalid),
				errAt(6, 10, "priorities.urgent", field.ErrorTypeInvalid),
				errAt(9, 12, "teams.training.lendable", field.ErrorTypeInvalid),
				errAt(10, 1, "teams.training.lendible", field.ErrorTypeNotSupported),
				errAt(12, 15, "teams.research.namespaces[0]", field.ErrorTypeDuplicate),
				errAt(12, 27, "teams.research.namespaces[1]", field.ErrorTypeInvalid),
				errAt(13, 14, "teams.research.guaranteed", field.ErrorTypeTypeInvalid),
				errAt(15, 25, "teams.research.flavors.a100", field.ErrorTypeForbidden),
				errAt(15, 25, "teams.research.flavors.a100", field.ErrorTypeNotFound),
			},
		},
		"[kai] and node pool values Kubernetes or tenancy refuse": {
			src: header + `node_pool = "h100 pool"
gpu_sharing = "time-slice"
[flavors.a100]
capacity = 8
node_pool = ""
[kai]
node_pool_label = "kai scheduler/pool"
gpu_sharing = "half"
[teams.a]
[teams.a.flavors.h100]
guaranteed = 8
`,
			want: diag.List{
				errAt(5, 13, "flavors.h100.node_pool", field.ErrorTypeInvalid),
				errAt(6, 15, "flavors.h100.gpu_sharing", field.ErrorTypeNotSupported),
				errAt(9, 13, "flavors.a100.node_pool", field.ErrorTypeInvalid),
				errAt(11, 19, "kai.node_pool_label", field.ErrorTypeInvalid),
				errAt(12, 15, "kai.gpu_sharing", field.ErrorTypeNotSupported),
			},
		},
		"gpu_sharing = fraction under Kueue: a warning at the line that asks": {
			src: `version = 1
name = "gpu-pool"
[kai]
gpu_sharing = "fraction"
[flavors.h100]
capacity = 32
[flavors.a100]
capacity = 8
[teams.a]
[teams.a.flavors.h100]
guaranteed = 8
`,
			want: diag.List{warnAt(4, 15, "kai.gpu_sharing", field.ErrorTypeNotSupported)},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			src := generator.Source{Path: "tenancy.toml", Data: []byte(tc.src)}
			wantErr := len(tc.want.Errors()) > 0

			var got diag.List
			p, warnings, err := generator.Check(src, generator.Options{})
			var ae *generator.AgreementError
			switch {
			case err == nil:
				got = warnings
				if p == nil {
					t.Error("Check: nil plan without an error")
				}
			case errors.As(err, &ae):
				got = ae.Diagnostics
				if p != nil || warnings != nil {
					t.Error("Check: returned a plan or warnings with an error")
				}
			default:
				t.Fatalf("Check: unexpected error %v", err)
			}
			if diff := diagtest.Diff(t, tc.want, got); diff != "" {
				t.Errorf("diagnostics (-want,+got):\n%s", diff)
			}

			for bname, opts := range backends {
				res, err := generator.Render(src, opts)
				if wantErr {
					if res != nil || !errors.As(err, &ae) {
						t.Errorf("Render %s: got result %v and error %v, want nil and an *AgreementError", bname, res != nil, err)
					}
					continue
				}
				if err != nil {
					t.Errorf("Render %s: %v", bname, err)
					continue
				}
				if len(res.Manifests) == 0 {
					t.Errorf("Render %s: empty manifests", bname)
				}
				if opts.Backend == generator.Kueue {
					// KAI adds its own warnings about what it cannot express.
					if diff := diagtest.Diff(t, tc.want, diag.List(res.Warnings)); diff != "" {
						t.Errorf("Render %s warnings (-want,+got):\n%s", bname, diff)
					}
				}
			}
		})
	}
}

// TestReadFileTooLarge covers the size cap where files are read.
func TestReadFileTooLarge(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte("#"), generator.MaxAgreementSize+1)
	path := dir + "/tenancy.toml"
	if err := os.WriteFile(path, big, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := generator.ReadFile(path); !errors.Is(err, generator.ErrTooLarge) {
		t.Errorf("ReadFile: got %v, want ErrTooLarge", err)
	}
	if _, err := generator.ReadFileIn(dir, "tenancy.toml"); !errors.Is(err, generator.ErrTooLarge) {
		t.Errorf("ReadFileIn: got %v, want ErrTooLarge", err)
	}
}

// TestGuaranteesDoNotOverflow: 1,100 teams each guaranteed 2^53 GPUs sum
// past int64; the sum must not wrap around to a negative number that fits
// the capacity.
func TestGuaranteesDoNotOverflow(t *testing.T) {
	var b strings.Builder
	b.WriteString(header)
	for i := range 1100 {
		fmt.Fprintf(&b, "[teams.t%d]\nguaranteed = 9007199254740992\n", i)
	}
	_, _, err := generator.Check(generator.Source{Path: "tenancy.toml", Data: []byte(b.String())}, generator.Options{})
	var ae *generator.AgreementError
	if !errors.As(err, &ae) {
		t.Fatalf("Check: got %v, want an *AgreementError", err)
	}
	want := errAt(4, 12, "flavors.h100.capacity", field.ErrorTypeInvalid)
	got := ae.Diagnostics[0]
	got.Message, _, _ = strings.Cut(got.Message, " (")
	if diff := diagtest.Diff(t, diag.List{want}, diag.List{got}); diff != "" {
		t.Errorf("first diagnostic (-want,+got):\n%s", diff)
	}
}

// TestMessages covers the few messages whose wording is the feature: a
// typo's suggestion, the line a duplicate was first defined on, the teams
// whose guarantees add up past a capacity. Every other test compares
// problems by type, position and field path only.
func TestMessages(t *testing.T) {
	tests := map[string]struct {
		src  string
		want string
	}{
		"a typo names the key meant": {
			src:  header + "[teams.a]\nguaranteed = 8\nlendible = 4\n",
			want: `tenancy.toml:7:1: teams.a.lendible: unknown key "lendible" (did you mean "lendable"?)`,
		},
		"a duplicate names the line of the first": {
			src:  header + "[teams.a]\nguaranteed = 8\nguaranteed = 9\n",
			want: `tenancy.toml:7:1: teams.a.guaranteed: key "guaranteed" is defined twice (first at line 6)`,
		},
		"capacity names who is guaranteed what": {
			src:  header + "[teams.a]\nguaranteed = 24\n[teams.b]\nguaranteed = 16\n",
			want: "tenancy.toml:4:12: flavors.h100.capacity: teams are guaranteed 40 GPUs of flavor h100 (a 24, b 16) but its capacity is 32",
		},
		"a missing key says what to write": {
			src:  "name = \"gpu-pool\"\n[flavors.h100]\ncapacity = 32\n[teams.a]\nguaranteed = 8\n",
			want: "tenancy.toml:1:1: version: is required: add it at the top of the file\n    version = 1",
		},
		"the shorthand with several flavors suggests the first flavor's table, with the values written": {
			src:  header + "[flavors.a100]\ncapacity = 8\n[teams.a]\nguaranteed = 8\nlendable = 2\n",
			want: "tenancy.toml:8:14: teams.a.guaranteed: the agreement has several flavors (a100, h100): give guaranteed, lendable and borrow per flavor, in a table of its own under the team's\n    [teams.a.flavors.a100]\n    guaranteed = 8\n    lendable = 2",
		},
		"a window's shorthand with several flavors suggests what to write inside its entry": {
			src: header + "[flavors.a100]\ncapacity = 8\n[teams.a.flavors.h100]\nguaranteed = 8\n" +
				"[[teams.a.windows]]\nfrom = \"20:00\"\nto = \"06:00\"\nlendable = 6\n",
			want: "tenancy.toml:12:12: teams.a.windows[0].lendable: the agreement has several flavors (a100, h100): give lendable and borrow per flavor, in this [[teams.a.windows]] entry (line 9)\n    flavors.h100 = { lendable = 6 }",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := generator.Render(generator.Source{Path: "tenancy.toml", Data: []byte(tc.src)}, generator.Options{})
			var aerr *generator.AgreementError
			if !errors.As(err, &aerr) {
				t.Fatalf("want an AgreementError, got %v", err)
			}
			if diff := cmp.Diff(tc.want, aerr.Diagnostics.String()); diff != "" {
				t.Errorf("messages (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestGuardrailsProblems: the [guardrails] table's values are checked like
// every other, at the value.
func TestGuardrailsProblems(t *testing.T) {
	src := header + `[teams.a]
guaranteed = 8
[guardrails]
pod_security = "strict"
namespace_prune = "sometimes"
allow_ingress_from = ["monitoring", "Monitoring", "monitoring"]
gpu_quota = "yes"
`
	_, err := generator.Render(generator.Source{Path: "tenancy.toml", Data: []byte(src)}, generator.Options{})
	var aerr *generator.AgreementError
	if !errors.As(err, &aerr) {
		t.Fatalf("want an AgreementError, got %v", err)
	}
	want := diag.List{
		errAt(8, 16, "guardrails.pod_security", field.ErrorTypeNotSupported),
		errAt(9, 19, "guardrails.namespace_prune", field.ErrorTypeNotSupported),
		errAt(10, 37, "guardrails.allow_ingress_from[1]", field.ErrorTypeInvalid),
		errAt(10, 51, "guardrails.allow_ingress_from[2]", field.ErrorTypeDuplicate),
		errAt(11, 13, "guardrails.gpu_quota", field.ErrorTypeTypeInvalid),
	}
	if diff := diagtest.Diff(t, want, aerr.Diagnostics); diff != "" {
		t.Errorf("diagnostics (-want,+got):\n%s", diff)
	}
}

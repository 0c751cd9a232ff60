package validate_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/diag"
)

// The messages Kubernetes' own name validation gives, quoted by ours.
const (
	dns1123Label     = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
	dns1123Subdomain = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)

// errAt and warnAt build the diagnostics expected for tenancy.toml.
func errAt(line, col int, field, msg string) diag.Diagnostic {
	return diag.Diagnostic{Severity: diag.Error, File: "tenancy.toml", Line: line, Column: col, Field: field, Message: msg}
}

func warnAt(line, col int, field, msg string) diag.Diagnostic {
	d := errAt(line, col, field, msg)
	d.Severity = diag.Warning
	return d
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
			want: diag.List{errAt(5, 9, "", "TOML syntax error: expected ']' to close table name")},
		},
		"unknown key lendible": {
			src: header + `[teams.a]
guaranteed = 8
lendible = 4
`,
			want: diag.List{errAt(7, 1, "teams.a.lendible", `unknown key "lendible" (did you mean "lendable"?)`)},
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
				errAt(3, 1, "flavours", `unknown key "flavours" (did you mean "flavors"?)`),
				errAt(4, 10, "flavors.h100.node_labels", `at least one node label is required when [topology] is set: Kueue finds the flavor's nodes by them, e.g. node_labels = { "nvidia.com/gpu.product" = "NVIDIA-H100-80GB-HBM3" }`),
				errAt(6, 1, "flavors.h100.capcity", `unknown key "capcity" (did you mean "capacity"?)`),
				errAt(7, 39, "flavors.h100.tolerations[0].efect", `unknown key "efect" (did you mean "effect"?)`),
				errAt(9, 1, "teams.a.guaranted", `unknown key "guaranted" (did you mean "guaranteed"?)`),
				errAt(11, 1, "teams.a.flavors.h100.lendible", `unknown key "lendible" (did you mean "lendable"?)`),
				errAt(12, 2, "topology.levels", `must list at least one node label, coarse to fine, e.g. ["cloud.provider.com/rack", "kubernetes.io/hostname"]`),
				errAt(13, 1, "topology.level", `unknown key "level" (did you mean "levels"?)`),
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
				errAt(1, 11, "version", `must be an integer, got string "1"`),
				errAt(2, 8, "name", "must be a string, got table"),
				errAt(4, 12, "flavors.h100.capacity", `must be an integer, got string "32"`),
				errAt(5, 12, "flavors.h100.resource", "must be a string, got integer 1"),
				errAt(7, 14, "teams.a.guaranteed", "must be an integer, got boolean true"),
				errAt(8, 14, "teams.a.namespaces", `must be an array of strings, got string "a"`),
				errAt(9, 11, "teams.a.reclaim", "must be a string, got integer 1"),
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
				errAt(4, 12, "flavors.h100.capacity", "must be positive, got -32"),
				errAt(6, 14, "teams.a.guaranteed", "must not be negative, got -8"),
				errAt(7, 12, "teams.a.lendable", "must not be negative, got -1"),
				errAt(8, 10, "teams.a.borrow", "must not be negative, got -2"),
			},
		},
		"zero capacity": {
			src: `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 0
[teams.a]
`,
			want: diag.List{errAt(4, 12, "flavors.h100.capacity", "must be positive, got 0")},
		},
		"missing capacity": {
			src: `version = 1
name = "gpu-pool"
[flavors.h100]
resource = "nvidia.com/gpu"
[teams.a]
`,
			want: diag.List{errAt(3, 10, "flavors.h100.capacity", "is required: how many nvidia.com/gpu the cluster has")},
		},
		"non-integer GPU counts": {
			src: header + `[teams.a]
guaranteed = 8.5
lendable = 8.0
`,
			want: diag.List{
				errAt(6, 14, "teams.a.guaranteed", "must be a whole number, got 8.5"),
				errAt(7, 12, "teams.a.lendable", "must be an integer, got float 8.0 (write 8)"),
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
				errAt(4, 12, "flavors.h100.capacity", "9007199254740993 is too large: counts are limited to 9007199254740992 (2^53, the largest integer KAI's quotas hold exactly)"),
				errAt(7, 10, "teams.a.borrow", "9223372036854775807 is too large: counts are limited to 9007199254740992 (2^53, the largest integer KAI's quotas hold exactly)"),
				warnAt(7, 10, "teams.a.borrow", "borrow (9223372036854775807) exceeds the 0 GPUs of flavor h100 the other teams can lend: at most 0 can ever be borrowed"),
				errAt(8, 10, "teams.a.weight", "9007199254740993 is too large: counts are limited to 9007199254740992 (2^53, the largest integer KAI's quotas hold exactly)"),
			},
		},
		"guarantees that overflow int64 still exceed the capacity": {
			src: header + `[teams.a]
guaranteed = 9007199254740992
[teams.b]
guaranteed = 9007199254740992
`,
			want: diag.List{errAt(4, 12, "flavors.h100.capacity", "teams are guaranteed 18014398509481984 GPUs of flavor h100 (a 9007199254740992, b 9007199254740992) but its capacity is 32")},
		},
		"lendable above guaranteed": {
			src: header + `[teams.a]
guaranteed = 8
lendable = 9
[teams.b]
lendable = 1
`,
			want: diag.List{
				errAt(7, 12, "teams.a.lendable", "lendable (9) exceeds guaranteed (8): a team can only lend GPUs it is guaranteed"),
				errAt(9, 12, "teams.b.lendable", "lendable (1) exceeds guaranteed (0): a team can only lend GPUs it is guaranteed"),
			},
		},
		"guarantees above the flavor's capacity": {
			src: header + `[teams.a]
guaranteed = 24
[teams.b]
guaranteed = 9
`,
			want: diag.List{errAt(4, 12, "flavors.h100.capacity", "teams are guaranteed 33 GPUs of flavor h100 (a 24, b 9) but its capacity is 32")},
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
			want: diag.List{errAt(7, 12, "flavors.mig.capacity", "teams are guaranteed 8 GPUs of flavor mig (a 7, b 1) but its capacity is 7")},
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
			want: diag.List{warnAt(12, 10, "teams.b.borrow", "borrow (9) exceeds the 8 GPUs of flavor h100 the other teams can lend: at most 8 can ever be borrowed")},
		},
		"duplicate namespaces across teams": {
			src: header + `[teams.a]
namespaces = ["shared", "a"]
[teams.b]
namespaces = ["b", "shared"]
[teams.shared]
`,
			want: diag.List{
				errAt(8, 20, "teams.b.namespaces[1]", `namespace "shared" already belongs to team "a": a namespace can belong to one team only`),
				errAt(9, 8, "teams.shared", `namespace "shared" already belongs to team "a": a namespace can belong to one team only`),
			},
		},
		"duplicate namespace within a team": {
			src: header + `[teams.a]
namespaces = ["a", "a-dev", "a"]
`,
			want: diag.List{errAt(6, 29, "teams.a.namespaces[2]", `namespace "a" is listed twice`)},
		},
		"empty namespaces": {
			src: header + `[teams.a]
namespaces = []
`,
			want: diag.List{errAt(6, 14, "teams.a.namespaces", `must list at least one namespace (leave it out to use ["a"])`)},
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
				errAt(2, 8, "name", `"GPU_pool" is not a valid name: `+dns1123Label),
				errAt(3, 10, "flavors.H100", `"H100" is not a valid name: `+dns1123Label),
				errAt(5, 8, "teams.Training", `"Training" is not a valid name: `+dns1123Label),
				errAt(6, 15, "teams.Training.namespaces[0]", `"ml.training" is not a valid name: must not contain dots`),
				errAt(7, 8, `teams."a.b"`, `"a.b" is not a valid name: must not contain dots`),
				errAt(9, 15, "teams.c.namespaces[0]", `"-c" is not a valid name: `+dns1123Label),
				errAt(9, 21, "teams.c.namespaces[1]", `"`+strings.Repeat("x", 64)+`" is not a valid name: must be no more than 63 characters`),
			},
		},
		"invalid priority names": {
			src: header + `[priorities]
High = 10
"very.high" = 20
[teams.a]
`,
			want: diag.List{errAt(6, 8, "priorities.High", `"High" is not a valid priority class name: `+dns1123Subdomain)},
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
				errAt(7, 18, "teams.a.flavors.a100", `unknown flavor "a100" (flavors: h100)`),
				errAt(9, 18, "teams.b.flavors.H100", `unknown flavor "H100" (flavors: h100)`),
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
				errAt(8, 9, "priorities.above", "2147483648 is outside the 32-bit range Kubernetes priorities use (-2147483648 to 2147483647)"),
				errAt(9, 9, "priorities.below", "-2147483649 is outside the 32-bit range Kubernetes priorities use (-2147483648 to 2147483647)"),
			},
		},
		"no teams": {
			src:  header,
			want: diag.List{errAt(1, 1, "teams", "the agreement has no teams: add at least one [teams.NAME] with its guaranteed GPUs")},
		},
		"empty teams table": {
			src:  header + "[teams]\n",
			want: diag.List{errAt(1, 1, "teams", "the agreement has no teams: add at least one [teams.NAME] with its guaranteed GPUs")},
		},
		"no flavors": {
			src: `version = 1
name = "gpu-pool"
[teams.a]
`,
			want: diag.List{errAt(1, 1, "flavors", "at least one flavor is required, e.g. [flavors.h100] with capacity = 32")},
		},
		"empty file": {
			src: "",
			want: diag.List{
				errAt(1, 1, "flavors", "at least one flavor is required, e.g. [flavors.h100] with capacity = 32"),
				errAt(1, 1, "name", `is required: name the shared GPU pool (the Kueue Cohort and KAI parent queue), e.g. name = "gpu-pool"`),
				errAt(1, 1, "teams", "the agreement has no teams: add at least one [teams.NAME] with its guaranteed GPUs"),
				errAt(1, 1, "version", "is required: add version = 1 at the top of the file"),
			},
		},
		"version missing": {
			src:  strings.TrimPrefix(header, "version = 1\n") + "[teams.a]\n",
			want: diag.List{errAt(1, 1, "version", "is required: add version = 1 at the top of the file")},
		},
		"version wrong": {
			src:  strings.Replace(header, "version = 1", "version = 2", 1) + "[teams.a]\n",
			want: diag.List{errAt(1, 11, "version", "unsupported version 2: this tenancy reads version 1")},
		},
		"name missing": {
			src:  strings.Replace(header, `name = "gpu-pool"`, `# no name`, 1) + "[teams.a]\n",
			want: diag.List{errAt(1, 1, "name", `is required: name the shared GPU pool (the Kueue Cohort and KAI parent queue), e.g. name = "gpu-pool"`)},
		},
		"quota shorthand with several flavors": {
			src: header + `[flavors.a100]
capacity = 8
[teams.a]
weight = 2
borrow = 4
guaranteed = 8
`,
			want: diag.List{errAt(9, 10, "teams.a.borrow", "the agreement has several flavors (a100, h100): put guaranteed, lendable and borrow under [teams.a.flavors.FLAVOR]")},
		},
		"shorthand and flavors table together": {
			src: header + `[teams.a]
guaranteed = 8
[teams.a.flavors.h100]
guaranteed = 8
`,
			want: diag.List{errAt(7, 18, "teams.a.flavors.h100", "quota keys are given both on the team and under flavors: use one form")},
		},
		"reserved namespaces": {
			src: header + `[teams.a]
namespaces = ["kube-system", "kube-public", "kube-node-lease", "a"]
[teams.kube-system]
`,
			want: diag.List{
				errAt(6, 15, "teams.a.namespaces[0]", `namespace "kube-system" belongs to Kubernetes itself and cannot be given to a team`),
				errAt(6, 30, "teams.a.namespaces[1]", `namespace "kube-public" belongs to Kubernetes itself and cannot be given to a team`),
				errAt(6, 45, "teams.a.namespaces[2]", `namespace "kube-node-lease" belongs to Kubernetes itself and cannot be given to a team`),
				errAt(7, 8, "teams.kube-system", `namespace "kube-system" belongs to Kubernetes itself and cannot be given to a team`),
			},
		},
		"reclaim, weight and vms": {
			src: header + `[teams.a]
reclaim = "never"
weight = -1
vms = -2
`,
			want: diag.List{
				errAt(6, 11, "teams.a.reclaim", `must be "preempt" or "wait", got "never"`),
				errAt(7, 10, "teams.a.weight", "must not be negative, got -1"),
				errAt(8, 7, "teams.a.vms", "must not be negative, got -2"),
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
				errAt(4, 12, "flavors.a.resource", `"cpu" is not a GPU resource: tenancy covers cpu and memory itself`),
				errAt(7, 12, "flavors.b.resource", `"gpu" must be an extended resource with a domain, e.g. nvidia.com/gpu or nvidia.com/mig-1g.10gb`),
				errAt(10, 12, "flavors.c.resource", `"nvidia.com/mig 1g" is not a valid resource name: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`),
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
				errAt(5, 17, `flavors.h100.node_labels."nvidia.com/gpu product"`, `node label key "nvidia.com/gpu product" is invalid: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`),
				errAt(5, 52, `flavors.h100.node_labels."nvidia.com/gpu.product"`, `node label value "H100 80GB" is invalid: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`),
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
				errAt(6, 27, "flavors.h100.tolerations[0].operator", `must be Equal or Exists, got "Within"`),
				errAt(7, 58, "flavors.h100.tolerations[1].effect", `must be NoSchedule, PreferNoSchedule or NoExecute, got "Never"`),
				errAt(8, 45, "flavors.h100.tolerations[2].value", "must be empty when operator is Exists"),
				errAt(9, 3, "flavors.h100.tolerations[3].key", "is required unless operator is Exists"),
			},
		},
		"topology with zero levels": {
			src: header + `node_labels = { "nvidia.com/gpu.product" = "H100" }
[topology]
levels = []
[teams.a]
`,
			want: diag.List{errAt(6, 2, "topology.levels", `must list at least one node label, coarse to fine, e.g. ["cloud.provider.com/rack", "kubernetes.io/hostname"]`)},
		},
		"topology without levels": {
			src: header + `node_labels = { "nvidia.com/gpu.product" = "H100" }
[topology]
[teams.a]
`,
			want: diag.List{errAt(6, 2, "topology.levels", `must list at least one node label, coarse to fine, e.g. ["cloud.provider.com/rack", "kubernetes.io/hostname"]`)},
		},
		"topology with a duplicate level": {
			src: header + `node_labels = { "nvidia.com/gpu.product" = "H100" }
[topology]
levels = ["cloud.example.com/rack", "cloud.example.com/block", "cloud.example.com/rack"]
[teams.a]
`,
			want: diag.List{errAt(7, 64, "topology.levels[2]", `level "cloud.example.com/rack" is listed twice`)},
		},
		"topology with the hostname above the finest level": {
			src: header + `node_labels = { "nvidia.com/gpu.product" = "H100" }
[topology]
levels = ["kubernetes.io/hostname", "cloud.example.com/gpu"]
[teams.a]
`,
			want: diag.List{errAt(7, 11, "topology.levels[0]", "kubernetes.io/hostname can only be the last (finest) level: Kueue rejects it anywhere else")},
		},
		"topology with invalid and too many levels": {
			src: header + `node_labels = { "nvidia.com/gpu.product" = "H100" }
[topology]
levels = ["rack name", "l1", "l2", "l3", "l4", "l5", "l6", "l7", "l8", "l9", "l10", "l11", "l12", "l13", "l14", "l15", "l16"]
[teams.a]
`,
			want: diag.List{
				errAt(7, 11, "topology.levels[0]", `"rack name" is not a valid node label key: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`),
				errAt(7, 120, "topology.levels[16]", "at most 16 topology levels are supported"),
			},
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
				errAt(5, 89, "flavors.h100.node_labels.i", "a flavor can have at most 8 node labels (Kueue's ResourceFlavor limit), got 9"),
				errAt(9, 3, "flavors.h100.tolerations[8]", "a flavor can have at most 8 tolerations (Kueue's ResourceFlavor limit), got 9"),
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
			want: diag.List{errAt(3, 10, "flavors.h100.node_labels", `at least one node label is required when [topology] is set: Kueue finds the flavor's nodes by them, e.g. node_labels = { "nvidia.com/gpu.product" = "NVIDIA-H100-80GB-HBM3" }`)},
		},
		"table defined twice": {
			src: header + `[teams.a]
guaranteed = 8
[teams.a]
borrow = 8
`,
			want: diag.List{errAt(7, 8, "teams.a", "table [teams.a] is defined twice (first at line 5)")},
		},
		"key defined twice": {
			src: header + `[teams.a]
guaranteed = 8
guaranteed = 16
`,
			want: diag.List{errAt(7, 1, "teams.a.guaranteed", `key "guaranteed" is defined twice (first at line 6)`)},
		},
		"64 flavors": {src: flavorsOf(64, false)},
		"65 flavors": {
			src:  flavorsOf(65, false),
			want: diag.List{errAt(195, 10, "flavors.f64", "at most 64 flavors are supported (Kueue's limit per resource group)")},
		},
		"21 flavors of 21 resources": {src: flavorsOf(21, true)},
		"22 flavors of 22 resources": {
			src:  flavorsOf(22, true),
			want: diag.List{errAt(3, 10, "flavors", "22 flavors of 22 GPU resources make 528 flavor-resource combinations (each flavor lists every GPU resource, cpu and memory); Kueue allows at most 512")},
		},
		"63 resources": {
			src:  flavorsOf(63, true),
			want: diag.List{errAt(3, 10, "flavors", "at most 62 distinct resources are supported")},
		},
		"file over 1 MiB": {
			src:  strings.Repeat("#", generator.MaxAgreementSize+1),
			want: diag.List{{Severity: diag.Error, File: "tenancy.toml", Message: "file is 1048577 bytes; agreements are limited to 1048576 bytes (1 MiB)"}},
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
				errAt(4, 12, "flavors.h100.capacity", "teams are guaranteed 16 GPUs of flavor h100 (training 16) but its capacity is 12"),
				errAt(6, 10, "priorities.urgent", "3000000000 is outside the 32-bit range Kubernetes priorities use (-2147483648 to 2147483647)"),
				errAt(9, 12, "teams.training.lendable", "lendable (20) exceeds guaranteed (16): a team can only lend GPUs it is guaranteed"),
				errAt(10, 1, "teams.training.lendible", `unknown key "lendible" (did you mean "lendable"?)`),
				errAt(12, 15, "teams.research.namespaces[0]", `namespace "training" already belongs to team "training": a namespace can belong to one team only`),
				errAt(12, 27, "teams.research.namespaces[1]", `"Research" is not a valid name: `+dns1123Label),
				errAt(13, 14, "teams.research.guaranteed", "must be a whole number, got 8.5"),
				errAt(15, 25, "teams.research.flavors.a100", "quota keys are given both on the team and under flavors: use one form"),
				errAt(15, 25, "teams.research.flavors.a100", `unknown flavor "a100" (flavors: h100)`),
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			src := generator.Source{Path: "tenancy.toml", Data: []byte(tc.src)}
			wantErr := len(tc.want.Errors()) > 0

			var got diag.List
			p, warnings, err := generator.Check(src)
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
			if diff := cmp.Diff(tc.want, got); diff != "" {
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
					if diff := cmp.Diff(tc.want, diag.List(res.Warnings)); diff != "" {
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
	_, _, err := generator.Check(generator.Source{Path: "tenancy.toml", Data: []byte(b.String())})
	var ae *generator.AgreementError
	if !errors.As(err, &ae) {
		t.Fatalf("Check: got %v, want an *AgreementError", err)
	}
	want := errAt(4, 12, "flavors.h100.capacity", "teams are guaranteed 9223372036854775807 GPUs of flavor h100")
	got := ae.Diagnostics[0]
	got.Message, _, _ = strings.Cut(got.Message, " (")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("first diagnostic (-want,+got):\n%s", diff)
	}
}

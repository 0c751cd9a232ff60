package agreement_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/agreement"
	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/internal/diagtest"
	"github.com/tenancy-dev/tenancy/generator/load"
)

// decodeSource parses and decodes src as tenancy.toml; the test fails on
// parse errors, which are package load's business.
func decodeSource(t *testing.T, src string) (*agreement.Agreement, diag.List) {
	t.Helper()
	root, diags := load.Parse("tenancy.toml", []byte(src))
	if len(diags) > 0 {
		t.Fatalf("Parse: %s", diags)
	}
	return agreement.Decode("tenancy.toml", root)
}

// decodeErr is the error diagnostic Decode reports for tenancy.toml.
func decodeErr(line, col int, path string, typ field.ErrorType) diag.Diagnostic {
	return diagtest.Error("tenancy.toml", line, col, path, typ)
}

func TestDecodeProblems(t *testing.T) {
	tests := map[string]struct {
		src  string
		want diag.List
	}{
		"the reference keys": {
			src: `version = 1
name = "gpu-pool"
[flavors.h100]
resource = "nvidia.com/gpu"
capacity = 32
node_labels = { "nvidia.com/gpu.product" = "H100" }
tolerations = [{ key = "k", operator = "Equal", value = "v", effect = "NoSchedule" }]
[priorities]
high = 10
[teams.a]
namespaces = ["a"]
reclaim = "wait"
weight = 2
vms = 3
guaranteed = 8
lendable = 4
borrow = 2
[teams.b.flavors.h100]
guaranteed = 8
[topology]
levels = ["kubernetes.io/hostname"]
`,
		},
		"the department keys": {
			src: "[departments.science]\nguaranteed = 8\nlendable = 2\nborrow = 4\nweight = 2\n[departments.arts.flavors.h100]\nguaranteed = 1\n[teams.a]\ndepartment = \"science\"\n",
		},
		"unknown key in a department": {
			src:  "[departments.science]\nguaranted = 8\n",
			want: diag.List{decodeErr(2, 1, "departments.science.guaranted", field.ErrorTypeNotSupported)},
		},
		"unknown key in a department's flavor": {
			src:  "[departments.science.flavors.h100]\nlendible = 8\n",
			want: diag.List{decodeErr(2, 1, "departments.science.flavors.h100.lendible", field.ErrorTypeNotSupported)},
		},
		"a team's department is a string": {
			src:  "[teams.a]\ndepartment = 3\n",
			want: diag.List{decodeErr(2, 14, "teams.a.department", field.ErrorTypeTypeInvalid)},
		},
		"a department is a table": {
			src:  "departments = 3\n",
			want: diag.List{decodeErr(1, 15, "departments", field.ErrorTypeTypeInvalid)},
		},
		"backend as a string": {
			src: "backend = \"kai\"\n",
		},
		"backend as a list": {
			src: "backend = [\"kueue\", \"kai\"]\n",
		},
		"backend as a number": {
			src:  "backend = 1\n",
			want: diag.List{decodeErr(1, 11, "backend", field.ErrorTypeTypeInvalid)},
		},
		"backend list holding a number": {
			src:  "backend = [\"kueue\", 2]\n",
			want: diag.List{decodeErr(1, 21, "backend[1]", field.ErrorTypeTypeInvalid)},
		},
		"unknown key at the top": {
			src:  "version = 1\nnmae = \"pool\"\n",
			want: diag.List{decodeErr(2, 1, "nmae", field.ErrorTypeNotSupported)},
		},
		"unknown key with no close match lists the known keys": {
			src:  "version = 1\ncluster = \"x\"\n",
			want: diag.List{decodeErr(2, 1, "cluster", field.ErrorTypeNotSupported)},
		},
		"unknown key in a flavor": {
			src:  "[flavors.h100]\ncapacty = 32\n",
			want: diag.List{decodeErr(2, 1, "flavors.h100.capacty", field.ErrorTypeNotSupported)},
		},
		"unknown key in a toleration": {
			src:  "[flavors.h100]\ntolerations = [{ key = \"k\", efect = \"NoSchedule\" }]\n",
			want: diag.List{decodeErr(2, 29, "flavors.h100.tolerations[0].efect", field.ErrorTypeNotSupported)},
		},
		"unknown key in an array-of-tables toleration": {
			src:  "[flavors.h100]\n[[flavors.h100.tolerations]]\nkey = \"k\"\n[[flavors.h100.tolerations]]\nvalu = \"v\"\n",
			want: diag.List{decodeErr(5, 1, "flavors.h100.tolerations[1].valu", field.ErrorTypeNotSupported)},
		},
		"unknown key in a team: lendible": {
			src:  "[teams.training]\nguaranteed = 16\nlendible = 8\n",
			want: diag.List{decodeErr(3, 1, "teams.training.lendible", field.ErrorTypeNotSupported)},
		},
		"unknown key in a team's flavor quota": {
			src:  "[teams.training.flavors.h100]\nguaranteed = 16\nLendable = 8\n",
			want: diag.List{decodeErr(3, 1, "teams.training.flavors.h100.Lendable", field.ErrorTypeNotSupported)},
		},
		"unknown key in topology": {
			src:  "[topology]\nlevel = [\"kubernetes.io/hostname\"]\n",
			want: diag.List{decodeErr(2, 1, "topology.level", field.ErrorTypeNotSupported)},
		},
		"unknown keys are quoted in the path when they must be": {
			src:  "[teams.a]\n\"lend.able\" = 1\n",
			want: diag.List{decodeErr(2, 1, "teams.a[lend.able]", field.ErrorTypeNotSupported)},
		},
		"string for an integer": {
			src: "version = \"1\"\n[flavors.h100]\ncapacity = \"32\"\n",
			want: diag.List{
				decodeErr(1, 11, "version", field.ErrorTypeTypeInvalid),
				decodeErr(3, 12, "flavors.h100.capacity", field.ErrorTypeTypeInvalid),
			},
		},
		"table for a string": {
			src:  "name = { pool = \"gpu\" }\n",
			want: diag.List{decodeErr(1, 8, "name", field.ErrorTypeTypeInvalid)},
		},
		"array for a string": {
			src:  "[teams.a]\nreclaim = [\"wait\"]\n",
			want: diag.List{decodeErr(2, 11, "teams.a.reclaim", field.ErrorTypeTypeInvalid)},
		},
		"integer for a string": {
			src:  "[flavors.h100]\nresource = 5\n",
			want: diag.List{decodeErr(2, 12, "flavors.h100.resource", field.ErrorTypeTypeInvalid)},
		},
		"boolean for an integer": {
			src:  "[teams.a]\nvms = true\n",
			want: diag.List{decodeErr(2, 7, "teams.a.vms", field.ErrorTypeTypeInvalid)},
		},
		"date for an integer": {
			src:  "[teams.a]\nweight = 2026-01-01\n",
			want: diag.List{decodeErr(2, 10, "teams.a.weight", field.ErrorTypeTypeInvalid)},
		},
		"non-integer GPU count": {
			src:  "[teams.a]\nguaranteed = 8.5\n",
			want: diag.List{decodeErr(2, 14, "teams.a.guaranteed", field.ErrorTypeTypeInvalid)},
		},
		"whole float GPU count": {
			src:  "[teams.a.flavors.h100]\nborrow = 8.0\n",
			want: diag.List{decodeErr(2, 10, "teams.a.flavors.h100.borrow", field.ErrorTypeTypeInvalid)},
		},
		"infinite GPU count": {
			src:  "[flavors.h100]\ncapacity = inf\n",
			want: diag.List{decodeErr(2, 12, "flavors.h100.capacity", field.ErrorTypeTypeInvalid)},
		},
		"huge float GPU count": {
			src:  "[flavors.h100]\ncapacity = 1e300\n",
			want: diag.List{decodeErr(2, 12, "flavors.h100.capacity", field.ErrorTypeTypeInvalid)},
		},
		"string for a table": {
			src: "flavors = \"h100\"\nteams = 3\npriorities = []\ntopology = \"rack\"\n",
			want: diag.List{
				decodeErr(1, 11, "flavors", field.ErrorTypeTypeInvalid),
				decodeErr(2, 9, "teams", field.ErrorTypeTypeInvalid),
				decodeErr(3, 14, "priorities", field.ErrorTypeTypeInvalid),
				decodeErr(4, 12, "topology", field.ErrorTypeTypeInvalid),
			},
		},
		"value for a flavor, a team and a team's flavor": {
			src: "[flavors]\nh100 = 32\n[teams]\na = 8\n[teams.b]\nflavors.h100 = 8\n",
			want: diag.List{
				decodeErr(2, 8, "flavors.h100", field.ErrorTypeTypeInvalid),
				decodeErr(4, 5, "teams.a", field.ErrorTypeTypeInvalid),
				decodeErr(6, 16, "teams.b.flavors.h100", field.ErrorTypeTypeInvalid),
			},
		},
		"string for an array": {
			src: "[teams.a]\nnamespaces = \"a\"\n[topology]\nlevels = \"kubernetes.io/hostname\"\n",
			want: diag.List{
				decodeErr(2, 14, "teams.a.namespaces", field.ErrorTypeTypeInvalid),
				decodeErr(4, 10, "topology.levels", field.ErrorTypeTypeInvalid),
			},
		},
		"wrong item types": {
			src: "[teams.a]\nnamespaces = [\"a\", 2, [\"c\"]]\n",
			want: diag.List{
				decodeErr(2, 20, "teams.a.namespaces[1]", field.ErrorTypeTypeInvalid),
				decodeErr(2, 23, "teams.a.namespaces[2]", field.ErrorTypeTypeInvalid),
			},
		},
		"empty namespaces": {
			src:  "[teams.a]\nnamespaces = []\n",
			want: diag.List{decodeErr(2, 14, "teams.a.namespaces", field.ErrorTypeRequired)},
		},
		"tolerations not an array of tables": {
			src: "[flavors.h100]\ntolerations = { key = \"k\" }\n[flavors.a100]\ntolerations = [\"k\"]\n",
			want: diag.List{
				decodeErr(2, 15, "flavors.h100.tolerations", field.ErrorTypeTypeInvalid),
				decodeErr(4, 16, "flavors.a100.tolerations[0]", field.ErrorTypeTypeInvalid),
			},
		},
		"node label of the wrong type": {
			src:  "[flavors.h100]\nnode_labels = { \"nvidia.com/gpu.count\" = 8 }\n",
			want: diag.List{decodeErr(2, 42, "flavors.h100.node_labels[nvidia.com/gpu.count]", field.ErrorTypeTypeInvalid)},
		},
		"priority of the wrong type": {
			src:  "[priorities]\nhigh = \"1000\"\n",
			want: diag.List{decodeErr(2, 8, "priorities.high", field.ErrorTypeTypeInvalid)},
		},
		"priority table: value of the wrong type, preemptible not a bool": {
			src: "[priorities]\nhigh = { value = \"1000\", preemptible = \"no\" }\n",
			want: diag.List{
				decodeErr(2, 18, "priorities.high.value", field.ErrorTypeTypeInvalid),
				decodeErr(2, 40, "priorities.high.preemptible", field.ErrorTypeTypeInvalid),
			},
		},
		"priority table without its value": {
			src:  "[priorities]\nhigh = { preemptible = false }\n",
			want: diag.List{decodeErr(2, 1, "priorities.high.value", field.ErrorTypeRequired)},
		},
		"priority table with an unknown key": {
			src:  "[priorities]\nhigh = { value = 1000, preemptable = false }\n",
			want: diag.List{decodeErr(2, 24, "priorities.high.preemptable", field.ErrorTypeNotSupported)},
		},
		"every problem is reported": {
			src: `version = "1"
naem = "pool"
[flavors.h100]
capacity = 8.5
[teams.a]
lendible = 2
guaranteed = "8"
`,
			want: diag.List{
				decodeErr(1, 11, "version", field.ErrorTypeTypeInvalid),
				decodeErr(2, 1, "naem", field.ErrorTypeNotSupported),
				decodeErr(4, 12, "flavors.h100.capacity", field.ErrorTypeTypeInvalid),
				decodeErr(6, 1, "teams.a.lendible", field.ErrorTypeNotSupported),
				decodeErr(7, 14, "teams.a.guaranteed", field.ErrorTypeTypeInvalid),
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, got := decodeSource(t, tc.src)
			got.Sort() // as the pipeline does: by position, whichever check found it
			if diff := diagtest.Diff(t, tc.want, got); diff != "" {
				t.Errorf("Decode diagnostics (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestDecodeAgreement(t *testing.T) {
	src := `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 32
node_labels = { "nvidia.com/gpu.product" = "H100" }
[[flavors.h100.tolerations]]
key = "nvidia.com/gpu"
operator = "Exists"
[priorities]
high = 1000
[teams.training]
guaranteed = 16
lendable = 8
[teams."dotted.name"]
namespaces = ["x"]
reclaim = "wait"
weight = 2
vms = 0
[teams."dotted.name".flavors.h100]
borrow = 4
[topology]
levels = ["kubernetes.io/hostname"]
`
	got, diags := decodeSource(t, src)
	if len(diags) > 0 {
		t.Fatalf("Decode: %s", diags)
	}
	pos := func(line, col int) agreement.Pos { return agreement.Pos{Line: line, Column: col} }
	path := field.NewPath // compared by text: see diagtest.Paths
	unsetInt := func(p string) agreement.Int { return agreement.Int{Path: path(p)} }
	unsetStr := func(p string) agreement.Str { return agreement.Str{Path: path(p)} }
	want := &agreement.Agreement{
		File:    "tenancy.toml",
		Version: agreement.Int{Value: 1, State: agreement.Set, Pos: pos(1, 11), Path: path("version")},
		Name:    agreement.Str{Value: "gpu-pool", State: agreement.Set, Pos: pos(2, 8), Path: path("name")},
		Backend: agreement.Scalar[[]agreement.Str]{Path: path("backend")}, // TestDecodeBackend covers the key
		Flavors: []*agreement.Flavor{{
			Name:     "h100",
			Pos:      pos(3, 10),
			Path:     path("flavors.h100"),
			Resource: agreement.Str{Value: "nvidia.com/gpu", State: agreement.Defaulted, Pos: pos(3, 10), Path: path("flavors.h100.resource")},
			Capacity: agreement.Int{Value: 32, State: agreement.Set, Pos: pos(4, 12), Path: path("flavors.h100.capacity")},
			NodeLabels: []agreement.Label{{
				Key:   "nvidia.com/gpu.product",
				Value: agreement.Str{Value: "H100", State: agreement.Set, Pos: pos(5, 17), Path: path("flavors.h100.node_labels[nvidia.com/gpu.product]")},
			}},
			Tolerations: []*agreement.Toleration{{
				Pos:      pos(6, 16),
				Path:     path("flavors.h100.tolerations[0]"),
				Key:      agreement.Str{Value: "nvidia.com/gpu", State: agreement.Set, Pos: pos(7, 7), Path: path("flavors.h100.tolerations[0].key")},
				Operator: agreement.Str{Value: "Exists", State: agreement.Set, Pos: pos(8, 12), Path: path("flavors.h100.tolerations[0].operator")},
				Value:    unsetStr("flavors.h100.tolerations[0].value"),
				Effect:   unsetStr("flavors.h100.tolerations[0].effect"),
			}},
		}},
		Priorities: []*agreement.Priority{{
			Name:  "high",
			Pos:   pos(10, 1),
			Path:  path("priorities.high"),
			Value: agreement.Int{Value: 1000, State: agreement.Set, Pos: pos(10, 8), Path: path("priorities.high")},
			// Not written: the default, at the entry.
			Preemptible: agreement.Bool{Value: true, State: agreement.Defaulted, Pos: pos(10, 1), Path: path("priorities.high.preemptible")},
		}},
		Teams: []*agreement.Team{
			{
				Name:       "training",
				Pos:        pos(11, 8),
				Path:       path("teams.training"),
				Namespaces: []agreement.Str{{Value: "training", State: agreement.Defaulted, Pos: pos(11, 8), Path: path("teams.training")}},
				Department: unsetStr("teams.training.department"),
				Reclaim:    unsetStr("teams.training.reclaim"),
				Weight:     unsetInt("teams.training.weight"),
				VMs:        unsetInt("teams.training.vms"),
				Shorthand: &agreement.Quota{
					Pos:        pos(11, 8),
					Path:       path("teams.training"),
					Guaranteed: agreement.Int{Value: 16, State: agreement.Set, Pos: pos(12, 14), Path: path("teams.training.guaranteed")},
					Lendable:   agreement.Int{Value: 8, State: agreement.Set, Pos: pos(13, 12), Path: path("teams.training.lendable")},
					Borrow:     unsetInt("teams.training.borrow"),
				},
			},
			{
				Name:       "dotted.name",
				Pos:        pos(14, 8),
				Path:       path(`teams[dotted.name]`),
				Namespaces: []agreement.Str{{Value: "x", State: agreement.Set, Pos: pos(15, 15), Path: path(`teams[dotted.name].namespaces[0]`)}},
				Department: agreement.Str{Path: path(`teams[dotted.name].department`)},
				Reclaim:    agreement.Str{Value: "wait", State: agreement.Set, Pos: pos(16, 11), Path: path(`teams[dotted.name].reclaim`)},
				Weight:     agreement.Int{Value: 2, State: agreement.Set, Pos: pos(17, 10), Path: path(`teams[dotted.name].weight`)},
				VMs:        agreement.Int{Value: 0, State: agreement.Set, Pos: pos(18, 7), Path: path(`teams[dotted.name].vms`)},
				Flavors: []*agreement.Quota{{
					Flavor:     "h100",
					Pos:        pos(19, 30),
					Path:       path(`teams[dotted.name].flavors.h100`),
					Guaranteed: unsetInt(`teams[dotted.name].flavors.h100.guaranteed`),
					Lendable:   unsetInt(`teams[dotted.name].flavors.h100.lendable`),
					Borrow:     agreement.Int{Value: 4, State: agreement.Set, Pos: pos(20, 10), Path: path(`teams[dotted.name].flavors.h100.borrow`)},
				}},
			},
		},
		Topology: &agreement.Topology{
			Pos:    pos(21, 2),
			Path:   path("topology"),
			Levels: []agreement.Str{{Value: "kubernetes.io/hostname", State: agreement.Set, Pos: pos(22, 11), Path: path("topology.levels[0]")}},
		},
	}
	if diff := cmp.Diff(want, got, diagtest.Paths, cmpopts.IgnoreFields(agreement.Team{}, "ByFlavor", "Retiring", "Stewardship"),
		// TestDecodeGuardrails, TestDecodeComponents and TestDecodeKAI
		// cover those tables, TestDecodeStewardship owners and review_by.
		cmpopts.IgnoreFields(agreement.Agreement{}, "Guardrails", "Components", "KAI", "Stewardship"),
		// The capacity package's tests cover gpus_per_node and its default,
		// TestDecodeKAI node_pool and gpu_sharing.
		cmpopts.IgnoreFields(agreement.Flavor{}, "GPUsPerNode", "NodePool", "GPUSharing")); diff != "" {
		t.Errorf("Decode (-want,+got):\n%s", diff)
	}
	// ByFlavor resolves the shorthand to the one flavor, and points at the
	// quotas decoded, not copies.
	if len(got.Teams) == 2 {
		training, dotted := got.Teams[0], got.Teams[1]
		if q := training.ByFlavor["h100"]; q == nil || q != training.Shorthand || len(training.ByFlavor) != 1 {
			t.Errorf("training.ByFlavor = %v, want the shorthand under h100", training.ByFlavor)
		}
		if q := dotted.ByFlavor["h100"]; q == nil || q != dotted.Flavors[0] || len(dotted.ByFlavor) != 1 {
			t.Errorf("dotted.name.ByFlavor = %v, want its h100 table", dotted.ByFlavor)
		}
	}
}

// TestDecodeGuardrails: an absent [guardrails] table is all defaults, on;
// written keys are Set where they are, the rest Defaulted at the table.
func TestDecodeGuardrails(t *testing.T) {
	type summary struct {
		Queue, DefaultQueue, Quota, Network bool
		Enforce, Audit, Prune               string
		Allow                               []string
		States                              []agreement.State
		QueuePos                            agreement.Pos
	}
	sum := func(g *agreement.Guardrails) summary {
		s := summary{
			Queue: g.QueueAdmission.Value, DefaultQueue: g.DefaultQueue.Value, Quota: g.GPUQuota.Value,
			Network: g.NetworkIsolation.Value, Enforce: g.PodSecurity.Value, Audit: g.PodSecurityAudit.Value,
			Prune: g.NamespacePrune.Value, QueuePos: g.QueueAdmission.Pos,
			States: []agreement.State{g.QueueAdmission.State, g.PodSecurity.State, g.NamespacePrune.State},
		}
		for _, a := range g.AllowIngressFrom {
			s.Allow = append(s.Allow, a.Value)
		}
		return s
	}
	base := "version = 1\nname = \"p\"\n"
	tests := map[string]struct {
		src  string
		want summary
	}{
		"absent: everything on": {
			src: base,
			want: summary{Queue: true, Quota: true, Network: true, Enforce: "baseline", Audit: "restricted", Prune: "never",
				States: []agreement.State{agreement.Defaulted, agreement.Defaulted, agreement.Defaulted}, QueuePos: agreement.Pos{Line: 1, Column: 1}},
		},
		"tuned": {
			src: base + "[guardrails]\nqueue_admission = false\npod_security = \"restricted\"\nallow_ingress_from = [\"monitoring\"]\n",
			want: summary{Quota: true, Network: true, Enforce: "restricted", Audit: "restricted", Prune: "never", Allow: []string{"monitoring"},
				States: []agreement.State{agreement.Set, agreement.Set, agreement.Defaulted}, QueuePos: agreement.Pos{Line: 4, Column: 19}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a, diags := decodeSource(t, tc.src)
			if len(diags) > 0 {
				t.Fatalf("Decode: %s", diags)
			}
			if diff := cmp.Diff(tc.want, sum(a.Guardrails)); diff != "" {
				t.Errorf("guardrails (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestDecodeComponents: an absent [components] table is the upstream
// namespaces, Defaulted at the file's start; a written key is Set at its
// value, the others Defaulted at the table.
func TestDecodeComponents(t *testing.T) {
	base := "version = 1\nname = \"p\"\n"
	type ns struct {
		Value string
		State agreement.State
		Pos   agreement.Pos
	}
	tests := map[string]struct {
		src  string
		want []ns
	}{
		"absent: the upstream namespaces": {
			src: base,
			want: []ns{
				{"kueue-system", agreement.Defaulted, agreement.Pos{Line: 1, Column: 1}},
				{"kai-scheduler", agreement.Defaulted, agreement.Pos{Line: 1, Column: 1}},
				{"kai-resource-reservation", agreement.Defaulted, agreement.Pos{Line: 1, Column: 1}},
				{"argocd", agreement.Defaulted, agreement.Pos{Line: 1, Column: 1}},
			},
		},
		"a cluster that installed Kueue and Argo CD elsewhere": {
			src: base + "[components]\nkueue_namespace = \"kueue\"\nargocd_namespace = \"gitops\"\n",
			want: []ns{
				{"kueue", agreement.Set, agreement.Pos{Line: 4, Column: 19}},
				{"kai-scheduler", agreement.Defaulted, agreement.Pos{Line: 3, Column: 2}},
				{"kai-resource-reservation", agreement.Defaulted, agreement.Pos{Line: 3, Column: 2}},
				{"gitops", agreement.Set, agreement.Pos{Line: 5, Column: 20}},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a, diags := decodeSource(t, tc.src)
			if len(diags) > 0 {
				t.Fatalf("Decode: %s", diags)
			}
			var got []ns
			for _, s := range a.Components.Namespaces() {
				got = append(got, ns{s.Value, s.State, s.Pos})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("components (-want,+got):\n%s", diff)
			}
		})
	}
	if _, diags := decodeSource(t, base+"[components]\nkeuue_namespace = \"kueue\"\n"); len(diags) != 1 || !strings.Contains(diags[0].Message, `did you mean "kueue_namespace"`) {
		t.Errorf("a misspelt key: %v, want one unknown-key error with a suggestion", diags)
	}
}

// TestDecodePriorities: a priority is a value or a table with its value and
// preemptible; both forms mean the same when preemptible is left out.
func TestDecodePriorities(t *testing.T) {
	src := `[priorities]
high = 1000
low = { value = 10, preemptible = false }
[priorities.mid]
value = 100
`
	got, diags := decodeSource(t, src)
	if len(diags) > 0 {
		t.Fatalf("Decode: %s", diags)
	}
	pos := func(line, col int) agreement.Pos { return agreement.Pos{Line: line, Column: col} }
	path := field.NewPath
	want := []*agreement.Priority{{
		Name:        "high",
		Pos:         pos(2, 1),
		Path:        path("priorities.high"),
		Value:       agreement.Int{Value: 1000, State: agreement.Set, Pos: pos(2, 8), Path: path("priorities.high")},
		Preemptible: agreement.Bool{Value: true, State: agreement.Defaulted, Pos: pos(2, 1), Path: path("priorities.high.preemptible")},
	}, {
		Name:        "low",
		Pos:         pos(3, 1),
		Path:        path("priorities.low"),
		Value:       agreement.Int{Value: 10, State: agreement.Set, Pos: pos(3, 17), Path: path("priorities.low.value")},
		Preemptible: agreement.Bool{Value: false, State: agreement.Set, Pos: pos(3, 35), Path: path("priorities.low.preemptible")},
	}, {
		Name:        "mid",
		Pos:         pos(4, 13),
		Path:        path("priorities.mid"),
		Value:       agreement.Int{Value: 100, State: agreement.Set, Pos: pos(5, 9), Path: path("priorities.mid.value")},
		Preemptible: agreement.Bool{Value: true, State: agreement.Defaulted, Pos: pos(4, 13), Path: path("priorities.mid.preemptible")},
	}}
	if diff := cmp.Diff(want, got.Priorities, diagtest.Opts); diff != "" {
		t.Errorf("priorities (-want,+got):\n%s", diff)
	}
}

// TestDecodeBackend: the backend key is a list of names either way it is
// written, each name at its own position, the key's value at the key's.
func TestDecodeBackend(t *testing.T) {
	type name struct {
		Value string
		Pos   agreement.Pos
	}
	tests := map[string]struct {
		src       string
		wantState agreement.State
		wantPos   agreement.Pos
		want      []name
	}{
		"absent": {src: "version = 1\n", wantState: agreement.Unset},
		"one name": {
			src:       "backend = \"kueue\"\n",
			wantState: agreement.Set, wantPos: agreement.Pos{Line: 1, Column: 11},
			want: []name{{"kueue", agreement.Pos{Line: 1, Column: 11}}},
		},
		"a list, in the order written": {
			src:       "backend = [\"kai\", \"kueue\"]\n",
			wantState: agreement.Set, wantPos: agreement.Pos{Line: 1, Column: 11},
			want: []name{{"kai", agreement.Pos{Line: 1, Column: 12}}, {"kueue", agreement.Pos{Line: 1, Column: 19}}},
		},
		"not a string": {src: "backend = true\n", wantState: agreement.Invalid, wantPos: agreement.Pos{Line: 1, Column: 11}},
	}
	for label, tc := range tests {
		t.Run(label, func(t *testing.T) {
			a, _ := decodeSource(t, tc.src)
			var got []name
			for _, s := range a.Backend.Value {
				got = append(got, name{s.Value, s.Pos})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("names (-want,+got):\n%s", diff)
			}
			if a.Backend.State != tc.wantState || a.Backend.Pos != tc.wantPos {
				t.Errorf("state %v at %v, want %v at %v", a.Backend.State, a.Backend.Pos, tc.wantState, tc.wantPos)
			}
		})
	}
}

func TestDecodeStewardship(t *testing.T) {
	src := `version = 1
name = "gpu-pool"
owners = ["@acme/platform"]
review_by = 2027-01-15
[teams.a]
owners = ["@alice", "bob@example.com"]
`
	pos := func(line, col int) agreement.Pos { return agreement.Pos{Line: line, Column: col} }
	path := field.NewPath
	root, diags := load.Parse("tenancy.toml", []byte(src))
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	a, diags := agreement.Decode("tenancy.toml", root)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	want := []agreement.Stewardship{
		{
			Owners: agreement.Scalar[[]agreement.Str]{State: agreement.Set, Pos: pos(3, 10), Path: path("owners"),
				Value: []agreement.Str{{Value: "@acme/platform", State: agreement.Set, Pos: pos(3, 11), Path: path("owners[0]")}}},
			ReviewBy: agreement.Date{Value: time.Date(2027, 1, 15, 0, 0, 0, 0, time.UTC), State: agreement.Set, Pos: pos(4, 13), Path: path("review_by")},
		},
		{
			Owners: agreement.Scalar[[]agreement.Str]{State: agreement.Set, Pos: pos(6, 10), Path: path("teams.a.owners"),
				Value: []agreement.Str{
					{Value: "@alice", State: agreement.Set, Pos: pos(6, 11), Path: path("teams.a.owners[0]")},
					{Value: "bob@example.com", State: agreement.Set, Pos: pos(6, 21), Path: path("teams.a.owners[1]")},
				}},
			ReviewBy: agreement.Date{Path: path("teams.a.review_by")},
		},
	}
	got := []agreement.Stewardship{a.Stewardship, a.Teams[0].Stewardship}
	if diff := cmp.Diff(want, got, diagtest.Paths); diff != "" {
		t.Errorf("Stewardship (-want,+got):\n%s", diff)
	}
}

// TestDecodeKAI: [kai] and the flavors' node_pool and gpu_sharing. Absent,
// the label is KAI's default and sharing is off, Defaulted at the file's
// start; a flavor's pool is its name, Defaulted at its table; a flavor
// inherits [kai] gpu_sharing at the line that wrote it.
func TestDecodeKAI(t *testing.T) {
	base := "version = 1\nname = \"p\"\n"
	type str struct {
		Value string
		State agreement.State
		Pos   agreement.Pos
	}
	type summary struct {
		Label, Sharing str
		Pools, Shares  []str // per flavor
	}
	at := func(line, col int) agreement.Pos { return agreement.Pos{Line: line, Column: col} }
	tests := map[string]struct {
		src  string
		want summary
	}{
		"absent: KAI's label, no sharing, each pool its flavor's name": {
			src: base + "[flavors.h100]\ncapacity = 8\n",
			want: summary{
				Label:   str{"kai.scheduler/node-pool", agreement.Defaulted, at(1, 1)},
				Sharing: str{"none", agreement.Defaulted, at(1, 1)},
				Pools:   []str{{"h100", agreement.Defaulted, at(3, 10)}},
				Shares:  []str{{"none", agreement.Defaulted, at(3, 10)}},
			},
		},
		"the GPU operator's product label, sharing for all but one flavor": {
			src: base + "[kai]\nnode_pool_label = \"nvidia.com/gpu.product\"\ngpu_sharing = \"fraction\"\n" +
				"[flavors.h100]\ncapacity = 8\nnode_pool = \"NVIDIA-H100-80GB-HBM3\"\n" +
				"[flavors.a100]\ncapacity = 8\ngpu_sharing = \"none\"\n",
			want: summary{
				Label:   str{"nvidia.com/gpu.product", agreement.Set, at(4, 19)},
				Sharing: str{"fraction", agreement.Set, at(5, 15)},
				Pools:   []str{{"NVIDIA-H100-80GB-HBM3", agreement.Set, at(8, 13)}, {"a100", agreement.Defaulted, at(9, 10)}},
				Shares:  []str{{"fraction", agreement.Defaulted, at(5, 15)}, {"none", agreement.Set, at(11, 15)}},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a, diags := decodeSource(t, tc.src)
			if len(diags) > 0 {
				t.Fatalf("Decode: %s", diags)
			}
			of := func(s agreement.Str) str { return str{s.Value, s.State, s.Pos} }
			got := summary{Label: of(a.KAI.NodePoolLabel), Sharing: of(a.KAI.GPUSharing)}
			for _, f := range a.Flavors {
				got.Pools = append(got.Pools, of(f.NodePool))
				got.Shares = append(got.Shares, of(f.GPUSharing))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("[kai] (-want,+got):\n%s", diff)
			}
		})
	}
	if _, diags := decodeSource(t, base+"[kai]\ngpu_shareing = \"fraction\"\n"); len(diags) != 1 || !strings.Contains(diags[0].Message, `did you mean "gpu_sharing"`) {
		t.Errorf("a misspelt key: %v, want one unknown-key error with a suggestion", diags)
	}
}

package agreement_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator/agreement"
	"github.com/tenancy-dev/tenancy/generator/diag"
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

// decodeErr builds the error diagnostic Decode reports for tenancy.toml.
func decodeErr(line, col int, field, msg string) diag.Diagnostic {
	return diag.Diagnostic{Severity: diag.Error, File: "tenancy.toml", Line: line, Column: col, Field: field, Message: msg}
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
		"unknown key at the top": {
			src:  "version = 1\nnmae = \"pool\"\n",
			want: diag.List{decodeErr(2, 1, "nmae", `unknown key "nmae" (did you mean "name"?)`)},
		},
		"unknown key with no close match lists the known keys": {
			src:  "version = 1\ncluster = \"x\"\n",
			want: diag.List{decodeErr(2, 1, "cluster", `unknown key "cluster" (known keys: flavors, name, priorities, teams, topology, version)`)},
		},
		"unknown key in a flavor": {
			src:  "[flavors.h100]\ncapacty = 32\n",
			want: diag.List{decodeErr(2, 1, "flavors.h100.capacty", `unknown key "capacty" (did you mean "capacity"?)`)},
		},
		"unknown key in a toleration": {
			src:  "[flavors.h100]\ntolerations = [{ key = \"k\", efect = \"NoSchedule\" }]\n",
			want: diag.List{decodeErr(2, 29, "flavors.h100.tolerations[0].efect", `unknown key "efect" (did you mean "effect"?)`)},
		},
		"unknown key in an array-of-tables toleration": {
			src:  "[flavors.h100]\n[[flavors.h100.tolerations]]\nkey = \"k\"\n[[flavors.h100.tolerations]]\nvalu = \"v\"\n",
			want: diag.List{decodeErr(5, 1, "flavors.h100.tolerations[1].valu", `unknown key "valu" (did you mean "value"?)`)},
		},
		"unknown key in a team: lendible": {
			src:  "[teams.training]\nguaranteed = 16\nlendible = 8\n",
			want: diag.List{decodeErr(3, 1, "teams.training.lendible", `unknown key "lendible" (did you mean "lendable"?)`)},
		},
		"unknown key in a team's flavor quota": {
			src:  "[teams.training.flavors.h100]\nguaranteed = 16\nLendable = 8\n",
			want: diag.List{decodeErr(3, 1, "teams.training.flavors.h100.Lendable", `unknown key "Lendable" (did you mean "lendable"?)`)},
		},
		"unknown key in topology": {
			src:  "[topology]\nlevel = [\"kubernetes.io/hostname\"]\n",
			want: diag.List{decodeErr(2, 1, "topology.level", `unknown key "level" (did you mean "levels"?)`)},
		},
		"unknown keys are quoted in the path when they must be": {
			src:  "[teams.a]\n\"lend.able\" = 1\n",
			want: diag.List{decodeErr(2, 1, `teams.a."lend.able"`, `unknown key "lend.able" (did you mean "lendable"?)`)},
		},
		"string for an integer": {
			src: "version = \"1\"\n[flavors.h100]\ncapacity = \"32\"\n",
			want: diag.List{
				decodeErr(1, 11, "version", `must be an integer, got string "1"`),
				decodeErr(3, 12, "flavors.h100.capacity", `must be an integer, got string "32"`),
			},
		},
		"table for a string": {
			src:  "name = { pool = \"gpu\" }\n",
			want: diag.List{decodeErr(1, 8, "name", "must be a string, got table")},
		},
		"array for a string": {
			src:  "[teams.a]\nreclaim = [\"wait\"]\n",
			want: diag.List{decodeErr(2, 11, "teams.a.reclaim", "must be a string, got array")},
		},
		"integer for a string": {
			src:  "[flavors.h100]\nresource = 5\n",
			want: diag.List{decodeErr(2, 12, "flavors.h100.resource", "must be a string, got integer 5")},
		},
		"boolean for an integer": {
			src:  "[teams.a]\nvms = true\n",
			want: diag.List{decodeErr(2, 7, "teams.a.vms", "must be an integer, got boolean true")},
		},
		"date for an integer": {
			src:  "[teams.a]\nweight = 2026-01-01\n",
			want: diag.List{decodeErr(2, 10, "teams.a.weight", "must be an integer, got date-time 2026-01-01")},
		},
		"non-integer GPU count": {
			src:  "[teams.a]\nguaranteed = 8.5\n",
			want: diag.List{decodeErr(2, 14, "teams.a.guaranteed", "must be a whole number, got 8.5")},
		},
		"whole float GPU count": {
			src:  "[teams.a.flavors.h100]\nborrow = 8.0\n",
			want: diag.List{decodeErr(2, 10, "teams.a.flavors.h100.borrow", "must be an integer, got float 8.0 (write 8)")},
		},
		"infinite GPU count": {
			src:  "[flavors.h100]\ncapacity = inf\n",
			want: diag.List{decodeErr(2, 12, "flavors.h100.capacity", "must be a whole number, got inf")},
		},
		"huge float GPU count": {
			src:  "[flavors.h100]\ncapacity = 1e300\n",
			want: diag.List{decodeErr(2, 12, "flavors.h100.capacity", "must be a whole number, got 1e300")},
		},
		"string for a table": {
			src: "flavors = \"h100\"\nteams = 3\npriorities = []\ntopology = \"rack\"\n",
			want: diag.List{
				decodeErr(1, 11, "flavors", `must be a table, got string "h100"`),
				decodeErr(2, 9, "teams", "must be a table, got integer 3"),
				decodeErr(3, 14, "priorities", "must be a table, got array"),
				decodeErr(4, 12, "topology", `must be a table, got string "rack"`),
			},
		},
		"value for a flavor, a team and a team's flavor": {
			src: "[flavors]\nh100 = 32\n[teams]\na = 8\n[teams.b]\nflavors.h100 = 8\n",
			want: diag.List{
				decodeErr(2, 8, "flavors.h100", "must be a table, got integer 32"),
				decodeErr(4, 5, "teams.a", "must be a table, got integer 8"),
				decodeErr(6, 16, "teams.b.flavors.h100", "must be a table, got integer 8"),
			},
		},
		"string for an array": {
			src: "[teams.a]\nnamespaces = \"a\"\n[topology]\nlevels = \"kubernetes.io/hostname\"\n",
			want: diag.List{
				decodeErr(2, 14, "teams.a.namespaces", `must be an array of strings, got string "a"`),
				decodeErr(4, 10, "topology.levels", `must be an array of strings, got string "kubernetes.io/hostname"`),
			},
		},
		"wrong item types": {
			src: "[teams.a]\nnamespaces = [\"a\", 2, [\"c\"]]\n",
			want: diag.List{
				decodeErr(2, 20, "teams.a.namespaces[1]", "must be a string, got integer 2"),
				decodeErr(2, 23, "teams.a.namespaces[2]", "must be a string, got array"),
			},
		},
		"empty namespaces": {
			src:  "[teams.a]\nnamespaces = []\n",
			want: diag.List{decodeErr(2, 14, "teams.a.namespaces", `must list at least one namespace (leave it out to use ["a"])`)},
		},
		"tolerations not an array of tables": {
			src: "[flavors.h100]\ntolerations = { key = \"k\" }\n[flavors.a100]\ntolerations = [\"k\"]\n",
			want: diag.List{
				decodeErr(2, 15, "flavors.h100.tolerations", "must be an array of tables, got table"),
				decodeErr(4, 16, "flavors.a100.tolerations[0]", `must be a table, got string "k"`),
			},
		},
		"node label of the wrong type": {
			src:  "[flavors.h100]\nnode_labels = { \"nvidia.com/gpu.count\" = 8 }\n",
			want: diag.List{decodeErr(2, 42, `flavors.h100.node_labels."nvidia.com/gpu.count"`, "must be a string, got integer 8")},
		},
		"priority of the wrong type": {
			src:  "[priorities]\nhigh = \"1000\"\n",
			want: diag.List{decodeErr(2, 8, "priorities.high", `must be an integer, got string "1000"`)},
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
				decodeErr(1, 11, "version", `must be an integer, got string "1"`),
				decodeErr(2, 1, "naem", `unknown key "naem" (did you mean "name"?)`),
				decodeErr(4, 12, "flavors.h100.capacity", "must be a whole number, got 8.5"),
				decodeErr(6, 1, "teams.a.lendible", `unknown key "lendible" (did you mean "lendable"?)`),
				decodeErr(7, 14, "teams.a.guaranteed", `must be an integer, got string "8"`),
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, got := decodeSource(t, tc.src)
			got.Sort() // as the pipeline does: by position, whichever check found it
			if diff := cmp.Diff(tc.want, got); diff != "" {
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
	unsetInt := func(path string) agreement.Int { return agreement.Int{Path: path} }
	unsetStr := func(path string) agreement.Str { return agreement.Str{Path: path} }
	want := &agreement.Agreement{
		File:    "tenancy.toml",
		Version: agreement.Int{Value: 1, Set: true, Pos: pos(1, 11), Path: "version"},
		Name:    agreement.Str{Value: "gpu-pool", Set: true, Pos: pos(2, 8), Path: "name"},
		Flavors: []*agreement.Flavor{{
			Name:     "h100",
			Pos:      pos(3, 10),
			Path:     "flavors.h100",
			Resource: unsetStr("flavors.h100.resource"),
			Capacity: agreement.Int{Value: 32, Set: true, Pos: pos(4, 12), Path: "flavors.h100.capacity"},
			NodeLabels: []agreement.Label{{
				Key:   "nvidia.com/gpu.product",
				Value: agreement.Str{Value: "H100", Set: true, Pos: pos(5, 17), Path: `flavors.h100.node_labels."nvidia.com/gpu.product"`},
			}},
			Tolerations: []*agreement.Toleration{{
				Pos:      pos(6, 16),
				Path:     "flavors.h100.tolerations[0]",
				Key:      agreement.Str{Value: "nvidia.com/gpu", Set: true, Pos: pos(7, 7), Path: "flavors.h100.tolerations[0].key"},
				Operator: agreement.Str{Value: "Exists", Set: true, Pos: pos(8, 12), Path: "flavors.h100.tolerations[0].operator"},
				Value:    unsetStr("flavors.h100.tolerations[0].value"),
				Effect:   unsetStr("flavors.h100.tolerations[0].effect"),
			}},
		}},
		Priorities: []*agreement.Priority{{
			Name:  "high",
			Value: agreement.Int{Value: 1000, Set: true, Pos: pos(10, 8), Path: "priorities.high"},
		}},
		Teams: []*agreement.Team{
			{
				Name:    "training",
				Pos:     pos(11, 8),
				Path:    "teams.training",
				Reclaim: unsetStr("teams.training.reclaim"),
				Weight:  unsetInt("teams.training.weight"),
				VMs:     unsetInt("teams.training.vms"),
				Shorthand: &agreement.Quota{
					Pos:        pos(11, 8),
					Path:       "teams.training",
					Guaranteed: agreement.Int{Value: 16, Set: true, Pos: pos(12, 14), Path: "teams.training.guaranteed"},
					Lendable:   agreement.Int{Value: 8, Set: true, Pos: pos(13, 12), Path: "teams.training.lendable"},
					Borrow:     unsetInt("teams.training.borrow"),
				},
			},
			{
				Name:            "dotted.name",
				Pos:             pos(14, 8),
				Path:            `teams."dotted.name"`,
				Namespaces:      []agreement.Str{{Value: "x", Set: true, Pos: pos(15, 15), Path: `teams."dotted.name".namespaces[0]`}},
				NamespacesField: agreement.Str{Set: true, Pos: pos(15, 1), Path: `teams."dotted.name".namespaces`},
				Reclaim:         agreement.Str{Value: "wait", Set: true, Pos: pos(16, 11), Path: `teams."dotted.name".reclaim`},
				Weight:          agreement.Int{Value: 2, Set: true, Pos: pos(17, 10), Path: `teams."dotted.name".weight`},
				VMs:             agreement.Int{Value: 0, Set: true, Pos: pos(18, 7), Path: `teams."dotted.name".vms`},
				Flavors: []*agreement.Quota{{
					Flavor:     "h100",
					Pos:        pos(19, 30),
					Path:       `teams."dotted.name".flavors.h100`,
					Guaranteed: unsetInt(`teams."dotted.name".flavors.h100.guaranteed`),
					Lendable:   unsetInt(`teams."dotted.name".flavors.h100.lendable`),
					Borrow:     agreement.Int{Value: 4, Set: true, Pos: pos(20, 10), Path: `teams."dotted.name".flavors.h100.borrow`},
				}},
			},
		},
		Topology: &agreement.Topology{
			Pos:    pos(21, 2),
			Path:   "topology",
			Levels: []agreement.Str{{Value: "kubernetes.io/hostname", Set: true, Pos: pos(22, 11), Path: "topology.levels[0]"}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Decode (-want,+got):\n%s", diff)
	}
}

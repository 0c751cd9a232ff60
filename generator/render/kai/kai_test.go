package kai_test

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/encode"
	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/internal/crdcheck"
	"github.com/tenancy-dev/tenancy/generator/internal/diagtest"
	"github.com/tenancy-dev/tenancy/generator/internal/examples"
	"github.com/tenancy-dev/tenancy/generator/internal/plantest"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render"
	"github.com/tenancy-dev/tenancy/generator/render/kai"
)

// queue is what a Queue says, in one line a case can spell out.
type queue struct {
	Parent       string
	Quota, Limit int64
	Weight       int64
}

func (q queue) String() string {
	return fmt.Sprintf("parent=%q quota=%d limit=%d weight=%d", q.Parent, q.Quota, q.Limit, q.Weight)
}

// queues renders a plan and returns its Queues by name, checking on the way
// that cpu and memory are unlimited and nothing else is.
func queues(t *testing.T, p *plan.Agreement) map[string]queue {
	t.Helper()
	out := map[string]queue{}
	for _, o := range rendered(t, p, "Queue") {
		var q struct {
			Spec struct {
				ParentQueue string `json:"parentQueue"`
				Resources   map[string]struct {
					Quota, Limit, OverQuotaWeight int64
				} `json:"resources"`
			} `json:"spec"`
		}
		// Only the spec matters here; TestConformsToKAI checks the rest
		// against the CRD.
		if err := yaml.Unmarshal(o.YAML, &q); err != nil {
			t.Fatal(err)
		}
		for _, r := range []string{"cpu", "memory"} {
			if got := q.Spec.Resources[r]; got.Quota != -1 || got.Limit != -1 {
				t.Errorf("queue %s: %s quota %d limit %d, want -1 (unlimited): the agreement is about GPUs", o.Name(), r, got.Quota, got.Limit)
			}
		}
		g := q.Spec.Resources["gpu"]
		out[o.Name()] = queue{Parent: q.Spec.ParentQueue, Quota: g.Quota, Limit: g.Limit, Weight: g.OverQuotaWeight}
	}
	return out
}

// rendered renders a plan that must render without diagnostics, encodes it
// as tenancy writes it, and returns the objects of one kind.
func rendered(t *testing.T, p *plan.Agreement, kind string) []generator.Object {
	t.Helper()
	objs, diags := kai.Renderer{}.Render(p)
	if len(diags) > 0 {
		t.Fatalf("render: %v", diags)
	}
	encoded, _, err := encode.Encode(objs)
	if err != nil {
		t.Fatal(err)
	}
	var out []generator.Object
	for _, o := range encoded {
		if o.Kind() == kind {
			out = append(out, o)
		}
	}
	return out
}

func TestQueueTree(t *testing.T) {
	tests := map[string]struct {
		plan *plan.Agreement
		want map[string]queue
	}{
		"reference agreement: inference is never lent": {
			plan: plantest.Pool([]plan.Flavor{plantest.H100(32)},
				plantest.Team("training", plantest.Quota("h100", 16, 8, 8)),
				plantest.Team("research", plantest.Quota("h100", 8, 8, 8)),
				plantest.Team("inference", plantest.Quota("h100", 8, 0, 0))),
			want: map[string]queue{
				"gpu-pool": {Quota: 32, Limit: 32, Weight: 1},
				// Everything but inference's 8 guaranteed GPUs.
				"gpu-pool-shared": {Parent: "gpu-pool", Quota: 24, Limit: 24, Weight: 1},
				"training":        {Parent: "gpu-pool-shared", Quota: 16, Limit: 24, Weight: 1},
				"research":        {Parent: "gpu-pool-shared", Quota: 8, Limit: 16, Weight: 1},
				// Limit equals quota: the subtree never grows into others'
				// GPUs, and the shared subtree's limit keeps its GPUs free.
				"gpu-pool-reserved": {Parent: "gpu-pool", Quota: 8, Limit: 8},
				"inference":         {Parent: "gpu-pool-reserved", Quota: 8, Limit: 8, Weight: 1},
			},
		},
		"everyone lends: no reserved subtree, the shared one may use the whole pool": {
			plan: plantest.Pool([]plan.Flavor{plantest.H100(16)},
				plantest.Team("a", plantest.Quota("h100", 8, 8, 8)),
				plantest.Team("b", plantest.Quota("h100", 4, 2, 0))),
			want: map[string]queue{
				"gpu-pool":        {Quota: 12, Limit: 16, Weight: 1},
				"gpu-pool-shared": {Parent: "gpu-pool", Quota: 12, Limit: 16, Weight: 1},
				"a":               {Parent: "gpu-pool-shared", Quota: 8, Limit: 16, Weight: 1},
				"b":               {Parent: "gpu-pool-shared", Quota: 4, Limit: 4, Weight: 1},
			},
		},
		"nobody lends: no shared subtree": {
			plan: plantest.Pool([]plan.Flavor{plantest.H100(16)},
				plantest.Team("a", plantest.Quota("h100", 8, 0, 0)),
				plantest.Team("b", plantest.Quota("h100", 8, 0, 0))),
			want: map[string]queue{
				"gpu-pool":          {Quota: 16, Limit: 16, Weight: 1},
				"gpu-pool-reserved": {Parent: "gpu-pool", Quota: 16, Limit: 16},
				"a":                 {Parent: "gpu-pool-reserved", Quota: 8, Limit: 8, Weight: 1},
				"b":                 {Parent: "gpu-pool-reserved", Quota: 8, Limit: 8, Weight: 1},
			},
		},
		"a pure borrower: quota 0, limit what it may borrow": {
			plan: plantest.Pool([]plan.Flavor{plantest.H100(8)},
				plantest.Team("owner", plantest.Quota("h100", 8, 8, 0)),
				plantest.Team("guest", plantest.Quota("h100", 0, 0, 4))),
			want: map[string]queue{
				"gpu-pool":        {Quota: 8, Limit: 8, Weight: 1},
				"gpu-pool-shared": {Parent: "gpu-pool", Quota: 8, Limit: 8, Weight: 1},
				"owner":           {Parent: "gpu-pool-shared", Quota: 8, Limit: 8, Weight: 1},
				"guest":           {Parent: "gpu-pool-shared", Quota: 0, Limit: 4, Weight: 1},
			},
		},
		"a team with really no GPUs has limit 0, KAI's hard zero": {
			plan: plantest.Pool([]plan.Flavor{plantest.H100(8)},
				plantest.Team("owner", plantest.Quota("h100", 8, 8, 0)),
				plantest.Team("nobody", plantest.Quota("h100", 0, 0, 0))),
			want: map[string]queue{
				"gpu-pool":        {Quota: 8, Limit: 8, Weight: 1},
				"gpu-pool-shared": {Parent: "gpu-pool", Quota: 8, Limit: 8, Weight: 1},
				"owner":           {Parent: "gpu-pool-shared", Quota: 8, Limit: 8, Weight: 1},
				"nobody":          {Parent: "gpu-pool-shared", Quota: 0, Limit: 0, Weight: 1},
			},
		},
		"a never-lending team that may borrow still gets limit = quota": {
			plan: plantest.Pool([]plan.Flavor{plantest.H100(16)},
				plantest.Team("a", plantest.Quota("h100", 8, 8, 0)),
				plantest.Team("b", plantest.Quota("h100", 8, 0, 4))),
			want: map[string]queue{
				"gpu-pool":          {Quota: 16, Limit: 16, Weight: 1},
				"gpu-pool-shared":   {Parent: "gpu-pool", Quota: 8, Limit: 8, Weight: 1},
				"a":                 {Parent: "gpu-pool-shared", Quota: 8, Limit: 8, Weight: 1},
				"gpu-pool-reserved": {Parent: "gpu-pool", Quota: 8, Limit: 8},
				"b":                 {Parent: "gpu-pool-reserved", Quota: 8, Limit: 8, Weight: 1},
			},
		},
		"weights": {
			plan: func() *plan.Agreement {
				heavy := plantest.Team("heavy", plantest.Quota("h100", 4, 4, 4))
				heavy.Weight = 3
				return plantest.Pool([]plan.Flavor{plantest.H100(8)}, heavy, plantest.Team("light", plantest.Quota("h100", 4, 4, 4)))
			}(),
			want: map[string]queue{
				"gpu-pool":        {Quota: 8, Limit: 8, Weight: 1},
				"gpu-pool-shared": {Parent: "gpu-pool", Quota: 8, Limit: 8, Weight: 1},
				"heavy":           {Parent: "gpu-pool-shared", Quota: 4, Limit: 8, Weight: 3},
				"light":           {Parent: "gpu-pool-shared", Quota: 4, Limit: 8, Weight: 1},
			},
		},
		"a pool per flavor held, each counted alone, a MIG 1g slice as one GPU as KAI counts it": {
			plan: plantest.Pool([]plan.Flavor{plantest.H100(16), plantest.A100(8), plantest.MIG(56)},
				plantest.Team("a", plantest.Quota("h100", 8, 4, 4), plantest.Quota("a100", 4, 4, 0), plantest.Quota("a100-mig", 28, 0, 0)),
				plantest.Team("b", plantest.Quota("h100", 8, 0, 0), plantest.Quota("a100-mig", 28, 14, 14))),
			want: map[string]queue{
				// b never lends its H100s, a never lends its slices:
				// each is reserved in that pool alone.
				"gpu-pool-h100":          {Quota: 16, Limit: 16, Weight: 1},
				"gpu-pool-h100-shared":   {Parent: "gpu-pool-h100", Quota: 8, Limit: 8, Weight: 1},
				"a-h100":                 {Parent: "gpu-pool-h100-shared", Quota: 8, Limit: 12, Weight: 1},
				"gpu-pool-h100-reserved": {Parent: "gpu-pool-h100", Quota: 8, Limit: 8},
				"b-h100":                 {Parent: "gpu-pool-h100-reserved", Quota: 8, Limit: 8, Weight: 1},
				// b holds no A100: no queue of its in that pool.
				"gpu-pool-a100":              {Quota: 4, Limit: 8, Weight: 1},
				"gpu-pool-a100-shared":       {Parent: "gpu-pool-a100", Quota: 4, Limit: 8, Weight: 1},
				"a-a100":                     {Parent: "gpu-pool-a100-shared", Quota: 4, Limit: 4, Weight: 1},
				"gpu-pool-a100-mig":          {Quota: 56, Limit: 56, Weight: 1},
				"gpu-pool-a100-mig-shared":   {Parent: "gpu-pool-a100-mig", Quota: 28, Limit: 28, Weight: 1},
				"b-a100-mig":                 {Parent: "gpu-pool-a100-mig-shared", Quota: 28, Limit: 42, Weight: 1},
				"gpu-pool-a100-mig-reserved": {Parent: "gpu-pool-a100-mig", Quota: 28, Limit: 28},
				"a-a100-mig":                 {Parent: "gpu-pool-a100-mig-reserved", Quota: 28, Limit: 28, Weight: 1},
			},
		},
		"a team with MIG quota only has no H100 queue": {
			plan: plantest.Pool([]plan.Flavor{plantest.H100(8), plantest.MIG(14)},
				plantest.Team("gpus", plantest.Quota("h100", 8, 8, 0)),
				plantest.Team("slices", plantest.Quota("a100-mig", 14, 7, 0))),
			want: map[string]queue{
				"gpu-pool-h100":            {Quota: 8, Limit: 8, Weight: 1},
				"gpu-pool-h100-shared":     {Parent: "gpu-pool-h100", Quota: 8, Limit: 8, Weight: 1},
				"gpus-h100":                {Parent: "gpu-pool-h100-shared", Quota: 8, Limit: 8, Weight: 1},
				"gpu-pool-a100-mig":        {Quota: 14, Limit: 14, Weight: 1},
				"gpu-pool-a100-mig-shared": {Parent: "gpu-pool-a100-mig", Quota: 14, Limit: 14, Weight: 1},
				"slices-a100-mig":          {Parent: "gpu-pool-a100-mig-shared", Quota: 14, Limit: 14, Weight: 1},
			},
		},
		"a 3g slice counts three GPUs; a resource KAI does not count, none": {
			plan: plantest.Pool([]plan.Flavor{
				{Name: "mig3", Resource: "nvidia.com/mig-3g.20gb", Capacity: 4},
				{Name: "amd", Resource: "amd.com/gpu", Capacity: 8}},
				plantest.Team("a", plantest.Quota("mig3", 2, 2, 1), plantest.Quota("amd", 8, 8, 0)),
				plantest.Team("b", plantest.Quota("mig3", 2, 0, 0))),
			want: map[string]queue{
				"gpu-pool":          {Quota: 12, Limit: 12, Weight: 1},
				"gpu-pool-shared":   {Parent: "gpu-pool", Quota: 6, Limit: 6, Weight: 1},
				"a":                 {Parent: "gpu-pool-shared", Quota: 6, Limit: 9, Weight: 1},
				"gpu-pool-reserved": {Parent: "gpu-pool", Quota: 6, Limit: 6},
				"b":                 {Parent: "gpu-pool-reserved", Quota: 6, Limit: 6, Weight: 1},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := queues(t, tc.plan)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("queues (-want,+got):\n%s", diff)
			}
		})
	}
}

// rules runs every check of the KAI backend's render over a TOML agreement
// (the agreement's own rules and each family's Check on the plan), as
// generator.Check does for --backend kai.
func rules(t *testing.T, src string) diag.List {
	t.Helper()
	_, warnings, err := generator.Check(generator.Source{Path: "tenancy.toml", Data: []byte(src)}, generator.Options{Backend: generator.KAI})
	var ae *generator.AgreementError
	if errors.As(err, &ae) {
		return ae.Diagnostics
	} else if err != nil {
		t.Fatal(err)
	}
	return warnings
}

// pool is the start of the rule cases: lines 1-4, one flavor of 16 GPUs.
const pool = `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 16
`

// ruleCase is an agreement and every diagnostic the KAI checks report on it.
type ruleCase struct {
	src  string
	want diag.List
}

// checkRules compares each case's diagnostics, and checks that every one
// says it comes from the KAI backend.
func checkRules(t *testing.T, tests map[string]ruleCase) {
	t.Helper()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := rules(t, tc.src)
			if diff := diagtest.Diff(t, tc.want, got); diff != "" {
				t.Errorf("diagnostics (-want,+got):\n%s", diff)
			}
			for _, d := range got {
				if !strings.HasPrefix(d.Message, "kai: ") {
					t.Errorf("%s: want a message starting with \"kai: \"", d)
				}
			}
		})
	}
}

// warn is what KAI cannot express exactly, at tenancy.toml:line:col.
func warn(line, col int, path string) diag.Diagnostic {
	return diagtest.Warning("tenancy.toml", line, col, path, field.ErrorTypeNotSupported)
}

// TestRules: what KAI cannot express is a warning, what it refuses an
// error, each at the value it is about (the line and column of the value,
// the field path of the key the user wrote).
func TestRules(t *testing.T) {
	tests := map[string]ruleCase{
		"exactly expressible: nothing to say": {
			src: pool + "[teams.a]\nguaranteed = 8\nlendable = 8\nborrow = 8\n[teams.b]\nguaranteed = 8\nlendable = 8\n",
		},
		"partly lendable: KAI lends all idle GPUs": {
			src:  pool + "[teams.a]\nguaranteed = 16\nlendable = 8\n",
			want: diag.List{warn(7, 12, "teams.a.lendable")},
		},
		"partly lendable, per flavor: the flavor's lendable": {
			src:  pool + "[teams.a.flavors.h100]\nguaranteed = 16\nlendable = 8\n",
			want: diag.List{warn(7, 12, "teams.a.flavors.h100.lendable")},
		},
		"reclaim wait: KAI always preempts": {
			src:  pool + "[teams.a]\nguaranteed = 16\nlendable = 16\nreclaim = \"wait\"\n",
			want: diag.List{warn(8, 11, "teams.a.reclaim")},
		},
		"a never-lending team that may borrow cannot": {
			src:  pool + "[teams.a]\nguaranteed = 8\nlendable = 8\n[teams.b]\nguaranteed = 8\nborrow = 4\n",
			want: diag.List{warn(10, 10, "teams.b.borrow")},
		},
		"a resource KAI does not count": {
			src: pool + "[flavors.amd]\nresource = \"amd.com/gpu\"\ncapacity = 8\n" +
				"[teams.a.flavors.h100]\nguaranteed = 8\nlendable = 8\n[teams.a.flavors.amd]\nguaranteed = 8\nlendable = 8\n",
			want: diag.List{warn(6, 12, "flavors.amd.resource")},
		},
		"a MIG flavor beside whole GPUs: a pool each, nothing to say": {
			src: pool + "[flavors.mig]\nresource = \"nvidia.com/mig-1g.10gb\"\ncapacity = 56\n" +
				"[teams.a.flavors.h100]\nguaranteed = 8\nlendable = 8\n[teams.a.flavors.mig]\nguaranteed = 28\nlendable = 28\n" +
				"[teams.b.flavors.mig]\nborrow = 4\n[teams.c]\n",
		},
		"partly lendable and reclaim wait in two pools: the numbers once per pool, wait once": {
			src: pool + "[flavors.a100]\ncapacity = 8\n" +
				"[teams.a]\nreclaim = \"wait\"\n[teams.a.flavors.h100]\nguaranteed = 8\nlendable = 4\n[teams.a.flavors.a100]\nguaranteed = 8\nlendable = 2\n",
			want: diag.List{
				warn(8, 11, "teams.a.reclaim"),
				warn(11, 12, "teams.a.flavors.h100.lendable"),
				warn(14, 12, "teams.a.flavors.a100.lendable"),
			},
		},
		"two pools of one value: refused": {
			src: pool + "node_pool = \"gpu\"\n[flavors.a100]\ncapacity = 8\nnode_pool = \"gpu\"\n" +
				"[teams.a.flavors.h100]\nguaranteed = 8\nlendable = 8\n[teams.a.flavors.a100]\nguaranteed = 8\nlendable = 8\n",
			want: diag.List{diagtest.Error("tenancy.toml", 8, 13, "flavors.a100.node_pool", field.ErrorTypeDuplicate)},
		},
		"a pool named like KAI's default shard: refused": {
			src: pool + "[flavors.default]\ncapacity = 8\n" +
				"[teams.a.flavors.h100]\nguaranteed = 8\nlendable = 8\n[teams.a.flavors.default]\nguaranteed = 8\nlendable = 8\n",
			want: diag.List{diagtest.Error("tenancy.toml", 5, 10, "flavors.default", field.ErrorTypeDuplicate)},
		},
		"a pool's queue name longer than a label value: refused": {
			src: pool + "[flavors.a100-sxm4-80gb-nvlink-eight-way]\ncapacity = 8\n" +
				"[teams.a.flavors.h100]\nguaranteed = 8\nlendable = 8\n" +
				"[teams.research-and-development-of-large-models.flavors.a100-sxm4-80gb-nvlink-eight-way]\nguaranteed = 8\nlendable = 8\n",
			want: diag.List{diagtest.Error("tenancy.toml", 10, 8, "teams.research-and-development-of-large-models", field.ErrorTypeTooLong)},
		},
		"quotas on one flavor beside another nobody holds: warned, not refused": {
			src: pool + "[flavors.a100]\ncapacity = 8\n" +
				"[teams.a.flavors.h100]\nguaranteed = 8\nlendable = 8\n",
			want: diag.List{warn(7, 8, "teams.a")},
		},
		"a flavor nobody holds in the one pool's value: warned": {
			src: pool + "[flavors.a100]\ncapacity = 8\nnode_pool = \"h100\"\n" +
				"[teams.a.flavors.h100]\nguaranteed = 8\nlendable = 8\n",
			want: diag.List{
				diagtest.Warning("tenancy.toml", 7, 13, "flavors.a100.node_pool", field.ErrorTypeDuplicate),
				warn(8, 8, "teams.a"),
			},
		},
		"a MIG count beyond what KAI's float quotas hold": {
			src: `version = 1
name = "gpu-pool"
[flavors.mig]
resource = "nvidia.com/mig-7g.80gb"
capacity = 9_007_199_254_740_992
[teams.a]
guaranteed = 8
lendable = 8
`,
			want: diag.List{diagtest.Error("tenancy.toml", 5, 12, "flavors.mig.capacity", field.ErrorTypeInvalid)},
		},
		"a team named like a subtree": {
			src:  pool + "[teams.gpu-pool-shared]\nguaranteed = 8\nlendable = 8\n[teams.b]\nguaranteed = 8\nlendable = 8\n",
			want: diag.List{diagtest.Error("tenancy.toml", 5, 8, "teams.gpu-pool-shared", field.ErrorTypeDuplicate)},
		},
		"a team named like the pool": {
			src:  pool + "[teams.gpu-pool]\nguaranteed = 8\nlendable = 8\n",
			want: diag.List{diagtest.Error("tenancy.toml", 5, 8, "teams.gpu-pool", field.ErrorTypeDuplicate)},
		},
		"a priority name Kubernetes reserves": {
			src:  pool + "[priorities]\nsystem-high = 90\nhigh = 10\n[teams.a]\nguaranteed = 8\nlendable = 8\n",
			want: diag.List{diagtest.Error("tenancy.toml", 6, 15, "priorities.system-high", field.ErrorTypeForbidden)},
		},
		"a priority above what Kubernetes accepts is renumbered into KAI's band": {
			src:  pool + "[priorities]\nsystem = 2_000_000_000\n[teams.a]\nguaranteed = 8\nlendable = 8\n",
			want: diag.List{warn(6, 10, "priorities.system")},
		},
		"priorities already in KAI's bands: nothing to say": {
			src:  pool + "[priorities]\nbuild = { value = 100, preemptible = false }\ntrain = 50\n[teams.a]\nguaranteed = 8\nlendable = 8\n",
			want: nil,
		},
		"preemptible priorities at 100 and above: renumbered, said once": {
			src:  pool + "[priorities]\ncritical = 1000\nstandard = 100\nscavenger = 10\n[teams.a]\nguaranteed = 8\nlendable = 8\n",
			want: diag.List{warn(6, 12, "priorities.critical")},
		},
		"a non-preemptible priority below 100: renumbered": {
			src:  pool + "[priorities]\ncritical = { value = 50, preemptible = false }\nscavenger = 10\n[teams.a]\nguaranteed = 8\nlendable = 8\n",
			want: diag.List{warn(6, 22, "priorities.critical.value")},
		},
		"a preemptible priority above a non-preemptible one: refused": {
			src:  pool + "[priorities]\nurgent = 2000\nprod = { value = 1000, preemptible = false }\n[teams.a]\nguaranteed = 8\nlendable = 8\n",
			want: diag.List{diagtest.Error("tenancy.toml", 6, 10, "priorities.urgent", field.ErrorTypeInvalid)},
		},
		"two non-preemptible priorities: the lower is never preempted for the higher": {
			src: pool + "[priorities]\ncritical = { value = 1000, preemptible = false }\nprod = { value = 500, preemptible = false }\nbatch = 10\n" +
				"[teams.a]\nguaranteed = 8\nlendable = 8\n",
			want: diag.List{warn(7, 18, "priorities.prod.value")},
		},
	}
	checkRules(t, tests)
}

// TestRulesInlineAgreement: an agreement without a path (the KRM function's
// inline spec.agreement) is named like the rest of the pipeline names it,
// in KAI's warnings too.
func TestRulesInlineAgreement(t *testing.T) {
	_, err := generator.Render(generator.Source{Data: []byte(pool + "[teams.a]\nguaranteed = 16\nlendable = 8\nlendible = 1\n")}, generator.Options{Backend: generator.KAI})
	var aerr *generator.AgreementError
	if !errors.As(err, &aerr) {
		t.Fatalf("want an AgreementError, got %v", err)
	}
	want := diag.List{
		diagtest.Warning("tenancy.toml", 7, 12, "teams.a.lendable", field.ErrorTypeNotSupported),
		diagtest.Error("tenancy.toml", 8, 1, "teams.a.lendible", field.ErrorTypeNotSupported),
	}
	if diff := diagtest.Diff(t, want, aerr.Diagnostics); diff != "" {
		t.Errorf("diagnostics (-want,+got):\n%s", diff)
	}
}

// --- Every agreement in the repository, through the whole pipeline. ---

// kaiCRDFiles are KAI Scheduler v0.17.0's CRDs, as shared/crds/kai/ holds
// them.
var kaiCRDFiles = []string{
	"scheduling.run.ai_queues.yaml",
	"scheduling.run.ai_podgroups.yaml",
	"kai.scheduler_topologies.yaml",
}

// kaiCRDs loads KAI's CRDs, by kind, from ../shared/crds/kai/ beside the
// repository (KAI's Go module is not reachable here). It fails, rather than
// skips, when they are absent or broken: CI always has shared/ next to the
// clone, and a skipped conformance test passes silently. All are loaded,
// even those of kinds the renderer does not emit, so that a damaged shared/
// is noticed.
func kaiCRDs(t *testing.T) map[string]*crdcheck.CRD {
	t.Helper()
	dir := filepath.Join(examples.Root(t), "..", "shared", "crds", "kai")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("KAI's CRDs are expected in %s: KAI Scheduler v0.17.0's CRDs from shared/, the folder beside the repository clone (CI always has it): %v", dir, err)
	}
	crds := map[string]*crdcheck.CRD{}
	for _, name := range kaiCRDFiles {
		crd, err := crdcheck.Load(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("KAI Scheduler v0.17.0's CRDs from shared/crds/kai/: %v", err)
		}
		crds[crd.Kind] = crd
	}
	if crds["Queue"] == nil {
		t.Fatalf("no Queue CRD among %v in %s", kaiCRDFiles, dir)
	}
	crds["SchedulingShard"] = schedulingShardCRD(t)
	return crds
}

// SchedulingShardGVK is how TestConformsToKAI's switch names the kind.
const SchedulingShardGVK = kai.SchedulingShardAPIVersion + "/" + kai.SchedulingShardKind

// kaiSource is KAI Scheduler v0.17.0's release tarball in shared/src/, the
// source the KAI suite builds from.
const kaiSource = "kai-scheduler-v0.17.0.tar.gz"

// schedulingShardCRD reads the SchedulingShard CRD from KAI's source
// tarball (deployments/kai-scheduler/crds/), which shared/crds/kai/ does
// not hold: the same file the KAI suite installs, read where it is rather
// than copied into the repository. Like kaiCRDs it fails when the tarball
// is absent.
func schedulingShardCRD(t *testing.T) *crdcheck.CRD {
	t.Helper()
	path := filepath.Join(examples.Root(t), "..", "shared", "src", kaiSource)
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("KAI's source is expected at %s (shared/src/, beside the repository clone; CI always has it): %v", path, err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !strings.HasSuffix(h.Name, "/deployments/kai-scheduler/crds/kai.scheduler_schedulingshards.yaml") {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("%s: %s: %v", path, h.Name, err)
		}
		crd, err := crdcheck.Parse(data)
		if err != nil {
			t.Fatalf("%s: %s: %v", path, h.Name, err)
		}
		return crd
	}
	t.Fatalf("%s holds no deployments/kai-scheduler/crds/kai.scheduler_schedulingshards.yaml", path)
	return nil
}

// conformCRD checks an object against its CRD as the API server would, and
// that it leaves no default for the API server to add (Argo CD would see
// drift).
func conformCRD(t *testing.T, crd *crdcheck.CRD, o generator.Object) {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal(o.YAML, &obj); err != nil {
		t.Fatal(err)
	}
	for _, e := range crd.Validate(obj) {
		t.Errorf("%s %s: CRD: %v", o.Kind(), o.Name(), e)
	}
	missing, err := crd.MissingDefaults(obj)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range missing {
		t.Errorf("%s %s: %s has a default the API server would add", o.Kind(), o.Name(), m)
	}
}

func validateMeta(t *testing.T, o generator.Object, meta metav1.ObjectMeta, namespaced bool, nameFn apivalidation.ValidateNameFunc) {
	t.Helper()
	errs := apivalidation.ValidateObjectMeta(&meta, namespaced, nameFn, field.NewPath("metadata"))
	errs = append(errs, metav1validation.ValidateLabels(meta.Labels, field.NewPath("metadata", "labels"))...)
	for _, e := range errs {
		t.Errorf("%s %s/%s: %v", o.Kind(), o.Namespace(), o.Name(), e)
	}
	if meta.Labels[render.ManagedByLabel] != render.ManagedBy {
		t.Errorf("%s %s: no label %s=%s", o.Kind(), o.Name(), render.ManagedByLabel, render.ManagedBy)
	}
}

// TestConformsToKAI checks every object of every agreement: Queues against
// KAI's CRD with the API server's own validators (structural schema,
// pruning, defaulting and CEL rules);
// PriorityClasses, Namespaces and ResourceQuotas by decoding them strictly
// into the core API's Go types and validating their metadata.
func TestConformsToKAI(t *testing.T) {
	crds := kaiCRDs(t)
	for path, part := range examples.Parts(t) {
		if part.Manager {
			continue // KAI has no multi-cluster dispatch: a fleet's manager is Kueue's
		}
		t.Run(path, func(t *testing.T) {
			res, err := generator.Render(part.Source, part.Options(generator.Options{Backend: generator.KAI}))
			if err != nil {
				t.Fatal(err)
			}
			teamOf := map[string]bool{}
			for _, tm := range res.Plan.Teams {
				teamOf[tm.Name] = true
			}
			for _, o := range res.Objects {
				switch o.APIVersion() + "/" + o.Kind() {
				case kai.QueueAPIVersion + "/Queue":
					conformCRD(t, crds["Queue"], o)
					var meta struct {
						Metadata metav1.ObjectMeta `json:"metadata"`
					}
					if err := yaml.Unmarshal(o.YAML, &meta); err != nil {
						t.Fatal(err)
					}
					validateMeta(t, o, meta.Metadata, false, apivalidation.NameIsDNSSubdomain)
				case "scheduling.k8s.io/v1/PriorityClass":
					var pc schedulingv1.PriorityClass
					if crdcheck.Strict(t, o, o.YAML, &pc) {
						validateMeta(t, o, pc.ObjectMeta, false, apivalidation.NameIsDNSSubdomain)
						if strings.HasPrefix(pc.Name, "system-") {
							t.Errorf("PriorityClass %s: Kubernetes reserves the system- prefix", pc.Name)
						}
						if pc.Value > 1_000_000_000 {
							t.Errorf("PriorityClass %s: value %d above what Kubernetes accepts for user classes", pc.Name, pc.Value)
						}
					}
				case "v1/Namespace":
					var ns corev1.Namespace
					if crdcheck.Strict(t, o, o.YAML, &ns) {
						validateMeta(t, o, ns.ObjectMeta, false, apivalidation.ValidateNamespaceName)
						if q := ns.Labels[kai.QueueLabel]; !teamOf[q] {
							t.Errorf("Namespace %s: label %s=%q names no team's queue", ns.Name, kai.QueueLabel, q)
						}
					}
				case "v1/ResourceQuota":
					var rq corev1.ResourceQuota
					if crdcheck.Strict(t, o, o.YAML, &rq) {
						validateMeta(t, o, rq.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
					}
				case "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy",
					"admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding",
					"networking.k8s.io/v1/NetworkPolicy":
					// The guardrails: render/guard's TestConformsToKubernetes.
				case "monitoring.coreos.com/v1/PrometheusRule", "v1/ConfigMap":
					// Monitoring: render/monitor's TestConformsToPrometheusOperator.
				case SchedulingShardGVK:
					conformCRD(t, crds["SchedulingShard"], o)
					var meta struct {
						Metadata metav1.ObjectMeta `json:"metadata"`
					}
					if err := yaml.Unmarshal(o.YAML, &meta); err != nil {
						t.Fatal(err)
					}
					validateMeta(t, o, meta.Metadata, false, apivalidation.NameIsDNSSubdomain)
				default:
					// KAI's other kinds (PodGroup, Topology), should the
					// renderer emit them.
					if crd, ok := crds[o.Kind()]; ok {
						conformCRD(t, crd, o)
						break
					}
					t.Errorf("%s %s: no schema or Go type to check this kind against", o.APIVersion(), o.Kind())
				}
			}
		})
	}
}

// TestQueueTreeOfEveryAgreement checks the rules of the mapping on every
// agreement in the repository: parents come before their children; only cpu
// and memory are unlimited; a team's limit is its guarantee plus what it may
// borrow (capped at its guarantee when it never lends); the reserved subtree's
// limit equals its quota; the shared subtree's limit is the capacity minus
// the reserved guarantees; children's quotas add up to their parent's.
func TestQueueTreeOfEveryAgreement(t *testing.T) {
	for path, part := range examples.Parts(t) {
		if part.Manager {
			continue // KAI has no multi-cluster dispatch: a fleet's manager is Kueue's
		}
		t.Run(path, func(t *testing.T) {
			res, err := generator.Render(part.Source, part.Options(generator.Options{Backend: generator.KAI}))
			if err != nil {
				t.Fatal(err)
			}
			p := res.Plan
			got := queues(t, p)
			seen := map[string]bool{}
			for _, o := range res.Objects {
				if o.Kind() != "Queue" {
					continue
				}
				if parent := got[o.Name()].Parent; parent != "" && !seen[parent] {
					t.Errorf("queue %s comes before its parent %s", o.Name(), parent)
				}
				seen[o.Name()] = true
			}
			childQuota := map[string]int64{}
			for _, q := range got {
				childQuota[q.Parent] += q.Quota
			}
			for name, q := range got {
				sum, ok := childQuota[name]
				switch {
				case !ok:
				case p.Department(strings.TrimSuffix(name, poolSuffix(p, name))) != nil:
					// The rest is the department's surplus, which KAI
					// divides among its teams first.
					if sum > q.Quota {
						t.Errorf("department queue %s: quota %d, its teams' add up to more, %d", name, q.Quota, sum)
					}
				case sum != q.Quota:
					t.Errorf("queue %s: quota %d, its children's add up to %d", name, q.Quota, sum)
				}
			}
			pools := kai.Pools(p)
			if pools == nil {
				checkTree(t, p, got, func(base string) string { return base }, false)
				return
			}
			pooled := map[string]bool{}
			for _, pool := range pools {
				t.Run("pool "+pool.Name, func(t *testing.T) {
					part := p.FlavorPart(pool.Flavor.Name)
					name := func(base string) string { return kai.QueueName(p, base, pool.Flavor) }
					inPool := checkTree(t, part, got, name, true)
					for q := range inPool {
						pooled[q] = true
					}
				})
			}
			for name := range got {
				if !pooled[name] {
					t.Errorf("queue %s is in no pool's tree", name)
				}
			}
		})
	}
}

// poolSuffix is the -<pool> a pool's queue name ends with; empty for an
// agreement that renders unsharded.
func poolSuffix(p *plan.Agreement, name string) string {
	for _, pool := range kai.Pools(p) {
		if strings.HasSuffix(name, "-"+pool.Name) {
			return "-" + pool.Name
		}
	}
	return ""
}

// checkTree checks one queue tree of a render (got, every Queue by name):
// the agreement's only one, or a pool's, whose plan is its flavor's part,
// whose names name gives and where only teams and departments that hold
// some of the flavor have a Queue. It returns the tree's Queue names.
func checkTree(t *testing.T, p *plan.Agreement, got map[string]queue, name func(string) string, pooled bool) map[string]bool {
	t.Helper()
	mine := map[string]bool{}
	// KAI counts whole GPUs and MIG slices, a slice
	// nvidia.com/mig-<N>g.<M>gb as N GPUs.
	gpus := func(f plan.Flavor, n int64) int64 { return n * gpu.PerUnit(f.Resource) }
	var capacity int64
	for _, f := range p.Flavors {
		capacity += gpus(f, f.Capacity)
	}
	root := name(p.Name)
	var reservedQuota int64
	for _, tm := range p.Teams {
		var g, l, b int64
		for _, f := range p.Flavors {
			q := tm.Quota(f.Name)
			g, l, b = g+gpus(f, q.Guaranteed), l+gpus(f, q.Lendable), b+gpus(f, q.Borrow)
		}
		leaf, ok := got[name(tm.Name)]
		if pooled && g+b == 0 {
			if ok {
				t.Errorf("team %s holds none of the pool's flavor, yet has queue %s", tm.Name, name(tm.Name))
			}
			continue
		}
		if !ok {
			t.Errorf("team %s has no queue %s", tm.Name, name(tm.Name))
			continue
		}
		mine[name(tm.Name)] = true
		want := queue{Parent: root + kai.SharedSuffix, Quota: g, Limit: g + b, Weight: tm.Weight}
		switch {
		case tm.Department != "":
			// Under its department, whatever it lends.
			want.Parent = name(tm.Department)
		case g > 0 && l == 0:
			reservedQuota += g
			want = queue{Parent: root + kai.ReservedSuffix, Quota: g, Limit: g, Weight: tm.Weight}
		}
		if diff := cmp.Diff(want, leaf); diff != "" {
			t.Errorf("team %s's queue (-want,+got):\n%s", tm.Name, diff)
		}
	}
	// A department's queue: quota its guarantee, limit guarantee
	// + borrow, its weight, under the shared subtree.
	for _, d := range p.Departments {
		var g, b int64
		for _, f := range p.Flavors {
			q := d.Quota(f.Name)
			g, b = g+gpus(f, q.Guaranteed), b+gpus(f, q.Borrow)
		}
		dq, ok := got[name(d.Name)]
		if pooled && !ok {
			continue // none of its teams holds the flavor (TestPoolTrees)
		}
		mine[name(d.Name)] = true
		want := queue{Parent: root + kai.SharedSuffix, Quota: g, Limit: g + b, Weight: d.Weight}
		if diff := cmp.Diff(want, dq); diff != "" {
			t.Errorf("department %s's queue (-want,+got):\n%s", d.Name, diff)
		}
	}
	if r, ok := got[root+kai.ReservedSuffix]; ok {
		mine[root+kai.ReservedSuffix] = true
		if r.Limit != r.Quota || r.Quota != reservedQuota {
			t.Errorf("reserved subtree: %v, want quota = limit = %d", r, reservedQuota)
		}
	}
	if s, ok := got[root+kai.SharedSuffix]; ok {
		mine[root+kai.SharedSuffix] = true
		if s.Limit != capacity-reservedQuota {
			t.Errorf("shared subtree: limit %d, want the capacity %d minus the reserved guarantees %d", s.Limit, capacity, reservedQuota)
		}
	}
	mine[root] = true
	if r := got[root]; r.Limit != capacity || r.Parent != "" {
		t.Errorf("pool queue %s: %v, want no parent and limit = capacity %d", root, r, capacity)
	}
	return mine
}

package kai_test

import (
	"fmt"
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
	"github.com/tenancy-dev/tenancy/generator/internal/crdschema"
	"github.com/tenancy-dev/tenancy/generator/internal/examples"
	"github.com/tenancy-dev/tenancy/generator/internal/plantest"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render"
	"github.com/tenancy-dev/tenancy/generator/render/kai"
)

func waiting(t plan.Team) plan.Team {
	t.Reclaim = plan.ReclaimWait
	return t
}

func agreement(flavors []plan.Flavor, teams ...plan.Team) *plan.Agreement {
	p := &plan.Agreement{Name: "gpu-pool", Flavors: flavors}
	for _, t := range teams {
		var qs []plan.Quota
		for _, f := range flavors {
			qs = append(qs, t.Quota(f.Name))
		}
		t.Quotas = qs
		p.Teams = append(p.Teams, t)
	}
	return p
}

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
func queues(t *testing.T, p *plan.Agreement) (map[string]queue, diag.List) {
	t.Helper()
	objs, warnings, errs := kai.Render(p, "tenancy.toml")
	if len(errs) > 0 {
		t.Fatalf("render: %v", errs)
	}
	encoded, _, err := encode.Encode(objs)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]queue{}
	for _, o := range encoded {
		if o.Kind != "Queue" {
			continue
		}
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
				t.Errorf("queue %s: %s quota %d limit %d, want -1 (unlimited): the agreement is about GPUs", o.Name, r, got.Quota, got.Limit)
			}
		}
		g := q.Spec.Resources["gpu"]
		out[o.Name] = queue{Parent: q.Spec.ParentQueue, Quota: g.Quota, Limit: g.Limit, Weight: g.OverQuotaWeight}
	}
	return out, warnings
}

func TestQueueTree(t *testing.T) {
	tests := map[string]struct {
		plan *plan.Agreement
		want map[string]queue
	}{
		"reference agreement: inference is never lent": {
			plan: agreement([]plan.Flavor{plantest.H100(32)},
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
			plan: agreement([]plan.Flavor{plantest.H100(16)},
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
			plan: agreement([]plan.Flavor{plantest.H100(16)},
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
			plan: agreement([]plan.Flavor{plantest.H100(8)},
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
			plan: agreement([]plan.Flavor{plantest.H100(8)},
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
			plan: agreement([]plan.Flavor{plantest.H100(16)},
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
				return agreement([]plan.Flavor{plantest.H100(8)}, heavy, plantest.Team("light", plantest.Quota("h100", 4, 4, 4)))
			}(),
			want: map[string]queue{
				"gpu-pool":        {Quota: 8, Limit: 8, Weight: 1},
				"gpu-pool-shared": {Parent: "gpu-pool", Quota: 8, Limit: 8, Weight: 1},
				"heavy":           {Parent: "gpu-pool-shared", Quota: 4, Limit: 8, Weight: 3},
				"light":           {Parent: "gpu-pool-shared", Quota: 4, Limit: 8, Weight: 1},
			},
		},
		"whole-GPU flavors are summed; MIG slices are not counted": {
			plan: agreement([]plan.Flavor{plantest.H100(16), plantest.A100(8), plantest.MIG(56)},
				plantest.Team("a", plantest.Quota("h100", 8, 4, 4), plantest.Quota("a100", 4, 4, 0), plantest.Quota("a100-mig", 28, 0, 0)),
				plantest.Team("b", plantest.Quota("h100", 8, 0, 0), plantest.Quota("a100-mig", 28, 14, 14))),
			want: map[string]queue{
				"gpu-pool":          {Quota: 20, Limit: 24, Weight: 1},
				"gpu-pool-shared":   {Parent: "gpu-pool", Quota: 12, Limit: 16, Weight: 1},
				"a":                 {Parent: "gpu-pool-shared", Quota: 12, Limit: 16, Weight: 1},
				"gpu-pool-reserved": {Parent: "gpu-pool", Quota: 8, Limit: 8},
				"b":                 {Parent: "gpu-pool-reserved", Quota: 8, Limit: 8, Weight: 1},
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, _ := queues(t, tc.plan)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("queues (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestWarnings(t *testing.T) {
	tests := map[string]struct {
		plan *plan.Agreement
		want []string // fields the warnings name
	}{
		"exactly expressible: nothing to say": {
			plan: agreement([]plan.Flavor{plantest.H100(16)},
				plantest.Team("a", plantest.Quota("h100", 8, 8, 8)),
				plantest.Team("b", plantest.Quota("h100", 8, 0, 0))),
		},
		"partly lendable: KAI lends all idle GPUs": {
			plan: agreement([]plan.Flavor{plantest.H100(16)}, plantest.Team("a", plantest.Quota("h100", 16, 8, 0))),
			want: []string{"teams.a.lendable"},
		},
		"reclaim wait: KAI always preempts": {
			plan: agreement([]plan.Flavor{plantest.H100(16)}, waiting(plantest.Team("a", plantest.Quota("h100", 16, 16, 0)))),
			want: []string{"teams.a.reclaim"},
		},
		"a never-lending team that may borrow cannot": {
			plan: agreement([]plan.Flavor{plantest.H100(16)},
				plantest.Team("a", plantest.Quota("h100", 8, 8, 0)),
				plantest.Team("b", plantest.Quota("h100", 8, 0, 4))),
			want: []string{"teams.b.borrow"},
		},
		"MIG flavor: not counted": {
			plan: agreement([]plan.Flavor{plantest.H100(8), plantest.MIG(56)}, plantest.Team("a", plantest.Quota("h100", 8, 8, 0), plantest.Quota("a100-mig", 28, 28, 0))),
			want: []string{"flavors.a100-mig.resource"},
		},
		"several whole-GPU flavors: summed": {
			plan: agreement([]plan.Flavor{plantest.H100(8), plantest.A100(8)}, plantest.Team("a", plantest.Quota("h100", 8, 8, 0), plantest.Quota("a100", 8, 8, 0))),
			want: []string{"flavors"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, warnings := queues(t, tc.plan)
			var got []string
			for _, w := range warnings {
				if w.Severity != diag.Warning || !strings.HasPrefix(w.Message, "kai: ") {
					t.Errorf("%s: want a warning starting with \"kai: \", got %s", w.Field, w)
				}
				got = append(got, w.Field)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("warned fields (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	tests := map[string]struct {
		plan *plan.Agreement
		want []string
	}{
		"a team named like a subtree": {
			plan: agreement([]plan.Flavor{plantest.H100(16)},
				plantest.Team("gpu-pool-shared", plantest.Quota("h100", 8, 8, 0)),
				plantest.Team("b", plantest.Quota("h100", 8, 8, 0))),
			want: []string{"teams.gpu-pool-shared"},
		},
		"a team named like the pool": {
			plan: agreement([]plan.Flavor{plantest.H100(16)}, plantest.Team("gpu-pool", plantest.Quota("h100", 8, 8, 0))),
			want: []string{"teams.gpu-pool"},
		},
		"a priority name Kubernetes reserves": {
			plan: func() *plan.Agreement {
				p := agreement([]plan.Flavor{plantest.H100(16)}, plantest.Team("a", plantest.Quota("h100", 8, 8, 0)))
				p.Priorities = []plan.Priority{{Name: "system-high", Value: 100}, {Name: "high", Value: 10}}
				return p
			}(),
			want: []string{"priorities.system-high"},
		},
		"a priority Kubernetes refuses": {
			plan: func() *plan.Agreement {
				p := agreement([]plan.Flavor{plantest.H100(16)}, plantest.Team("a", plantest.Quota("h100", 8, 8, 0)))
				p.Priorities = []plan.Priority{{Name: "system", Value: 2_000_000_000}}
				return p
			}(),
			want: []string{"priorities.system"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, _, errs := kai.Render(tc.plan, "tenancy.toml")
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("error fields (-want,+got):\n%s", diff)
			}
		})
	}
}

// --- Every agreement in the repository, through the whole pipeline. ---

// queueCRD loads KAI's Queue CRD from ../shared/crds/kai/ beside the
// repository (KAI's Go module is not reachable here), or skips.
func queueCRD(t *testing.T) *crdschema.CRD {
	t.Helper()
	path := filepath.Join(examples.Root(t), "..", "shared", "crds", "kai", "scheduling.run.ai_queues.yaml")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("KAI's Queue CRD is not at %s (the CRDs live beside the repository, in ../shared/crds/kai/): %v", path, err)
	}
	crd, err := crdschema.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return crd
}

func strict(t *testing.T, o generator.Object, into any) bool {
	t.Helper()
	if err := yaml.UnmarshalStrict(o.YAML, into); err != nil {
		t.Errorf("%s %s/%s does not decode strictly into %T: %v", o.Kind, o.Namespace, o.Name, into, err)
		return false
	}
	return true
}

func validateMeta(t *testing.T, o generator.Object, meta metav1.ObjectMeta, namespaced bool, nameFn apivalidation.ValidateNameFunc) {
	t.Helper()
	errs := apivalidation.ValidateObjectMeta(&meta, namespaced, nameFn, field.NewPath("metadata"))
	errs = append(errs, metav1validation.ValidateLabels(meta.Labels, field.NewPath("metadata", "labels"))...)
	for _, e := range errs {
		t.Errorf("%s %s/%s: %v", o.Kind, o.Namespace, o.Name, e)
	}
	if meta.Labels[render.ManagedByLabel] != render.ManagedBy {
		t.Errorf("%s %s: no label %s=%s", o.Kind, o.Name, render.ManagedByLabel, render.ManagedBy)
	}
}

// TestConformsToKAI checks every object of every agreement: Queues against
// KAI's CRD schema (CEL rules, if any, are left to the e2e suite);
// PriorityClasses, Namespaces and ResourceQuotas by decoding them strictly
// into the core API's Go types and validating their metadata.
func TestConformsToKAI(t *testing.T) {
	crd := queueCRD(t)
	for path, src := range examples.Sources(t) {
		t.Run(path, func(t *testing.T) {
			res, err := generator.Render(src, generator.Options{Backend: generator.KAI})
			if err != nil {
				t.Fatal(err)
			}
			teamOf := map[string]bool{}
			for _, tm := range res.Plan.Teams {
				teamOf[tm.Name] = true
			}
			for _, o := range res.Objects {
				switch o.APIVersion + "/" + o.Kind {
				case kai.QueueAPIVersion + "/Queue":
					var obj map[string]any
					if err := yaml.Unmarshal(o.YAML, &obj); err != nil {
						t.Fatal(err)
					}
					for _, v := range crd.Validate(obj) {
						t.Errorf("Queue %s: CRD schema: %s", o.Name, v)
					}
					missing, err := crd.MissingDefaults(obj)
					if err != nil {
						t.Fatal(err)
					}
					for _, m := range missing {
						t.Errorf("Queue %s: %s has a default the API server would add", o.Name, m)
					}
					var meta struct {
						Metadata metav1.ObjectMeta `json:"metadata"`
					}
					if err := yaml.Unmarshal(o.YAML, &meta); err != nil {
						t.Fatal(err)
					}
					validateMeta(t, o, meta.Metadata, false, apivalidation.NameIsDNSSubdomain)
				case "scheduling.k8s.io/v1/PriorityClass":
					var pc schedulingv1.PriorityClass
					if strict(t, o, &pc) {
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
					if strict(t, o, &ns) {
						validateMeta(t, o, ns.ObjectMeta, false, apivalidation.ValidateNamespaceName)
						if q := ns.Labels[kai.QueueLabel]; !teamOf[q] {
							t.Errorf("Namespace %s: label %s=%q names no team's queue", ns.Name, kai.QueueLabel, q)
						}
					}
				case "v1/ResourceQuota":
					var rq corev1.ResourceQuota
					if strict(t, o, &rq) {
						validateMeta(t, o, rq.ObjectMeta, true, apivalidation.NameIsDNSSubdomain)
					}
				default:
					t.Errorf("%s %s: no schema or Go type to check this kind against", o.APIVersion, o.Kind)
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
	for path, src := range examples.Sources(t) {
		t.Run(path, func(t *testing.T) {
			res, err := generator.Render(src, generator.Options{Backend: generator.KAI})
			if err != nil {
				t.Fatal(err)
			}
			p := res.Plan
			var capacity int64
			for _, f := range p.Flavors {
				if f.Resource == kai.WholeGPU {
					capacity += f.Capacity
				}
			}
			got, _ := queues(t, p)
			seen := map[string]bool{}
			for _, o := range res.Objects {
				if o.Kind != "Queue" {
					continue
				}
				if parent := got[o.Name].Parent; parent != "" && !seen[parent] {
					t.Errorf("queue %s comes before its parent %s", o.Name, parent)
				}
				seen[o.Name] = true
			}
			childQuota := map[string]int64{}
			for _, q := range got {
				childQuota[q.Parent] += q.Quota
			}
			for name, q := range got {
				if sum, ok := childQuota[name]; ok && sum != q.Quota {
					t.Errorf("queue %s: quota %d, its children's add up to %d", name, q.Quota, sum)
				}
			}
			var reservedQuota int64
			for _, tm := range p.Teams {
				var g, l, b int64
				for _, f := range p.Flavors {
					if f.Resource == kai.WholeGPU {
						q := tm.Quota(f.Name)
						g, l, b = g+q.Guaranteed, l+q.Lendable, b+q.Borrow
					}
				}
				leaf, ok := got[tm.Name]
				if !ok {
					t.Errorf("team %s has no queue", tm.Name)
					continue
				}
				want := queue{Parent: p.Name + kai.SharedSuffix, Quota: g, Limit: g + b, Weight: tm.Weight}
				if g > 0 && l == 0 {
					reservedQuota += g
					want = queue{Parent: p.Name + kai.ReservedSuffix, Quota: g, Limit: g, Weight: tm.Weight}
				}
				if diff := cmp.Diff(want, leaf); diff != "" {
					t.Errorf("team %s's queue (-want,+got):\n%s", tm.Name, diff)
				}
			}
			if r, ok := got[p.Name+kai.ReservedSuffix]; ok && (r.Limit != r.Quota || r.Quota != reservedQuota) {
				t.Errorf("reserved subtree: %v, want quota = limit = %d", r, reservedQuota)
			}
			if s, ok := got[p.Name+kai.SharedSuffix]; ok && s.Limit != capacity-reservedQuota {
				t.Errorf("shared subtree: limit %d, want the capacity %d minus the reserved guarantees %d", s.Limit, capacity, reservedQuota)
			}
			if root := got[p.Name]; root.Limit != capacity || root.Parent != "" {
				t.Errorf("pool queue: %v, want no parent and limit = capacity %d", root, capacity)
			}
		})
	}
}

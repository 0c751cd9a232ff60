package contention

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tenancy-dev/tenancy/generator/internal/sourcetest"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render/kai"
	"github.com/tenancy-dev/tenancy/generator/render/kueue"
)

// The trees this package computes on are written from the renderers'
// rules, not read from their objects (rendering 10,000 teams costs more
// than the second it may take). These tests hold them to what render
// writes, for every agreement in the repository each backend renders.
var fidelityAgreements = []string{"tenancy.toml", "examples/departments/tenancy.toml", "examples/multi-flavor/tenancy.toml", "examples/topology/tenancy.toml"}

func TestKAITreeIsRendered(t *testing.T) {
	for _, path := range fidelityAgreements {
		t.Run(path, func(t *testing.T) {
			p := planFile(t, path)
			objs, diags := kai.Renderer{}.Render(p)
			if errs := diags.Errors(); len(errs) > 0 {
				t.Fatalf("KAI refuses the agreement: %v", errs)
			}
			rendered := map[string]string{}
			for _, o := range objs {
				if o.Kind() != "Queue" {
					continue
				}
				g := func(k string) any {
					v, _, _ := unstructured.NestedFieldNoCopy(o.Fields, "spec", "resources", "gpu", k)
					return v
				}
				parent, _, _ := unstructured.NestedString(o.Fields, "spec", "parentQueue")
				rendered[o.Name()] = fmt.Sprintf("parent %q quota %v limit %v weight %v", parent, g("quota"), g("limit"), g("overQuotaWeight"))
			}
			computed := map[string]string{}
			var walk func(q *kaiQueue, parent string)
			walk = func(q *kaiQueue, parent string) {
				computed[q.name] = fmt.Sprintf("parent %q quota %v limit %v weight %v", parent, int64(q.quota), int64(q.limit), int64(q.weight))
				for _, c := range q.children {
					walk(c, q.name)
				}
			}
			for _, tr := range kaiTrees(p, p) {
				walk(tr.root, "")
			}
			if len(rendered) == 0 {
				t.Fatal("no queue rendered: nothing compared")
			}
			if diff := cmp.Diff(rendered, computed); diff != "" {
				t.Errorf("(-rendered,+computed)\n%s", diff)
			}
		})
	}
}

func TestKueueTreeIsRendered(t *testing.T) {
	for _, path := range fidelityAgreements {
		t.Run(path, func(t *testing.T) {
			p := planFile(t, path)
			objs, diags := kueue.Renderer{APIVersion: "v1beta2"}.Render(p)
			if len(diags.Errors()) > 0 {
				t.Fatal(diags)
			}
			// Per flavor: each ClusterQueue's and department Cohort's
			// nominal, lending and borrowing limits of the flavor's
			// resource.
			rendered := map[string]string{}
			for _, o := range objs {
				if o.Kind() != "ClusterQueue" && (o.Kind() != "Cohort" || o.Name() == p.Name) {
					continue
				}
				groups, _, _ := unstructured.NestedSlice(o.Fields, "spec", "resourceGroups")
				for _, g := range groups {
					flavors, _, _ := unstructured.NestedSlice(g.(map[string]any), "flavors")
					for _, f := range flavors {
						fm := f.(map[string]any)
						fl := p.Flavor(fm["name"].(string))
						rs, _, _ := unstructured.NestedSlice(fm, "resources")
						for _, r := range rs {
							rm := r.(map[string]any)
							if rm["name"] != fl.Resource {
								continue
							}
							q := func(k string) int64 { v := resource.MustParse(fmt.Sprint(rm[k])); return v.Value() }
							rendered[o.Kind()+"/"+o.Name()+"/"+fl.Name] = fmt.Sprintf("%d %d %d", q("nominalQuota"), q("lendingLimit"), q("borrowingLimit"))
						}
					}
				}
			}
			computed := map[string]string{}
			for _, f := range p.Flavors {
				k := newKueueFlavor(p, f.Name)
				for i, t := range k.teams {
					computed["ClusterQueue/"+p.Teams[i].Name+"/"+f.Name] = fmt.Sprintf("%d %d %d", t.g, t.l, t.b)
				}
				for i, d := range k.depts {
					dept := &p.Departments[i]
					// The Cohort's nominalQuota is the surplus: the
					// subtree less what its teams lend into it.
					var lent int64
					for j, t := range k.teams {
						if t.dept == i {
							lent += k.teams[j].lent
						}
					}
					computed["Cohort/"+dept.Name+"/"+f.Name] = fmt.Sprintf("%d %d %d", d.subtree-lent, d.subtree-d.local, d.borrow)
				}
			}
			if len(rendered) == 0 {
				t.Fatal("no queue rendered: nothing compared")
			}
			if diff := cmp.Diff(rendered, computed); diff != "" {
				t.Errorf("(-rendered,+computed)\n%s", diff)
			}
		})
	}
}

func planFile(t *testing.T, path string) *plan.Agreement {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", path))
	if err != nil {
		t.Fatal(err)
	}
	return sourcetest.Plan(t, string(src))
}

package generator

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render"
)

// fakeFamily checks nothing and renders what it is given.
type fakeFamily struct {
	objs  func(p *plan.Agreement) []render.Object
	diags diag.List
}

func (fakeFamily) Check(*plan.Agreement) diag.List { return nil }

func (f fakeFamily) Render(p *plan.Agreement) ([]render.Object, diag.List) {
	if f.objs == nil {
		return nil, f.diags
	}
	return f.objs(p), f.diags
}

// namespace is a Namespace of the pool, of team when not empty.
func namespace(name, team string) render.Object {
	labels := map[string]any{render.ManagedByLabel: render.ManagedBy}
	if team != "" {
		labels[render.TeamLabel] = team
	}
	return render.Object{Fields: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name, "labels": labels}}}
}

// TestBuildRefusesWhatEncodeWould: what the families' checks miss and only
// the rendering shows, two objects of one identity, no object at all or a
// value the YAML writer refuses, is refused by renderPlan, which build runs
// for check and render both, so check refuses it too; duplicates are located at
// the team an object belongs to, else at the pool's name, and every
// family's Render errors come out at once.
func TestBuildRefusesWhatEncodeWould(t *testing.T) {
	src := Source{Path: "tenancy.toml", Data: []byte(`version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 8
[teams.a]
guaranteed = 4
[teams.b]
guaranteed = 4
`)}
	internal := diag.List{{Severity: diag.Error, Type: "InternalError", File: "tenancy.toml", Message: "x: broke"}}
	tests := map[string]struct {
		fams []render.Family
		want []string
	}{
		"two objects of one identity, of a team": {
			fams: []render.Family{fakeFamily{objs: func(*plan.Agreement) []render.Object {
				return []render.Object{namespace("shared", ""), namespace("shared", "b"), namespace("a", "a")}
			}}},
			want: []string{`error FieldValueDuplicate tenancy.toml:7:8: teams.b: the agreement renders two objects that are both Namespace /shared: the API server holds one object per name, so one would overwrite the other`},
		},
		"two objects of one identity, of the pool": {
			fams: []render.Family{fakeFamily{objs: func(*plan.Agreement) []render.Object {
				return []render.Object{namespace("shared", ""), namespace("shared", "")}
			}}},
			want: []string{`error FieldValueDuplicate tenancy.toml:2:8: name: the agreement renders two objects that are both Namespace /shared: the API server holds one object per name, so one would overwrite the other`},
		},
		"a value the YAML writer refuses": {
			fams: []render.Family{fakeFamily{objs: func(*plan.Agreement) []render.Object {
				o := namespace("a", "a")
				o.Fields["spec"] = map[string]any{"c": make(chan int)}
				return []render.Object{o}
			}}},
			want: []string{`error InternalError tenancy.toml: encode: encode Namespace a: not a JSON value: chan int`},
		},
		"no objects": {
			fams: []render.Family{fakeFamily{}},
			want: []string{`error FieldValueRequired tenancy.toml: the agreement renders no objects`},
		},
		"every family's render errors": {
			fams: []render.Family{fakeFamily{diags: internal}, fakeFamily{diags: internal}},
			want: []string{`error InternalError tenancy.toml: x: broke`, `error InternalError tenancy.toml: x: broke`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p, _, _, diags, _ := prepare(src).check(Options{})
			if len(diags) > 0 {
				t.Fatalf("check: %v", diags)
			}
			// check's rendering (checkYAML) refuses what render's does.
			for _, yaml := range []yamlStep{writeYAML, checkYAML} {
				res, diags := renderPlan(p, tc.fams, nil, yaml)
				if res != nil {
					t.Fatalf("renderPlan (yaml %v) rendered, want a refusal", yaml)
				}
				var got []string
				for _, d := range diags {
					got = append(got, string(d.Severity)+" "+string(d.Type)+" "+d.String())
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("diagnostics, yaml %v (-want,+got):\n%s", yaml, diff)
				}
			}
		})
	}
}

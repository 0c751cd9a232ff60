package generator_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/diff"
	"github.com/tenancy-dev/tenancy/generator/encode"
	"github.com/tenancy-dev/tenancy/generator/synthetic"
)

// TestDiffOfFieldsIsDiffOfYAML holds tenancy diff's shortcut to the whole
// path it replaced: comparing renderings that checked their YAML without
// writing it (Prepared.RenderFields, each shown object written by
// encode.YAML) reports, in text, markdown and JSON, exactly what comparing
// the written renderings (Render) reports. The pairs: every example's
// rendering (each backend and Kueue API, the fleet's parts) with itself and
// with the reference agreement's, and the synthetic agreement with one
// team's guarantee changed and with a team added. Every object's YAML by
// encode.YAML is also Render's.
func TestDiffOfFieldsIsDiffOfYAML(t *testing.T) {
	type pair struct {
		name     string
		old, new generator.Source
		opts     generator.Options
	}
	var pairs []pair
	reference := readGoldenExample(t, "tenancy.toml")
	for example, rel := range goldenExamples {
		src := readGoldenExample(t, rel)
		for file, opts := range goldenRenderings {
			pairs = append(pairs,
				pair{example + "/" + file + "/itself", src, src, opts},
				pair{example + "/" + file + "/from the reference", reference, src, opts})
		}
	}
	fleet := readGoldenExample(t, "examples/fleet/tenancy.toml")
	for file, opts := range fleetRenderings {
		pairs = append(pairs, pair{"fleet/" + file, fleet, fleet, opts})
	}
	teams := 1000
	if testing.Short() {
		teams = 100
	}
	old := generator.Source{Path: "tenancy.toml", Data: synthetic.Agreement(teams)}
	changed := generator.Source{Path: "tenancy.toml", Data: bytes.Replace(old.Data, []byte("guaranteed = 8\n"), []byte("guaranteed = 7\n"), 1)}
	added := generator.Source{Path: "tenancy.toml", Data: synthetic.Agreement(teams + 1)}
	if bytes.Equal(changed.Data, old.Data) {
		t.Fatal("the synthetic agreement has no guaranteed = 8 to change")
	}
	for _, file := range []string{"kueue-v1beta2.yaml", "kai.yaml"} {
		pairs = append(pairs,
			pair{"synthetic/" + file + "/a guarantee changed", old, changed, goldenRenderings[file]},
			pair{"synthetic/" + file + "/a team added", old, added, goldenRenderings[file]},
			pair{"synthetic/" + file + "/a team removed", added, old, goldenRenderings[file]})
	}
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			written := []*generator.Result{renderExample(t, p.old, p.opts), renderExample(t, p.new, p.opts)}
			var fields []*generator.Result
			for _, src := range []generator.Source{p.old, p.new} {
				res, err := generator.Prepare(src).RenderFields(p.opts)
				if err != nil {
					t.Fatal(err)
				}
				if res.Manifests != nil {
					t.Error("RenderFields wrote the stream")
				}
				fields = append(fields, res)
			}
			for side := range written {
				if len(written[side].Objects) != len(fields[side].Objects) {
					t.Fatalf("side %d: %d objects written, %d by fields", side, len(written[side].Objects), len(fields[side].Objects))
				}
				for i, o := range fields[side].Objects {
					if o.YAML != nil {
						t.Fatalf("side %d: RenderFields wrote the YAML of %s %s", side, o.Kind(), o.Name())
					}
					y, err := encode.YAML(o)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(y, written[side].Objects[i].YAML) {
						t.Errorf("side %d: encode.YAML of %s %s is not Render's", side, o.Kind(), o.Name())
					}
				}
			}
			want := compareSides(t, written[0], written[1])
			got := compareSides(t, fields[0], fields[1])
			for format := range want {
				if d := cmp.Diff(want[format], got[format]); d != "" {
					t.Errorf("%s (-written,+fields):\n%s", format, d)
				}
			}
		})
	}
}

// compareSides is diff's report of two renderings in every format.
func compareSides(t *testing.T, old, new *generator.Result) map[string]string {
	t.Helper()
	r, err := diff.Compare(diff.Side{Label: "old", Result: old}, diff.Side{Label: "new", Result: new})
	if err != nil {
		t.Fatal(err)
	}
	js, err := diff.JSON(r)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"text": string(diff.Text(r, false)), "markdown": string(diff.Markdown(r, 0)), "json": string(js)}
}

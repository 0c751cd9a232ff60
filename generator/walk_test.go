package generator_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/render"
)

// TestWalkIsTheLibrarys holds render.FromTyped's own walk to
// structured-merge-diff's, which it replaced for speed: every object of every
// example's rendering (each backend and Kueue API, the fleet's parts) and of
// the synthetic 10,000 teams has the same fields, and the stream the same
// bytes, by either walk.
func TestWalkIsTheLibrarys(t *testing.T) {
	type rendering struct {
		name string
		src  generator.Source
		opts generator.Options
	}
	var all []rendering
	for example, rel := range goldenExamples {
		src := readGoldenExample(t, rel)
		for file, opts := range goldenRenderings {
			all = append(all, rendering{example + "/" + file, src, opts})
		}
	}
	fleet := readGoldenExample(t, "examples/fleet/tenancy.toml")
	for file, opts := range fleetRenderings {
		all = append(all, rendering{"fleet/" + file, fleet, opts})
	}
	if !testing.Short() {
		// v1beta1 is a conversion of v1beta2's typed objects, which the
		// examples cover; at 10,000 teams each rendering takes seconds.
		synthetic := benchAgreement(t, 10000)
		for _, file := range []string{"kueue-v1beta2.yaml", "kai.yaml"} {
			all = append(all, rendering{"teams=10000/" + file, synthetic, goldenRenderings[file]})
		}
	}
	for _, r := range all {
		t.Run(r.name, func(t *testing.T) {
			got := renderExample(t, r.src, r.opts)
			var want *generator.Result
			render.WithLibraryWalk(func() { want = renderExample(t, r.src, r.opts) })
			if len(got.Objects) != len(want.Objects) {
				t.Fatalf("%d objects by walk, %d by the library's", len(got.Objects), len(want.Objects))
			}
			for i := range want.Objects {
				if w, g := want.Objects[i].Fields, got.Objects[i].Fields; !reflect.DeepEqual(w, g) {
					t.Errorf("%s %s/%s (-library,+walk):\n%s", want.Objects[i].Kind(), want.Objects[i].Namespace(), want.Objects[i].Name(), cmp.Diff(w, g))
				}
			}
			if !bytes.Equal(want.Manifests, got.Manifests) {
				t.Error("the streams differ")
			}
		})
	}
}

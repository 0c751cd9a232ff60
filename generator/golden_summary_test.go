package generator_test

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/internal/goldentest"
	"github.com/tenancy-dev/tenancy/generator/synthetic"
)

func warningsText(warnings []generator.Diagnostic) []byte {
	var b strings.Builder
	for _, w := range warnings {
		b.WriteString(w.String() + "\n")
	}
	return []byte(b.String())
}

// summarizeManifests is the golden file of a hashed example's rendering: the
// SHA-256 of the stream (what `tenancy render ... | sha256sum` prints), its
// size, and the number of objects of each apiVersion and kind.
func summarizeManifests(res *generator.Result) []byte {
	counts := map[string]int{}
	for _, o := range res.Objects {
		counts[o.APIVersion()+" "+o.Kind()]++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "sha256 %x\nbytes %d\nobjects %d\n", sha256.Sum256(res.Manifests), len(res.Manifests), len(res.Objects))
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		fmt.Fprintf(&b, "%s %d\n", k, counts[k])
	}
	return []byte(b.String())
}

// largeTeamName is how synthetic.Large names its teams.
var largeTeamName = regexp.MustCompile(`team-[0-9]{5}`)

// summarizeWarnings is the golden file of a hashed example's warnings: the
// SHA-256 of the text TestGolden writes for the other examples, and the
// number of warnings for each field path with the team names folded, so a
// new or lost kind of warning shows in the diff.
func summarizeWarnings(warnings []generator.Diagnostic) []byte {
	counts := map[string]int{}
	for _, w := range warnings {
		counts[largeTeamName.ReplaceAllString(w.Field(), "team-*")]++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "sha256 %x\nwarnings %d\n", sha256.Sum256(warningsText(warnings)), len(warnings))
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		fmt.Fprintf(&b, "%s %d\n", k, counts[k])
	}
	return []byte(b.String())
}

// TestLargeRendering checks named objects of examples/large's renderings
// field by field, against what synthetic.Large writes for them: the golden
// summary says that something changed, this says what must not.
func TestLargeRendering(t *testing.T) {
	src := readGoldenExample(t, goldenExamples["large"])
	last := fmt.Sprintf("team-%05d", synthetic.LargeTeams-1)
	// synthetic.Large: h100 guaranteed 8, lendable 4*(i%3), borrow 8;
	// a100 guaranteed 4, lendable 4, borrow i%5.
	i := synthetic.LargeTeams - 1
	h100Lend, a100Borrow := 4*(i%3), i%5

	kueue := map[string]struct {
		opts generator.Options
	}{
		"v1beta2": {generator.Options{Backend: generator.Kueue, KueueAPI: generator.KueueV1beta2}},
		"v1beta1": {generator.Options{Backend: generator.Kueue, KueueAPI: generator.KueueV1beta1}},
	}
	for name, tc := range kueue {
		t.Run("kueue-"+name, func(t *testing.T) {
			objs := objectsByKey(t, renderExample(t, src, tc.opts))
			cq := objectField(t, objs, "ClusterQueue//"+last)
			wantGPU := map[string]any{ // the first resource of each flavor is the GPU
				"h100": map[string]any{"name": "nvidia.com/gpu", "nominalQuota": "8", "lendingLimit": strconv.Itoa(h100Lend), "borrowingLimit": "8"},
				"a100": map[string]any{"name": "nvidia.com/gpu", "nominalQuota": "4", "lendingLimit": "4", "borrowingLimit": strconv.Itoa(a100Borrow)},
			}
			gotGPU := map[string]any{}
			for _, f := range path(t, cq, "spec", "resourceGroups", "0", "flavors").([]any) {
				f := f.(map[string]any)
				gotGPU[f["name"].(string)] = path(t, f, "resources", "0")
			}
			if diff := cmp.Diff(wantGPU, gotGPU); diff != "" {
				t.Errorf("ClusterQueue %s GPU quotas (-want,+got):\n%s", last, diff)
			}
			if diff := cmp.Diff([]any{last, last + "-dev"}, path(t, cq, "spec", "namespaceSelector", "matchExpressions", "0", "values")); diff != "" {
				t.Errorf("ClusterQueue %s namespaces (-want,+got):\n%s", last, diff)
			}
			lq := objectField(t, objs, "LocalQueue/"+last+"-dev/"+last)
			if got := path(t, lq, "spec", "clusterQueue"); got != last {
				t.Errorf("LocalQueue %s/%s: clusterQueue %v, want %s", last+"-dev", last, got, last)
			}
		})
	}
}

// objectsByKey indexes a rendering's objects by "kind/namespace/name".
func objectsByKey(t *testing.T, res *generator.Result) map[string]generator.Object {
	t.Helper()
	objs := map[string]generator.Object{}
	for _, o := range res.Objects {
		objs[o.Kind()+"/"+o.Namespace()+"/"+o.Name()] = o
	}
	return objs
}

// objectField returns the object's fields as JSON reads them (numbers are
// float64), or fails the test when the rendering has no such object.
func objectField(t *testing.T, objs map[string]generator.Object, key string) map[string]any {
	t.Helper()
	o, ok := objs[key]
	if !ok {
		t.Fatalf("no %s in the rendering", key)
	}
	return goldentest.AsRead(t, o.Fields).(map[string]any)
}

// path walks maps by key and slices by index.
func path(t *testing.T, v any, steps ...string) any {
	t.Helper()
	for i, s := range steps {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[s]; !ok {
				t.Fatalf("no %s", strings.Join(steps[:i+1], "."))
			}
		case []any:
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 || n >= len(x) {
				t.Fatalf("no %s (%d items)", strings.Join(steps[:i+1], "."), len(x))
			}
			v = x[n]
		default:
			t.Fatalf("%s is %T, not a map or a list", strings.Join(steps[:i], "."), v)
		}
	}
	return v
}

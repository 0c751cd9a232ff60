package generator_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/internal/goldentest"
)

// goldenExamples are the agreements with golden renderings, by the name of their
// directory under testdata/golden/, with their path from the repository root
// (which is also the name messages call them by, so goldens do not depend on
// where the test runs).
var goldenExamples = map[string]string{
	"reference":    "tenancy.toml",
	"multi-flavor": "examples/multi-flavor/tenancy.toml",
	"topology":     "examples/topology/tenancy.toml",
	// Its renderings are megabytes: summarized, not committed (hashedExamples).
	"large":       "examples/large/tenancy.toml",
	"departments": "examples/departments/tenancy.toml",
	// Monitoring on; not under examples/, whose agreements the control-plane
	// suite applies to a cluster without prometheus-operator.
	"monitoring": "generator/testdata/monitoring/tenancy.toml",
}

// hashedExamples are the goldenExamples whose renderings are too large to
// commit (examples/large renders to megabytes): their golden file for each
// rendering is a summary of it (summarizeManifests, summarizeWarnings), which
// -update rewrites like any golden file, so a change reads as "hash changed"
// beside the object counts that moved. TestLargeRendering asserts a few named
// objects' fields of the same renderings.
var hashedExamples = map[string]bool{"large": true}

// goldenRenderings are the outputs each example has a golden file for.
var goldenRenderings = map[string]generator.Options{
	"kueue-v1beta2.yaml": {Backend: generator.Kueue, KueueAPI: generator.KueueV1beta2},
	"kueue-v1beta1.yaml": {Backend: generator.Kueue, KueueAPI: generator.KueueV1beta1},
	"kai.yaml":           {Backend: generator.KAI},
}

func readGoldenExample(t *testing.T, rel string) generator.Source {
	t.Helper()
	src, err := generator.ReadFile(filepath.Join("..", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	src.Path = rel
	return src
}

func renderExample(t *testing.T, src generator.Source, opts generator.Options) *generator.Result {
	t.Helper()
	res, err := generator.Render(src, opts)
	if err != nil {
		t.Fatalf("render %s %+v: %v", src.Path, opts, err)
	}
	return res
}

// golden compares got with testdata/golden/<example>/<file>, or rewrites
// the file with -update.
func golden(t *testing.T, example, file string, got []byte) {
	t.Helper()
	goldentest.Compare(t, filepath.Join("testdata", "golden", example, file), got, "go test ./generator -run Golden -update")
}

// eachGoldenRendering runs check on every rendering that has a golden file:
// every example with every backend and API.
func eachGoldenRendering(t *testing.T, check func(t *testing.T, example, file string, opts generator.Options, res *generator.Result)) {
	for example, rel := range goldenExamples {
		src := readGoldenExample(t, rel)
		for file, opts := range goldenRenderings {
			t.Run(example+"/"+file, func(t *testing.T) {
				check(t, example, file, opts, renderExample(t, src, opts))
			})
		}
	}
}

func TestGolden(t *testing.T) {
	eachGoldenRendering(t, func(t *testing.T, example, file string, opts generator.Options, res *generator.Result) {
		if hashedExamples[example] {
			golden(t, example, file+".summary", summarizeManifests(res))
			if opts.Backend == generator.KAI {
				golden(t, example, "kai.warnings.txt.summary", summarizeWarnings(res.Warnings))
			}
			return
		}
		golden(t, example, file, res.Manifests)
		if opts.Backend == generator.KAI {
			golden(t, example, "kai.warnings.txt", warningsText(res.Warnings))
		}
	})
}

// TestGoldenStreamIsObjects checks that the stream is the objects' YAML in
// order, joined by "---", so wrappers may use either.
func TestGoldenStreamIsObjects(t *testing.T) {
	eachGoldenRendering(t, func(t *testing.T, _, _ string, _ generator.Options, res *generator.Result) {
		var docs [][]byte
		for _, o := range res.Objects {
			docs = append(docs, o.YAML)
		}
		if diff := cmp.Diff(string(bytes.Join(docs, []byte("---\n"))), string(res.Manifests)); diff != "" {
			t.Errorf("stream (-objects,+manifests):\n%s", diff)
		}
	})
}

// TestGoldenParsesBackToFields reads every golden file back as kubectl and
// Argo CD do (sigs.k8s.io/yaml) and compares each document with the
// object's Fields: what a reader sees is what the renderer meant.
func TestGoldenParsesBackToFields(t *testing.T) {
	eachGoldenRendering(t, func(t *testing.T, example, file string, _ generator.Options, res *generator.Result) {
		// A hashed example's rendering is the one its summary's hash
		// holds (TestGolden): read it back instead of a file.
		data := res.Manifests
		if !hashedExamples[example] {
			var err error
			if data, err = os.ReadFile(filepath.Join("testdata", "golden", example, file)); err != nil {
				t.Fatal(err)
			}
		}
		docs := strings.Split(string(data), "\n---\n")
		if len(docs) != len(res.Objects) {
			t.Fatalf("%d documents in the golden file, %d objects rendered", len(docs), len(res.Objects))
		}
		for i, o := range res.Objects {
			var got any
			if err := yaml.Unmarshal([]byte(docs[i]), &got); err != nil {
				t.Fatalf("document %d (%s %s): %v", i, o.Kind(), o.Name(), err)
			}
			if diff := cmp.Diff(goldentest.AsRead(t, o.Fields), got); diff != "" {
				t.Errorf("%s %s/%s read back (-fields,+golden):\n%s", o.Kind(), o.Namespace(), o.Name(), diff)
			}
		}
	})
}

func TestDeterministic(t *testing.T) {
	for example, rel := range goldenExamples {
		src := readGoldenExample(t, rel)
		reordered := src
		reordered.Data = reverseTables(t, src.Data)
		for file, opts := range goldenRenderings {
			t.Run(example+"/"+file, func(t *testing.T) {
				first := renderExample(t, src, opts)
				again := renderExample(t, src, opts)
				if !bytes.Equal(first.Manifests, again.Manifests) {
					t.Errorf("two goldenRenderings differ (-first,+second):\n%s", cmp.Diff(string(first.Manifests), string(again.Manifests)))
				}
				other := renderExample(t, reordered, opts)
				if !bytes.Equal(first.Manifests, other.Manifests) {
					t.Errorf("reordering the tables of the file changes the rendering (-file order,+reversed):\n%s",
						cmp.Diff(string(first.Manifests), string(other.Manifests)))
				}
			})
		}
	}
}

var tableHeader = regexp.MustCompile(`^\[`)

// reverseTables returns the agreement with its tables ([teams.x],
// [teams.x.flavors.y], [priorities], ...) in reverse order and the keys
// inside each table reversed too: the same agreement in TOML, written
// differently. The [flavors.*] tables keep their order among themselves: it
// is the order Kueue tries flavors in, so it is part of the agreement.
func reverseTables(t *testing.T, data []byte) []byte {
	t.Helper()
	lines := strings.SplitAfter(string(data), "\n")
	var preamble []string
	var tables [][]string
	for _, l := range lines {
		switch {
		case tableHeader.MatchString(l):
			tables = append(tables, []string{l})
		case len(tables) == 0:
			preamble = append(preamble, l)
		default:
			tables[len(tables)-1] = append(tables[len(tables)-1], l)
		}
	}
	if len(tables) < 2 {
		t.Fatalf("the agreement has %d tables: nothing to reorder", len(tables))
	}
	slices.Reverse(tables)
	keepFlavorOrder(tables)
	var b strings.Builder
	for _, l := range preamble {
		b.WriteString(l)
	}
	for _, table := range tables {
		body := keyLines(table[1:])
		slices.Reverse(body)
		b.WriteString("\n" + table[0])
		for _, kv := range body {
			b.WriteString(kv)
		}
	}
	out := []byte(b.String())
	if bytes.Equal(out, data) {
		t.Fatal("reordering left the agreement unchanged")
	}
	return out
}

// keepFlavorOrder puts the [flavors.NAME] tables back in their original
// order (reversed, since tables has been reversed) in the places they hold.
func keepFlavorOrder(tables [][]string) {
	var at []int
	var flavors [][]string
	for i, table := range tables {
		if strings.HasPrefix(table[0], "[flavors.") {
			at = append(at, i)
			flavors = append(flavors, table)
		}
	}
	slices.Reverse(flavors)
	for i, pos := range at {
		tables[pos] = flavors[i]
	}
}

// keyLines groups a table's lines into one entry per key (a key with a
// multi-line array keeps its lines together), dropping blank lines and
// comments.
func keyLines(lines []string) []string {
	var out []string
	depth := 0
	for _, l := range lines {
		trimmed := strings.TrimSpace(l)
		if depth == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if !strings.HasSuffix(l, "\n") {
			l += "\n"
		}
		if depth > 0 {
			out[len(out)-1] += l
		} else {
			out = append(out, l)
		}
		depth += strings.Count(l, "[") - strings.Count(l, "]")
	}
	return out
}

// fleetRenderings are the parts of examples/fleet with golden files: the
// manager in both Kueue APIs and a worker for each backend.
var fleetRenderings = map[string]generator.Options{
	"hub.kueue-v1beta2.yaml":  {Cluster: "hub", Backend: generator.Kueue, KueueAPI: generator.KueueV1beta2},
	"hub.kueue-v1beta1.yaml":  {Cluster: "hub", Backend: generator.Kueue, KueueAPI: generator.KueueV1beta1},
	"east.kueue-v1beta2.yaml": {Cluster: "east", Backend: generator.Kueue, KueueAPI: generator.KueueV1beta2},
	"west.kai.yaml":           {Cluster: "west", Backend: generator.KAI},
}

// TestGoldenFleet renders the parts of the fleet example, and the list of
// parts, against their golden files, and each part again from the file
// with its tables reversed (TestDeterministic's reordering).
func TestGoldenFleet(t *testing.T) {
	src := readGoldenExample(t, "examples/fleet/tenancy.toml")
	parts, err := generator.Parts(src)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"hub", "east", "west"}, parts); diff != "" {
		t.Errorf("Parts (-want,+got):\n%s", diff)
	}
	reordered := src
	reordered.Data = reverseTables(t, src.Data)
	for file, opts := range fleetRenderings {
		t.Run(file, func(t *testing.T) {
			res := renderExample(t, src, opts)
			golden(t, "fleet", file, res.Manifests)
			// The workers' order in the file changes nothing either.
			if other := renderExample(t, reordered, opts); !bytes.Equal(res.Manifests, other.Manifests) {
				t.Errorf("reordering the tables of the file changes the rendering (-file order,+reversed):\n%s",
					cmp.Diff(string(res.Manifests), string(other.Manifests)))
			}
		})
	}
}

package generator_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/encode"
	"github.com/tenancy-dev/tenancy/generator/internal/examples"
	"github.com/tenancy-dev/tenancy/internal/windowstest"
)

// orderCorpus is every agreement the repository renders somewhere: the
// shipped ones, the golden-only ones, the end-to-end suites' and the
// windows agreement, so that every family and every kind is in at least one
// of them.
func orderCorpus(t *testing.T) map[string]examples.Part {
	t.Helper()
	out := examples.Parts(t)
	root := examples.Root(t)
	paths, err := filepath.Glob(filepath.Join(root, "test", "e2e", "testdata", "*.toml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no agreements under test/e2e/testdata (%v)", err)
	}
	paths = append(paths, filepath.Join(root, "generator", "testdata", "monitoring", "tenancy.toml"))
	for _, p := range paths {
		src, err := generator.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		src.Path = filepath.ToSlash(rel)
		out = examples.AddParts(t, out, src.Path, src)
	}
	out["windowstest"] = examples.Part{Source: generator.Source{Path: "windowstest.toml", Data: []byte(windowstest.Agreement)}}
	return out
}

// TestStreamOrderAppliesInOnePass: in every rendering of every agreement of
// the repository, each object comes after what it needs to be created, so
// that kubectl apply of the stream succeeds the first time: a namespaced
// object after its Namespace (when the stream has it), and a Deployment
// after the ServiceAccount it runs as, the ConfigMap it mounts and the RBAC
// that gives the ServiceAccount its rights. make e2e applies the same
// streams object by object (TestStreamAppliesInOnePass).
func TestStreamOrderAppliesInOnePass(t *testing.T) {
	// The kinds a Deployment of the stream depends on.
	before := map[string]bool{"ServiceAccount": true, "ConfigMap": true, "Role": true, "RoleBinding": true, "ClusterRole": true, "ClusterRoleBinding": true}
	renders := 0
	for name, part := range orderCorpus(t) {
		for _, opts := range []generator.Options{{}, {KueueAPI: generator.KueueV1beta1}, {Backend: generator.KAI}} {
			res, err := generator.Render(part.Source, part.Options(opts))
			if err != nil {
				continue // refused renders (KAI and several flavors) have no stream
			}
			renders++
			namespaces := map[string]int{}
			seen := map[string]bool{}
			for i, o := range res.Objects {
				if o.Kind() == "Namespace" {
					namespaces[o.Name()] = i
				}
			}
			for i, o := range res.Objects {
				id := o.Kind() + " " + o.Namespace() + "/" + o.Name()
				if at, ok := namespaces[o.Namespace()]; ok && at > i {
					t.Errorf("%s %s: %s comes before its Namespace", name, backendName(opts), id)
				}
				if o.Kind() == "Deployment" {
					for kind := range before {
						if !seen[kind] && hasKind(res.Objects, kind) {
							t.Errorf("%s %s: %s comes before its %s", name, backendName(opts), id, kind)
						}
					}
				}
				seen[o.Kind()] = true
			}
		}
	}
	if renders < 20 {
		t.Fatalf("only %d renderings checked; the corpus lost agreements", renders)
	}
}

func hasKind(objs []generator.Object, kind string) bool {
	for _, o := range objs {
		if o.Kind() == kind {
			return true
		}
	}
	return false
}

func backendName(o generator.Options) string {
	if o.Backend == generator.KAI {
		return "kai"
	}
	if o.KueueAPI != "" {
		return "kueue " + o.KueueAPI
	}
	return "kueue"
}

// kindInSource finds the kinds the families write in their sources: a
// TypeMeta's or a reference's Kind: "X", and render/kueue's typeMeta("X").
var kindInSource = regexp.MustCompile(`(?:Kind:\s*|typeMeta\()"([A-Z][A-Za-z]*)"`)

// TestEveryRenderedKindIsRanked fails when a family renders a kind that
// encode's order does not rank (it would go last, after the objects that
// may need it): every kind in a rendering of the corpus, and every kind
// written in the families' sources, so that a new kind fails here before an
// agreement that renders it exists.
func TestEveryRenderedKindIsRanked(t *testing.T) {
	kinds := map[string]string{}
	for name, part := range orderCorpus(t) {
		for _, opts := range []generator.Options{{}, {Backend: generator.KAI}} {
			if res, err := generator.Render(part.Source, part.Options(opts)); err == nil {
				for _, o := range res.Objects {
					kinds[o.Kind()] = name
				}
			}
		}
	}
	dir := filepath.Join(examples.Root(t), "generator", "render")
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range kindInSource.FindAllSubmatch(data, -1) {
			rel, _ := filepath.Rel(dir, path)
			kinds[string(m[1])] = "render/" + filepath.ToSlash(rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{"Namespace", "ClusterQueue", "Queue", "Deployment", "PrometheusRule", "ValidatingAdmissionPolicy"} {
		if kinds[must] == "" {
			t.Errorf("kind %s not found in the corpus or the sources; the test no longer sees every family", must)
		}
	}
	var missing []string
	for kind, where := range kinds {
		if _, ok := encode.Rank(kind); !ok {
			missing = append(missing, kind+" (from "+where+")")
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("kind %s has no rank in encode's kindRank: give it one, after what it needs and before what needs it", m)
	}
}

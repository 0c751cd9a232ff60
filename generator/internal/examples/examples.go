// Package examples finds the agreements the repository ships, the root
// tenancy.toml and every examples/**/tenancy.toml, for tests that must hold
// for all of them.
package examples

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/tenancy-dev/tenancy/generator"
)

// Root walks up from the test's working directory to the module root.
func Root(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

// Sources reads every agreement, keyed by its slash-separated path from the
// module root, which is also the Source's Path.
func Sources(tb testing.TB) map[string]generator.Source {
	tb.Helper()
	root := Root(tb)
	out := map[string]generator.Source{}
	add := func(path string) {
		rel, err := filepath.Rel(root, path)
		if err != nil {
			tb.Fatal(err)
		}
		src, err := generator.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		src.Path = filepath.ToSlash(rel)
		out[src.Path] = src
	}
	add(filepath.Join(root, "tenancy.toml"))
	err := filepath.WalkDir(filepath.Join(root, "examples"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "tenancy.toml" {
			add(path)
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	if len(out) < 4 {
		tb.Fatalf("found %d agreements, want at least the reference and three examples", len(out))
	}
	return out
}

// Part is one rendering target of a shipped agreement: the agreement and,
// for a fleet (an agreement with [clusters]), the part Options.Cluster
// names, with Manager set for the fleet's manager (which KAI refuses).
type Part struct {
	Source  generator.Source
	Cluster string
	Manager bool
}

// Options returns opts for rendering the part.
func (p Part) Options(opts generator.Options) generator.Options {
	opts.Cluster = p.Cluster
	return opts
}

// Parts returns every part of every agreement of Sources: an agreement
// without [clusters] is one part, keyed by its path; a fleet is one part
// per cluster (generator.Parts), keyed "path@cluster", so a test over the
// shipped agreements renders every cluster of every fleet.
func Parts(tb testing.TB) map[string]Part {
	tb.Helper()
	out := map[string]Part{}
	for path, src := range Sources(tb) {
		out = AddParts(tb, out, path, src)
	}
	return out
}

// AddParts adds src's parts to out under path, as Parts keys them; an
// agreement that does not decode is one part, whose render fails.
func AddParts(tb testing.TB, out map[string]Part, path string, src generator.Source) map[string]Part {
	tb.Helper()
	names, err := generator.Parts(src)
	if err != nil || len(names) == 0 {
		out[path] = Part{Source: src}
	}
	for i, name := range names {
		out[path+"@"+name] = Part{Source: src, Cluster: name, Manager: i == 0}
	}
	return out
}

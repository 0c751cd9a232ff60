package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// copyExample copies examples/NAME, subdirectories included, into a new
// directory, as an Application's source path or a checkout would hold it.
func copyExample(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("..", "..", "examples", name)
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestSplitAgreementEverywhere: the CLI and the Argo CD plugin read
// examples/split (examples/departments in three files) as one agreement,
// and render what the one-file agreement renders.
func TestSplitAgreementEverywhere(t *testing.T) {
	want, stderr, code := runIn("../..", "render", "examples/departments/tenancy.toml")
	if code != 0 {
		t.Fatalf("render examples/departments: exit %d: %s", code, stderr)
	}
	got, stderr, code := runIn("../..", "render", "examples/split/tenancy.toml")
	if code != 0 || stderr != "" {
		t.Fatalf("render examples/split: exit %d: %s", code, stderr)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("render examples/split differs from examples/departments (-want,+got):\n%s", diff)
	}

	app := copyExample(t, "split")
	got, stderr, code = argocdRun(app, []string{"ARGOCD_APP_NAME=queues"}, "generate")
	if code != 0 {
		t.Fatalf("argocd generate: exit %d: %s", code, stderr)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("argocd generate of the split agreement differs from render (-want,+got):\n%s", diff)
	}
}

func TestSplitAgreementFailsClosed(t *testing.T) {
	app := copyExample(t, "split")
	science := filepath.Join(app, "departments", "science.toml")
	data, err := os.ReadFile(science)
	if err != nil {
		t.Fatal(err)
	}
	// physics, defined a second time, in another file.
	if err := os.WriteFile(filepath.Join(app, "departments", "product.toml"), append(data, "\n[teams.platform]\nguaranteed = 1\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	// product.toml comes first (glob order), so science.toml's tables are
	// the second definitions.
	const want = `departments/product.toml:24:8: teams.platform: team "platform" is already defined at tenancy.toml:25:8: define it in one file
departments/science.toml:2:14: departments.science: department "science" is already defined at departments/product.toml:2:14: define it in one file
departments/science.toml:10:8: teams.genomics: team "genomics" is already defined at departments/product.toml:10:8: define it in one file
departments/science.toml:17:8: teams.physics: team "physics" is already defined at departments/product.toml:17:8: define it in one file
tenancy: departments/product.toml is invalid: 4 error(s)
`
	stdout, stderr, code := argocdRun(app, []string{"ARGOCD_APP_NAME=queues"}, "generate")
	wantRun(t, outcome{code, stdout, stderr}, outcome{code: exitFailure, stderr: want})
	stdout, stderr, code = runIn(app, "check", "tenancy.toml")
	wantRun(t, outcome{code, stdout, stderr}, outcome{code: exitFailure, stderr: want})
}

// TestDiffBaseReadsSplitAgreements: diff --base reads the files a split
// agreement includes at the base revision, not the working tree's, and
// finds a change made in one of them.
func TestDiffBaseReadsSplitAgreements(t *testing.T) {
	r := newDiffGitRepo(t)
	root := "version = 1\nname = \"gpu-pool\"\nowners = [\"@acme/platform\"]\ninclude = [\"teams/*.toml\"]\n[flavors.h100]\ncapacity = 16\n"
	r.commit("split agreement", map[string]string{
		"deploy/tenancy.toml":  root,
		"deploy/teams/a.toml":  "[teams.a]\nguaranteed = 8\nowners = [\"@acme/a\"]\n",
		"deploy/teams/b.toml":  "[teams.b]\nguaranteed = 4\n",
		"elsewhere/notes.toml": "not included",
	})
	writeDiffFiles(t, r.dir, map[string]string{"deploy/teams/a.toml": "[teams.a]\nguaranteed = 6\nowners = [\"@acme/a\"]\n"})

	stdout, stderr, code := runIn(filepath.Join(r.dir, "deploy"), "diff", "--exit-code", "--base", "main")
	if code != exitApprovals {
		t.Fatalf("exit %d, want %d (changes needing owners): %s\n%s", code, exitApprovals, stderr, stdout)
	}
	for _, want := range []string{"~ ClusterQueue a (", "team a: @acme/a (h100 guaranteed 8 → 6)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	// Unchanged, it compares equal: the base's includes were read.
	r.git("checkout", "-q", "--", ".")
	if _, stderr, code := runIn(filepath.Join(r.dir, "deploy"), "diff", "--exit-code", "--base", "main"); code != exitOK {
		t.Errorf("unchanged split agreement: exit %d: %s", code, stderr)
	}

	// A problem in an included file at the base is reported there.
	r.commit("break b", map[string]string{"deploy/teams/b.toml": "[teams.b]\nguaranteed = 4\nlendable = 5\n"})
	_, stderr, code = runIn(filepath.Join(r.dir, "deploy"), "diff", "--base", "main")
	if code != exitDiffTrouble || !strings.Contains(stderr, "main:teams/b.toml:3:12: teams.b.lendable:") {
		t.Errorf("broken base: exit %d, stderr:\n%s", code, stderr)
	}
}

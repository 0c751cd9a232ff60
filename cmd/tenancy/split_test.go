package main

import (
	"os"
	"path/filepath"
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

package generator_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/internal/examples"
)

// TestSplitAgreementRendersAsOneFile: examples/split is examples/departments
// in three files, with owners and review dates; for each backend it renders
// the same bytes, so splitting an agreement changes nothing it renders.
func TestSplitAgreementRendersAsOneFile(t *testing.T) {
	root := examples.Root(t)
	for _, backend := range []generator.Backend{generator.Kueue, generator.KAI} {
		t.Run(string(backend), func(t *testing.T) {
			render := func(path string) []byte {
				src, err := generator.ReadFile(filepath.Join(root, path))
				if err != nil {
					t.Fatal(err)
				}
				res, err := generator.Render(src, generator.Options{Backend: backend})
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				return res.Manifests
			}
			one, split := render("examples/departments/tenancy.toml"), render("examples/split/tenancy.toml")
			if !bytes.Equal(one, split) {
				t.Errorf("examples/split renders differently from examples/departments:\n%s", cmp.Diff(string(one), string(split)))
			}
		})
	}
}

// writeTree writes files (slash-separated paths) under a new directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const splitRoot = `version = 1
name = "gpu-pool"
include = ["teams/*.toml"]
[flavors.h100]
capacity = 16
`

func TestSplitAgreementProblems(t *testing.T) {
	outside := writeTree(t, map[string]string{"evil.toml": "[teams.evil]\nguaranteed = 16\n"})
	tests := map[string]struct {
		files map[string]string
		link  [2]string // a symbolic link to make: name, target
		want  string
	}{
		"a rule broken in an included file is reported there, as the agreement names it": {
			files: map[string]string{"tenancy.toml": splitRoot, "teams/a.toml": "# team a\n[teams.a]\nguaranteed = 8\nlendable = 9\n"},
			want:  "deploy/teams/a.toml:4:12: teams.a.lendable: lendable (9) exceeds guaranteed (8): a team can only lend GPUs it is guaranteed",
		},
		"guarantees over capacity across files": {
			files: map[string]string{"tenancy.toml": splitRoot, "teams/a.toml": "[teams.a]\nguaranteed = 10\n", "teams/b.toml": "[teams.b]\nguaranteed = 10\n"},
			want:  "deploy/tenancy.toml:5:12: flavors.h100.capacity: teams are guaranteed 20 GPUs of flavor h100 (a 10, b 10) but its capacity is 16",
		},
		"a directory linked outside the agreement's is not read": {
			files: map[string]string{"tenancy.toml": splitRoot, "teams/a.toml": "[teams.a]\nguaranteed = 1\n"},
			link:  [2]string{"teams/out", outside},
			want:  `deploy/tenancy.toml:3:28: include[1]: "teams/out/evil.toml" matches no file in the agreement's directory: a missing file would drop its teams, so it is an error (remove the pattern if the files are gone)`,
		},
		// A message naming another key's line names its file too when
		// that is another file.
		"a department named like a team of another file": {
			files: map[string]string{"tenancy.toml": splitRoot, "teams/a.toml": "[teams.ml]\nguaranteed = 8\n", "teams/b.toml": "# ml\n[departments.ml]\nguaranteed = 8\n"},
			want:  `deploy/teams/b.toml:2:14: departments.ml: department "ml" has the name of team "ml" (line 1 of deploy/teams/a.toml): a department and a team cannot share a name (KAI queues are one namespace)`,
		},
		"a department named like the pool": {
			files: map[string]string{"tenancy.toml": splitRoot, "teams/a.toml": "[teams.a]\nguaranteed = 8\ndepartment = \"gpu-pool\"\n[departments.gpu-pool]\nguaranteed = 8\n"},
			want:  `deploy/teams/a.toml:4:14: departments.gpu-pool: department "gpu-pool" has the pool's name (name, line 2 of deploy/tenancy.toml): the pool and the department would be one Kueue Cohort and one KAI queue`,
		},
		"a team named like the default LocalQueue": {
			files: map[string]string{"tenancy.toml": splitRoot + "[guardrails]\ndefault_queue = true\n", "teams/a.toml": "[teams.default]\nnamespaces = [\"ml\"]\nguaranteed = 8\n"},
			want:  `deploy/teams/a.toml:1:8: teams.default: kueue: team "default" has the name of the LocalQueue that guardrails.default_queue (line 7 of deploy/tenancy.toml) puts in every team namespace: the team's own LocalQueue and the default one would be one object; rename the team, or turn default_queue off`,
		},
		"lending windows in a split agreement": {
			files: map[string]string{"tenancy.toml": splitRoot, "teams/a.toml": "[teams.a]\nguaranteed = 8\nlendable = 8\n[[teams.a.windows]]\nfrom = \"20:00\"\nto = \"06:00\"\nlendable = 0\n"},
			want:  "deploy/teams/a.toml:4:11: teams.a.windows[0]: lending windows need the agreement in one file: the windows controller reads the agreement from one ConfigMap key, without the files it includes (deploy/teams/a.toml); move the team back into the agreement and drop include, or drop the window",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := writeTree(t, tc.files)
			if tc.link[0] != "" {
				if err := os.Symlink(tc.link[1], filepath.Join(dir, tc.link[0])); err != nil {
					t.Fatal(err)
				}
				// A pattern naming a file through the link.
				if err := os.WriteFile(filepath.Join(dir, "tenancy.toml"), []byte(splitRoot[:len("version = 1\nname = \"gpu-pool\"\n")]+"include = [\"teams/*.toml\", \"teams/out/evil.toml\"]\n[flavors.h100]\ncapacity = 16\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			src, err := generator.ReadFileIn(filepath.Dir(dir), filepath.Join(filepath.Base(dir), "tenancy.toml"))
			if err != nil {
				t.Fatal(err)
			}
			// Name it as a user in the parent directory would.
			src.Path = "deploy/tenancy.toml"
			_, err = generator.Render(src, generator.Options{})
			var ae *generator.AgreementError
			if !errors.As(err, &ae) {
				t.Fatalf("Render: %v, want an invalid agreement", err)
			}
			got := ae.Diagnostics.Errors()
			if diff := cmp.Diff(tc.want, got.String()); diff != "" {
				t.Errorf("errors (-want,+got):\n%s", diff)
			}
		})
	}
}

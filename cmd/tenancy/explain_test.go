package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestExplainGolden compares the explanation of the reference agreement, the
// examples and cases of its own with testdata/explain/NAME/stdout.txt.
// Regenerate with: go test ./cmd/tenancy -run TestExplainGolden -update
func TestExplainGolden(t *testing.T) {
	tests := map[string]struct {
		dir  string // working directory, relative to this package
		args []string
	}{
		"reference":    {dir: "../..", args: []string{"tenancy.toml"}},
		"multi-flavor": {dir: "../..", args: []string{"examples/multi-flavor/tenancy.toml"}},
		"topology":     {dir: "../..", args: []string{"examples/topology/tenancy.toml"}},
		"departments":  {dir: "../..", args: []string{"examples/departments/tenancy.toml"}},
		// No FILE: ./tenancy.toml of the working directory.
		"warnings-and-unassigned": {dir: "testdata/explain/warnings-and-unassigned"},
		// Which priorities may borrow under each backend.
		"non-preemptible": {dir: "testdata/explain/non-preemptible"},
		// What each team runs under contention (issue 31): Kueue's first
		// come, KAI's weights, departments, JSON for tools.
		"contention-reference":       {dir: "../..", args: []string{"--contention", "--busy", "training,inference", "tenancy.toml"}},
		"contention-departments":     {dir: "../..", args: []string{"--contention", "--busy", "genomics,platform", "examples/departments/tenancy.toml"}},
		"contention-departments-kai": {dir: "../..", args: []string{"--contention", "--backend", "kai", "--busy", "science", "examples/departments/tenancy.toml"}},
		"contention-json":            {dir: "../..", args: []string{"--contention", "--busy", "search", "--output", "json", "examples/departments/tenancy.toml"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runIn(tc.dir, append([]string{"explain"}, tc.args...)...)
			if code != exitOK {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitOK, stderr)
			}
			if stderr != "" {
				t.Errorf("stderr should be empty (warnings belong to the explanation), got:\n%s", stderr)
			}
			golden := filepath.Join("testdata", "explain", name, "stdout.txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(stdout), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./cmd/tenancy -run TestExplainGolden -update to create it)", err)
			}
			if d := cmp.Diff(string(want), stdout); d != "" {
				t.Errorf("%s differs (-want,+got):\n%s", golden, d)
			}
		})
	}
}

// TestExplainIsDeterministic guards against map order leaking into the
// output (node labels are a map in the plan).
func TestExplainIsDeterministic(t *testing.T) {
	first, _, code := runIn("../..", "explain", "examples/multi-flavor/tenancy.toml")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for range 20 {
		again, _, _ := runIn("../..", "explain", "examples/multi-flavor/tenancy.toml")
		if d := cmp.Diff(first, again); d != "" {
			t.Fatalf("a second run differs (-first,+again):\n%s", d)
		}
	}
}

// TestExplainFailures: on every error explain behaves like render: the exit
// code says what kind, the reason is on stderr, and stdout stays empty.
func TestExplainFailures(t *testing.T) {
	const invalid = `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 32
[teams.training]
guaranteed = 16
lendible = 8
`
	const tooMuch = `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 8
[teams.a]
guaranteed = 8
lendable = 9
[teams.b]
guaranteed = 4
`
	tests := map[string]struct {
		files      map[string]string
		args       []string
		wantCode   int
		wantStderr string // exact, unless wantPrefix
		wantPrefix bool
	}{
		"typo in a key": {
			files:    map[string]string{"tenancy.toml": invalid},
			wantCode: exitFailure,
			wantStderr: `tenancy.toml:7:1: teams.training.lendible: unknown key "lendible" (did you mean "lendable"?)
tenancy: tenancy.toml is invalid: 1 error(s)
`,
		},
		"every problem at once": {
			files:    map[string]string{"agreement.toml": tooMuch},
			args:     []string{"agreement.toml"},
			wantCode: exitFailure,
			wantStderr: `agreement.toml:4:12: flavors.h100.capacity: teams are guaranteed 12 GPUs of flavor h100 (a 8, b 4) but its capacity is 8
agreement.toml:7:12: teams.a.lendable: lendable (9) exceeds guaranteed (8): a team can only lend GPUs it is guaranteed
tenancy: agreement.toml is invalid: 2 error(s)
`,
		},
		"missing file": {
			args:       []string{"nope.toml"},
			wantCode:   exitFailure,
			wantStderr: "tenancy: open ",
			wantPrefix: true,
		},
		"two files": {
			args:     []string{"a.toml", "b.toml"},
			wantCode: exitUsage,
			wantStderr: `tenancy explain: expected at most one FILE, got 2
Run 'tenancy explain --help' for usage.
`,
		},
		"unknown flag": {
			args:     []string{"--bakend", "kai"},
			wantCode: exitUsage,
			wantStderr: `tenancy explain: unknown flag: --bakend
Run 'tenancy explain --help' for usage.
`,
		},
		"unknown backend": {
			args:     []string{"--backend", "volcano"},
			wantCode: exitUsage,
			wantStderr: `tenancy explain: invalid options: backend "volcano": must be kueue or kai
`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for file, content := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			stdout, stderr, code := runIn(dir, append([]string{"explain"}, tc.args...)...)
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d", code, tc.wantCode)
			}
			if stdout != "" {
				t.Errorf("stdout must be empty on error, got:\n%s", stdout)
			}
			if tc.wantPrefix {
				if !strings.HasPrefix(stderr, tc.wantStderr) {
					t.Errorf("stderr = %q, want it to start with %q", stderr, tc.wantStderr)
				}
				return
			}
			if d := cmp.Diff(tc.wantStderr, stderr); d != "" {
				t.Errorf("stderr (-want,+got):\n%s", d)
			}
		})
	}
}

func TestExplainHelp(t *testing.T) {
	stdout, stderr, code := runIn(t.TempDir(), "explain", "--help")
	if code != exitOK {
		t.Errorf("exit %d, want %d", code, exitOK)
	}
	if stderr != "" {
		t.Errorf("stderr = %q, want empty", stderr)
	}
	if !strings.HasPrefix(stdout, "Usage:\n  tenancy explain [--backend kueue|kai] [--cluster NAME] [--contention [--busy TEAM,...] [--output text|json]] [FILE]\n\nPrint the agreement in FILE") {
		t.Errorf("help does not start with the synopsis and description:\n%s", stdout)
	}
}

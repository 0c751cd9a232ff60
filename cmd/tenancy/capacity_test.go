package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckCapacity(t *testing.T) {
	const file = "examples/departments/tenancy.toml"
	const short8 = "examples/departments/tenancy.toml:11:12: warning: flavors.h100.capacity: with --lose h100=8 (56 of the 64 GPUs of flavor h100), the guarantees (64: department science 40, department product 16, team platform 8) can no longer all be honoured: 8 short; neither backend ranks them, so whichever runs first keeps its GPUs\n"
	tests := map[string]struct {
		args []string
		want outcome
	}{
		"a capacity that holds every promise: no warning": {
			args: []string{"check", "--capacity", "h100=64", file},
			want: outcome{stderr: file + ": valid\n"},
		},
		"losing a node: a warning, still valid": {
			args: []string{"check", "--lose", "h100=8", file},
			want: outcome{stderr: short8 + file + ": valid\n"},
		},
		"losing a node with --strict: status 3": {
			args: []string{"check", "--lose", "h100=8", "--strict", file},
			want: outcome{code: exitCapacity, stderr: short8 + file + ": valid\n" +
				"tenancy check: examples/departments/tenancy.toml breaks 1 promise at the capacity given (--strict)\n"},
		},
		"never-lent GPUs over-promised too": {
			args: []string{"check", "--capacity", "h100=30", file},
			want: outcome{stderr: "examples/departments/tenancy.toml:11:12: warning: flavors.h100.capacity: with --capacity h100=30 (30 of the 64 GPUs of flavor h100), the guarantees (64: department science 40, department product 16, team platform 8) can no longer all be honoured: 34 short; neither backend ranks them, so whichever runs first keeps its GPUs\n" +
				"examples/departments/tenancy.toml:11:12: warning: flavors.h100.capacity: with --capacity h100=30 (30 of the 64 GPUs of flavor h100), the never-lent GPUs (32: team physics 12, team ads 8, team genomics 8, team platform 4) are over-promised by 2: they cannot all be kept even with every other team idle\n" +
				file + ": valid\n"},
		},
		"an unknown flavor is refused, naming the flag": {
			args: []string{"check", "--capacity", "h200=24", file},
			want: outcome{code: exitUsage, stderr: "tenancy check: --capacity h200=24: the agreement has no flavor \"h200\" (its flavors: h100)\nRun 'tenancy check --help' for usage.\n"},
		},
		"a value that is no count": {
			args: []string{"check", "--lose", "h100", file},
			want: outcome{code: exitUsage, stderr: "tenancy check: --lose \"h100\": want FLAVOR=GPUS, such as h100=24 (a whole number, 0 or more)\nRun 'tenancy check --help' for usage.\n"},
		},
		"losing more than there is": {
			args: []string{"check", "--lose", "h100=65", file},
			want: outcome{code: exitUsage, stderr: "tenancy check: --lose h100=65: flavor h100 has 64 GPUs, fewer than that\nRun 'tenancy check --help' for usage.\n"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runIn("../..", tc.args...)
			wantRun(t, outcome{code, stdout, stderr}, tc.want)
		})
	}
}

// TestDiffApprovals: a change to a team's guarantee and to a flavor's
// capacity names the team's and the pool's owners, and --exit-code says so
// with status 4; a change no owner is named for keeps status 1.
func TestDiffApprovals(t *testing.T) {
	old := copyExample(t, "split")
	new := copyExample(t, "split")
	edit := func(path, from, to string) {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), from) {
			t.Fatalf("%s has no %q", path, from)
		}
		if err := os.WriteFile(path, []byte(strings.Replace(string(data), from, to, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit(filepath.Join(new, "tenancy.toml"), "capacity = 64", "capacity = 72")
	edit(filepath.Join(new, "departments", "science.toml"), "guaranteed = 16\nlendable = 4", "guaranteed = 12\nlendable = 4")
	stdout, stderr, code := runIn("/", "diff", "--exit-code", filepath.Join(old, "tenancy.toml"), filepath.Join(new, "tenancy.toml"))
	if code != exitApprovals {
		t.Fatalf("exit %d, want %d: %s", code, exitApprovals, stderr)
	}
	want := "Approvals needed\n" +
		"  the pool: @acme/gpu-platform (flavor h100 capacity 64 → 72)\n" +
		"  team physics: @acme/physics @marie (h100 guaranteed 16 → 12)\n"
	if !strings.Contains(stdout, want) {
		t.Errorf("stdout lacks\n%s\nin:\n%s", want, stdout)
	}
	stdout, _, _ = runIn("/", "diff", "--output", "markdown", filepath.Join(old, "tenancy.toml"), filepath.Join(new, "tenancy.toml"))
	for _, line := range []string{
		"| team physics | @acme/physics @marie | h100 guaranteed 16 → 12 |",
		"- h100, one node (8 GPUs) lost, 64 left: every guarantee still fits",
	} {
		if !strings.Contains(stdout, line) {
			t.Errorf("markdown lacks %q:\n%s", line, stdout)
		}
	}

	// The reference agreement names no owners: changes exit 1, as before.
	plain := t.TempDir()
	ref, err := os.ReadFile("../../tenancy.toml")
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(ref), "guaranteed = 16", "guaranteed = 15", 1)
	writeDiffFiles(t, plain, map[string]string{"old.toml": string(ref), "new.toml": changed})
	if _, stderr, code := runIn(plain, "diff", "--exit-code", "old.toml", "new.toml"); code != exitFailure {
		t.Errorf("a change without owners: exit %d, want %d: %s", code, exitFailure, stderr)
	}
}

// TestDiffApprovalsOutcomeDrops: a team whose numbers in the file do not
// change but which runs less after the change (the team it borrowed from
// stops lending) needs its owners' approval too, and --exit-code says so.
func TestDiffApprovalsOutcomeDrops(t *testing.T) {
	const agreement = `version = 1
name = "gpu-pool"

[flavors.h100]
resource = "nvidia.com/gpu"
capacity = 16

[teams.a]
owners = ["@acme/a"]
guaranteed = 8
lendable = 0
borrow = 8

[teams.b]
owners = ["@acme/b"]
guaranteed = 8
lendable = 8
borrow = 0
`
	dir := t.TempDir()
	changed := strings.Replace(agreement, "lendable = 8", "lendable = 0", 1)
	writeDiffFiles(t, dir, map[string]string{"old.toml": agreement, "new.toml": changed})
	stdout, stderr, code := runIn(dir, "diff", "--exit-code", "old.toml", "new.toml")
	if code != exitApprovals {
		t.Fatalf("exit %d, want %d: %s", code, exitApprovals, stderr)
	}
	want := "Approvals needed\n" +
		"  team a: @acme/a (h100 outcome drops: alone 16 → 8, all busy 8)\n" +
		"  team b: @acme/b (h100 lendable 8 → 0)\n"
	if !strings.Contains(stdout, want) {
		t.Errorf("stdout lacks\n%s\nin:\n%s", want, stdout)
	}
}

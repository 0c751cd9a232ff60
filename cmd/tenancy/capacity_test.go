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
	const rangeNote = "A range (8-16) is the least and the most the team runs: with fewer GPUs than the scheduler\n" +
		"admits (Kueue admits by quota alone, KAI gives every queue its deserved quota), which pods wait\n" +
		"for a node is first come, and so is the order in which borrowers arrive.\n\n"
	// Kueue admits the same with a node fewer: all busy, 64 GPUs of
	// quota on 56, and the 8 that wait may be any team's.
	const lose8 = file + " with --lose h100=8, on kueue: what each team runs\n" +
		"h100 (nvidia.com/gpu, capacity 64 → 56)\n" +
		"  TEAM      GUARANTEED  ALONE  ALL BUSY\n" +
		"  ads       8           12     8-12 → 0-12\n" +
		"  genomics  16          32     16-24 → 8-24\n" +
		"  physics   16          24     16-24 → 8-24\n" +
		"  platform  8           12     8-12 → 0-12\n" +
		"  search    8           16     8-16 → 0-16\n\n" + rangeNote
	tests := map[string]struct {
		args []string
		want outcome
	}{
		"a capacity that holds every promise: no warning, no table": {
			args: []string{"check", "--capacity", "h100=64", file},
			want: outcome{stderr: file + ": valid\n"},
		},
		"losing a node: a warning, still valid, and what each team runs": {
			args: []string{"check", "--lose", "h100=8", file},
			want: outcome{stdout: lose8, stderr: short8 + file + ": valid\n"},
		},
		// --strict fails the agreement: the last line says so, never
		// "valid".
		"losing a node with --strict: status 3": {
			args: []string{"check", "--lose", "h100=8", "--strict", file},
			want: outcome{code: exitCapacity, stdout: lose8, stderr: short8 +
				"tenancy check: examples/departments/tenancy.toml breaks 1 promise at the capacity given (--strict)\n"},
		},
		"losing a node with --strict, GitHub annotations: status 3, no valid": {
			args: []string{"check", "--lose", "h100=8", "--strict", "--output", "github", file},
			want: outcome{code: exitCapacity,
				stdout: "::warning file=examples/departments/tenancy.toml,line=11,col=12,title=tenancy check::flavors.h100.capacity: with --lose h100=8 (56 of the 64 GPUs of flavor h100), the guarantees (64: department science 40, department product 16, team platform 8) can no longer all be honoured: 8 short; neither backend ranks them, so whichever runs first keeps its GPUs\n",
				stderr: "tenancy check: examples/departments/tenancy.toml breaks 1 promise at the capacity given (--strict)\n"},
		},
		// KAI divides the 16 GPUs left: training alone runs 16, and
		// every team busy, the deserved quotas (32) hold more than the
		// nodes, so 16 wait, any team's.
		"kai, half the nodes: what each team runs there": {
			args: []string{"check", "--backend", "kai", "--capacity", "h100=16", "tenancy.toml"},
			want: outcome{
				stdout: "tenancy.toml with --capacity h100=16, on kai: what each team runs\n" +
					"h100 (nvidia.com/gpu, capacity 32 → 16)\n" +
					"  TEAM       GUARANTEED  ALONE    ALL BUSY\n" +
					"  inference  8           8        8 → 0-8\n" +
					"  research   8           16       8 → 0-8\n" +
					"  training   16          24 → 16  16 → 0-16\n\n" + rangeNote,
				stderr: "tenancy.toml:11:12: warning: flavors.h100.capacity: with --capacity h100=16 (16 of the 32 GPUs of flavor h100), the guarantees (32: team training 16, team inference 8, team research 8) can no longer all be honoured: 16 short; neither backend ranks them, so whichever runs first keeps its GPUs\n" +
					"tenancy.toml:14:12: warning: priorities.critical: kai: KAI treats PriorityClass values below 100 as preemptible (may borrow) and the others as non-preemptible (quota only): the PriorityClasses get critical 1000 -> 99, standard 100 -> 98, scavenger 10 -> 97, in the agreement's order\n" +
					"tenancy.toml:22:12: warning: teams.training.lendable: kai: KAI has no lending limit: all 16 idle guaranteed GPUs may be lent, not only 8; they are reclaimed when the team needs them\n" +
					"tenancy.toml: valid\n"},
		},
		"never-lent GPUs over-promised too": {
			args: []string{"check", "--capacity", "h100=30", file},
			want: outcome{stdout: file + " with --capacity h100=30, on kueue: what each team runs\n" +
				"h100 (nvidia.com/gpu, capacity 64 → 30)\n" +
				"  TEAM      GUARANTEED  ALONE    ALL BUSY\n" +
				"  ads       8           12       8-12 → 0-12\n" +
				"  genomics  16          32 → 30  16-24 → 0-24\n" +
				"  physics   16          24       16-24 → 0-24\n" +
				"  platform  8           12       8-12 → 0-12\n" +
				"  search    8           16       8-16 → 0-16\n\n" + rangeNote,
				stderr: "examples/departments/tenancy.toml:11:12: warning: flavors.h100.capacity: with --capacity h100=30 (30 of the 64 GPUs of flavor h100), the guarantees (64: department science 40, department product 16, team platform 8) can no longer all be honoured: 34 short; neither backend ranks them, so whichever runs first keeps its GPUs\n" +
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

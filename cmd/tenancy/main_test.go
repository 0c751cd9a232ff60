package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator"
)

// rootAgreementText is the repository's tenancy.toml, the agreement the
// README renders first.
func rootAgreementText(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../tenancy.toml")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// exampleText reads examples/NAME/tenancy.toml.
func exampleText(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", name, "tenancy.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// runInTempDir runs the command in-process in a fresh directory holding files,
// with a terminal on stdin as a person at a shell has.
func runInTempDir(t *testing.T, files map[string]string, args ...string) (dir, stdout, stderr string, code int) {
	t.Helper()
	dir = t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	e := &env{
		stdin:           strings.NewReader(""),
		stdout:          &out,
		stderr:          &errb,
		getenv:          func(string) string { return "" },
		environ:         func() []string { return nil },
		dir:             dir,
		stdinIsTerminal: true,
	}
	code = run(e, args)
	return dir, out.String(), errb.String(), code
}

// Agreements the cases below use. Line numbers matter: the expected
// messages point into them.
const (
	typoAgreement = `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 32
[teams.training]
guaranteed = 16
lendible = 8
`
	manyProblemsAgreement = `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 8
[teams.training]
guaranteed = 16
lendable = 20
[teams.research]
namespaces = ["training"]
weight = -1
`
	// lendingAgreement lends part of a guarantee, which KAI cannot express.
	lendingAgreement = `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 32
[teams.training]
guaranteed = 16
lendable = 8
[teams.research]
guaranteed = 16
lendable = 16
`
	warningAgreement = `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 32
[teams.training]
guaranteed = 16
borrow = 8
`
)

func TestAgreementErrorsExitOneWithNothingOnStdout(t *testing.T) {
	tests := map[string]struct {
		files map[string]string
		args  []string
		// wantStderr is the whole of stderr; wantStderrContains is used
		// when part of it depends on the machine (a temporary path).
		wantStderr         string
		wantStderrContains []string
	}{
		"render: unknown key": {
			files: map[string]string{"tenancy.toml": typoAgreement},
			args:  []string{"render"},
			wantStderr: `tenancy.toml:7:1: teams.training.lendible: unknown key "lendible" (did you mean "lendable"?)
tenancy: tenancy.toml is invalid: 1 error(s)
`,
		},
		"render --backend kai: unknown key": {
			files: map[string]string{"tenancy.toml": typoAgreement},
			args:  []string{"render", "--backend", "kai"},
			wantStderr: `tenancy.toml:7:1: teams.training.lendible: unknown key "lendible" (did you mean "lendable"?)
tenancy: tenancy.toml is invalid: 1 error(s)
`,
		},
		"render --kueue-api v1beta1: unknown key": {
			files: map[string]string{"agreements.toml": typoAgreement},
			args:  []string{"render", "--kueue-api", "v1beta1", "agreements.toml"},
			wantStderr: `agreements.toml:7:1: teams.training.lendible: unknown key "lendible" (did you mean "lendable"?)
tenancy: agreements.toml is invalid: 1 error(s)
`,
		},
		"check: unknown key": {
			files: map[string]string{"tenancy.toml": typoAgreement},
			args:  []string{"check"},
			wantStderr: `tenancy.toml:7:1: teams.training.lendible: unknown key "lendible" (did you mean "lendable"?)
tenancy: tenancy.toml is invalid: 1 error(s)
`,
		},
		"render: TOML syntax error": {
			files: map[string]string{"tenancy.toml": "version = 1\nname = \"gpu-pool\n"},
			args:  []string{"render"},
			wantStderr: `tenancy.toml:2:17: TOML syntax error: basic strings cannot have new lines
tenancy: tenancy.toml is invalid: 1 error(s)
`,
		},
		"render: every problem, in file order, with the warnings": {
			files: map[string]string{"tenancy.toml": manyProblemsAgreement},
			args:  []string{"render"},
			wantStderr: `tenancy.toml:4:12: flavors.h100.capacity: teams are guaranteed 16 GPUs of flavor h100 (training 16) but its capacity is 8
tenancy.toml:7:12: teams.training.lendable: lendable (20) exceeds guaranteed (16): a team can only lend GPUs it is guaranteed
tenancy.toml:9:15: teams.research.namespaces[0]: namespace "training" already belongs to team "training": a namespace can belong to one team only
tenancy.toml:10:10: teams.research.weight: must not be negative, got -1
tenancy: tenancy.toml is invalid: 4 error(s)
`,
		},
		"check: every problem": {
			files: map[string]string{"tenancy.toml": manyProblemsAgreement},
			args:  []string{"check", "tenancy.toml"},
			wantStderr: `tenancy.toml:4:12: flavors.h100.capacity: teams are guaranteed 16 GPUs of flavor h100 (training 16) but its capacity is 8
tenancy.toml:7:12: teams.training.lendable: lendable (20) exceeds guaranteed (16): a team can only lend GPUs it is guaranteed
tenancy.toml:9:15: teams.research.namespaces[0]: namespace "training" already belongs to team "training": a namespace can belong to one team only
tenancy.toml:10:10: teams.research.weight: must not be negative, got -1
tenancy: tenancy.toml is invalid: 4 error(s)
`,
		},
		"render: a file in a subdirectory is named as given": {
			files: map[string]string{"tenancy.toml": typoAgreement},
			args:  []string{"render", "./tenancy.toml"},
			wantStderr: `./tenancy.toml:7:1: teams.training.lendible: unknown key "lendible" (did you mean "lendable"?)
tenancy: ./tenancy.toml is invalid: 1 error(s)
`,
		},
		"render: KAI-only error (queue name collision)": {
			files: map[string]string{"tenancy.toml": "version = 1\nname = \"gpu-pool\"\n[flavors.h100]\ncapacity = 8\n[teams.gpu-pool]\nguaranteed = 8\n"},
			args:  []string{"render", "--backend=kai"},
			wantStderr: `tenancy.toml:5:8: teams.gpu-pool: kai: queue name "gpu-pool" is used both by the pool queue and by team gpu-pool
tenancy: tenancy.toml is invalid: 1 error(s)
`,
		},
		"render: empty file": {
			files: map[string]string{"tenancy.toml": ""},
			args:  []string{"render"},
			wantStderr: `tenancy.toml:1:1: flavors: at least one flavor is required: its GPUs and how many the cluster has
    [flavors.h100]
    capacity = 32
tenancy.toml:1:1: name: is required: name the shared GPU pool (the Kueue Cohort and KAI parent queue) at the top of the file
    name = "gpu-pool"
tenancy.toml:1:1: teams: the agreement has no teams: add at least one, with its guaranteed GPUs
    [teams.training]
    guaranteed = 8
tenancy.toml:1:1: version: is required: add it at the top of the file
    version = 1
tenancy: tenancy.toml is invalid: 4 error(s)
`,
		},
		"render: missing file": {
			args:               []string{"render", "missing.toml"},
			wantStderrContains: []string{"tenancy: open ", "missing.toml: no such file or directory (no agreement yet? 'tenancy init missing.toml' writes a commented one to start from)\n"},
		},
		"render: no tenancy.toml in the directory": {
			args:               []string{"render"},
			wantStderrContains: []string{"tenancy.toml: no such file or directory (no agreement yet? 'tenancy init' writes a commented one to start from)\n"},
		},
		"render: file over 1 MiB": {
			files:              map[string]string{"big.toml": typoAgreement + strings.Repeat("#", generator.MaxAgreementSize)},
			args:               []string{"render", "big.toml"},
			wantStderrContains: []string{"big.toml: agreement exceeds 1 MiB\n"},
		},
		"check: file over 1 MiB": {
			files:              map[string]string{"tenancy.toml": strings.Repeat("\n", generator.MaxAgreementSize+1)},
			args:               []string{"check"},
			wantStderrContains: []string{"tenancy.toml: agreement exceeds 1 MiB\n"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, stdout, stderr, code := runInTempDir(t, tc.files, tc.args...)
			if code != exitFailure {
				t.Errorf("exit code = %d, want %d", code, exitFailure)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing: partial output can make Argo CD prune", stdout)
			}
			if tc.wantStderr != "" {
				if diff := cmp.Diff(tc.wantStderr, stderr); diff != "" {
					t.Errorf("stderr (-want,+got):\n%s", diff)
				}
			}
			for _, want := range tc.wantStderrContains {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr = %q, want it to contain %q", stderr, want)
				}
			}
		})
	}
}

func TestUsageErrorsExitTwoWithNothingOnStdout(t *testing.T) {
	tests := map[string]struct {
		args []string
		// wantStderr lines must all appear in stderr.
		wantStderr []string
	}{
		"unknown flag": {
			args:       []string{"render", "--bakend", "kai"},
			wantStderr: []string{"tenancy render: unknown flag: --bakend\n", "Run 'tenancy render --help' for usage.\n"},
		},
		"unknown flag after FILE": {
			args:       []string{"check", "tenancy.toml", "--bakend", "kai"},
			wantStderr: []string{"tenancy check: unknown flag: --bakend\n"},
		},
		"unknown check --backend value": {
			args:       []string{"check", "--backend", "volcano"},
			wantStderr: []string{"tenancy check: invalid options: backend \"volcano\": must be kueue or kai\n"},
		},
		"unknown --backend value": {
			args:       []string{"render", "--backend", "volcano"},
			wantStderr: []string{"tenancy render: invalid options: backend \"volcano\": must be kueue or kai\n"},
		},
		"unknown --kueue-api value": {
			args:       []string{"render", "--kueue-api", "v1"},
			wantStderr: []string{"tenancy render: invalid options: kueue API \"v1\": must be v1beta2 or v1beta1\n"},
		},
		"bad option before a bad agreement": {
			args:       []string{"render", "--backend", "volcano", "missing.toml"},
			wantStderr: []string{"backend \"volcano\": must be kueue or kai\n"},
		},
		"flag without its value": {
			args:       []string{"render", "--backend"},
			wantStderr: []string{"tenancy render: flag needs an argument: --backend\n"},
		},
		"two FILE arguments to render": {
			args:       []string{"render", "a.toml", "b.toml"},
			wantStderr: []string{"tenancy render: expected at most one FILE, got 2\n"},
		},
		"two FILE arguments to check": {
			args:       []string{"check", "a.toml", "--", "b.toml"},
			wantStderr: []string{"tenancy check: expected at most one FILE, got 2\n"},
		},
		"unknown command": {
			args:       []string{"rendr"},
			wantStderr: []string{"tenancy: unknown command \"rendr\" (did you mean \"render\"?)\n", "Usage:\n  tenancy <command> [flags] [args]\n"},
		},
		"unknown command, nothing close": {
			args:       []string{"deploy"},
			wantStderr: []string{"tenancy: unknown command \"deploy\"\n", "Usage:\n  tenancy <command> [flags] [args]\n"},
		},
		"help of an unknown command": {
			args:       []string{"help", "chek"},
			wantStderr: []string{"tenancy help: unknown command \"chek\" (did you mean \"check\"?)\nRun 'tenancy --help' for the commands.\n"},
		},
		"help of two commands": {
			args:       []string{"help", "render", "check"},
			wantStderr: []string{"tenancy help: expected at most one COMMAND, got 2\n"},
		},
		"unknown check --output": {
			args:       []string{"check", "--output", "junit"},
			wantStderr: []string{"tenancy check: --output \"junit\": want text, github or sarif\n"},
		},
		"init: two FILE arguments": {
			args:       []string{"init", "a.toml", "b.toml"},
			wantStderr: []string{"tenancy init: expected at most one FILE, got 2\n"},
		},
		"explain --at in the future": {
			args:       []string{"explain", "--at", "+3d"},
			wantStderr: []string{"tenancy explain: --at: \"+3d\" is neither RFC 3339 (2026-11-01T00:00:00Z) nor relative (-30d, -12h, now)\n"},
		},
		"no command at a terminal": {
			args:       []string{},
			wantStderr: []string{"Usage:\n  tenancy <command> [flags] [args]\n"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, stdout, stderr, code := runInTempDir(t, map[string]string{"tenancy.toml": rootAgreementText(t)}, tc.args...)
			if code != exitUsage {
				t.Errorf("exit code = %d, want %d", code, exitUsage)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			for _, want := range tc.wantStderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr = %q, want it to contain %q", stderr, want)
				}
			}
		})
	}
}

func TestHelpExitsZero(t *testing.T) {
	tests := map[string]struct {
		args       []string
		wantStdout string // must appear in stdout
	}{
		"--help":        {args: []string{"--help"}, wantStdout: "Usage:\n  tenancy <command> [flags] [args]\n"},
		"-h":            {args: []string{"-h"}, wantStdout: "Exit codes: 0 success, 1 invalid agreement"},
		"help":          {args: []string{"help"}, wantStdout: "  render     print the agreement's manifests as one YAML stream\n"},
		"render --help": {args: []string{"render", "--help"}, wantStdout: "tenancy render [--backend kueue|kai] [--kueue-api v1beta2|v1beta1] [--cluster NAME] [FILE]"},
		"render -h after a FILE": {
			args:       []string{"render", "tenancy.toml", "-h"},
			wantStdout: "scheduler to render for: kueue or kai",
		},
		"check --help":                          {args: []string{"check", "--help"}, wantStdout: "Check the agreement in FILE (default ./tenancy.toml; - reads it from stdin)\nexactly as render does"},
		"check --help names the backend prefix": {args: []string{"check", "--help"}, wantStdout: `starts with its name ("kueue: " or "kai: ")`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, stdout, stderr, code := runInTempDir(t, nil, tc.args...)
			if code != exitOK {
				t.Errorf("exit code = %d, want %d (stderr %q)", code, exitOK, stderr)
			}
			if !strings.Contains(stdout, tc.wantStdout) {
				t.Errorf("stdout = %q, want it to contain %q", stdout, tc.wantStdout)
			}
			if stderr != "" {
				t.Errorf("stderr = %q, want nothing", stderr)
			}
		})
	}
}

// TestRenderSucceeds checks that stdout is exactly the library's manifests,
// wherever the flags are, and that warnings go to stderr only.
func TestRenderSucceeds(t *testing.T) {
	reference := rootAgreementText(t)
	manifests := func(t *testing.T, src string, opts generator.Options) string {
		t.Helper()
		res, err := generator.Render(generator.Source{Path: "tenancy.toml", Data: []byte(src)}, opts)
		if err != nil {
			t.Fatal(err)
		}
		return string(res.Manifests)
	}
	kai := generator.Options{Backend: generator.KAI}
	// What KAI cannot express of lendingAgreement is said on stderr.
	const kaiLendingWarning = "tenancy.toml:7:12: warning: teams.training.lendable: kai: KAI has no lending limit: all 16 idle guaranteed GPUs may be lent, not only 8; they are reclaimed when the team needs them\n"
	tests := map[string]struct {
		agreement  string
		args       []string
		opts       generator.Options
		wantStderr string
	}{
		"default file and backend": {
			agreement: reference,
			args:      []string{"render"},
		},
		"FILE argument": {
			agreement: reference,
			args:      []string{"render", "tenancy.toml"},
		},
		"flags before FILE": {
			agreement:  lendingAgreement,
			args:       []string{"render", "--backend", "kai", "tenancy.toml"},
			opts:       kai,
			wantStderr: kaiLendingWarning,
		},
		"flags after FILE": {
			agreement:  lendingAgreement,
			args:       []string{"render", "tenancy.toml", "--backend=kai"},
			opts:       kai,
			wantStderr: kaiLendingWarning,
		},
		"flags around FILE": {
			agreement: reference,
			args:      []string{"render", "--backend", "kueue", "tenancy.toml", "--kueue-api", "v1beta1"},
			opts:      generator.Options{KueueAPI: generator.KueueV1beta1},
		},
		"warnings go to stderr, manifests to stdout": {
			agreement:  warningAgreement,
			args:       []string{"render"},
			wantStderr: "tenancy.toml:7:10: warning: teams.training.borrow: borrow (8) exceeds the 0 GPUs of flavor h100 the other teams can lend: at most 0 can ever be borrowed\n",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, stdout, stderr, code := runInTempDir(t, map[string]string{"tenancy.toml": tc.agreement}, tc.args...)
			if code != exitOK {
				t.Fatalf("exit code = %d, want %d (stderr %q)", code, exitOK, stderr)
			}
			if diff := cmp.Diff(manifests(t, tc.agreement, tc.opts), stdout); diff != "" {
				t.Errorf("stdout (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStderr, stderr); diff != "" {
				t.Errorf("stderr (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestCheckValid(t *testing.T) {
	tests := map[string]struct {
		agreement  string
		args       []string
		wantStderr string
	}{
		"reference agreement, for Kueue": {
			agreement:  rootAgreementText(t),
			args:       []string{"check", "--backend", "kueue"},
			wantStderr: "tenancy.toml: valid\n",
		},
		"reference agreement, for KAI: KAI's warnings, named": {
			agreement: rootAgreementText(t),
			args:      []string{"check", "--backend", "kai"},
			wantStderr: "tenancy.toml:14:12: warning: priorities.critical: kai: KAI treats PriorityClass values below 100 as preemptible (may borrow) and the others as non-preemptible (quota only): the PriorityClasses get critical 1000 -> 99, standard 100 -> 98, scavenger 10 -> 97, in the agreement's order\n" +
				"tenancy.toml:22:12: warning: teams.training.lendable: kai: KAI has no lending limit: all 16 idle guaranteed GPUs may be lent, not only 8; they are reclaimed when the team needs them\n" +
				"tenancy.toml: valid\n",
		},
		"no backend key: what render renders, Kueue": {
			agreement:  rootAgreementText(t),
			args:       []string{"check"},
			wantStderr: "tenancy.toml: valid\n",
		},
		"both backends named: both checked, KAI's warnings named": {
			agreement: "backend = [\"kueue\", \"kai\"]\n" + rootAgreementText(t),
			args:      []string{"check"},
			wantStderr: "tenancy.toml:15:12: warning: priorities.critical: kai: KAI treats PriorityClass values below 100 as preemptible (may borrow) and the others as non-preemptible (quota only): the PriorityClasses get critical 1000 -> 99, standard 100 -> 98, scavenger 10 -> 97, in the agreement's order\n" +
				"tenancy.toml:23:12: warning: teams.training.lendable: kai: KAI has no lending limit: all 16 idle guaranteed GPUs may be lent, not only 8; they are reclaimed when the team needs them\n" +
				"tenancy.toml: valid\n",
		},
		"multi-flavor example written for Kueue alone: nothing of KAI's": {
			agreement:  kueueOnlyExample(t),
			args:       []string{"check"},
			wantStderr: "tenancy.toml: valid\n",
		},
		"warnings do not fail the check": {
			agreement: warningAgreement,
			args:      []string{"check", "tenancy.toml"},
			wantStderr: "tenancy.toml:7:10: warning: teams.training.borrow: borrow (8) exceeds the 0 GPUs of flavor h100 the other teams can lend: at most 0 can ever be borrowed\n" +
				"tenancy.toml: valid\n",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, stdout, stderr, code := runInTempDir(t, map[string]string{"tenancy.toml": tc.agreement}, tc.args...)
			if code != exitOK {
				t.Errorf("exit code = %d, want %d", code, exitOK)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			if diff := cmp.Diff(tc.wantStderr, stderr); diff != "" {
				t.Errorf("stderr (-want,+got):\n%s", diff)
			}
		})
	}
}

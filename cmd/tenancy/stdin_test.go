package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator"
)

// readGolden returns a golden file of another test, to compare stdin's
// output with what the same agreement gives when read from a file.
func readGolden(t *testing.T, elem ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"testdata"}, elem...)...))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStdin: every command that reads an agreement takes - for stdin and
// names it <stdin> in every message, and behaves as with a file otherwise:
// same exit codes, nothing on stdout on error.
func TestStdin(t *testing.T) {
	reference := rootAgreementText(t)
	// rendered is what the library gives for src named <stdin>: the
	// manifests, and the warnings as the CLI prints them.
	rendered := func(src string, opts generator.Options) (manifests, warnings string) {
		res, err := generator.Render(generator.Source{Path: generator.StdinName, Data: []byte(src)}, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range res.Warnings {
			warnings += d.String() + "\n"
		}
		return string(res.Manifests), warnings
	}
	referenceManifests, _ := rendered(reference, generator.Options{})
	kaiManifests, kaiWarnings := rendered(lendingAgreement, generator.Options{Backend: generator.KAI})
	if !strings.HasPrefix(kaiWarnings, "<stdin>:7:") {
		t.Fatalf("lendingAgreement's KAI warning = %q, want one on <stdin>:7", kaiWarnings)
	}
	gainsOld := readDiffCase(t, "team-gains-gpus", "old.toml")
	gainsNew := readDiffCase(t, "team-gains-gpus", "new.toml")
	gainsText := readDiffCase(t, "team-gains-gpus", "stdout.txt")
	// A directory holding the diff case's two files, for a side read from a file.
	gainsDir := filepath.Join("testdata", "diff", "team-gains-gpus")

	tests := map[string]struct {
		dir        string // working directory; empty for a fresh temporary one
		stdin      io.Reader
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
		// wantStderrContains is used instead of wantStderr when the whole
		// text is not the point (usage errors end with a hint).
		wantStderrContains []string
	}{
		"render -": {
			stdin:      strings.NewReader(reference),
			args:       []string{"render", "-"},
			wantStdout: referenceManifests,
		},
		"render - with flags after it": {
			stdin:      strings.NewReader(lendingAgreement),
			args:       []string{"render", "-", "--backend", "kai"},
			wantStdout: kaiManifests,
			wantStderr: kaiWarnings,
		},
		"render - invalid": {
			stdin:    strings.NewReader(typoAgreement),
			args:     []string{"render", "-"},
			wantCode: exitFailure,
			wantStderr: `<stdin>:7:1: teams.training.lendible: unknown key "lendible" (did you mean "lendable"?)
tenancy: <stdin> is invalid: 1 error(s)
`,
		},
		"render - over 1 MiB": {
			stdin:      strings.NewReader(typoAgreement + strings.Repeat("#", generator.MaxAgreementSize)),
			args:       []string{"render", "-"},
			wantCode:   exitFailure,
			wantStderr: "tenancy: <stdin>: agreement exceeds 1 MiB\n",
		},
		"render - read error": {
			stdin:      iotest.ErrReader(errors.New("broken pipe")),
			args:       []string{"render", "-"},
			wantCode:   exitFailure,
			wantStderr: "tenancy: <stdin>: broken pipe\n",
		},
		"check - valid": {
			stdin:      strings.NewReader(reference),
			args:       []string{"check", "--backend", "kueue", "-"},
			wantStderr: "<stdin>: valid\n",
		},
		"check - valid with a warning": {
			stdin:      strings.NewReader(warningAgreement),
			args:       []string{"check", "--backend", "kueue", "-"},
			wantStderr: "<stdin>:7:10: warning: teams.training.borrow: borrow (8) exceeds the 0 GPUs of flavor h100 the other teams can lend: at most 0 can ever be borrowed\n<stdin>: valid\n",
		},
		"check - invalid": {
			stdin:    strings.NewReader(manyProblemsAgreement),
			args:     []string{"check", "-"},
			wantCode: exitFailure,
			wantStderr: `<stdin>:4:12: flavors.h100.capacity: teams are guaranteed 16 GPUs of flavor h100 (training 16) but its capacity is 8
<stdin>:7:12: teams.training.lendable: lendable (20) exceeds guaranteed (16): a team can only lend GPUs it is guaranteed
<stdin>:9:15: teams.research.namespaces[0]: namespace "training" already belongs to team "training": a namespace can belong to one team only
<stdin>:10:10: teams.research.weight: must not be negative, got -1
tenancy: <stdin> is invalid: 4 error(s)
`,
		},
		"check - empty": {
			stdin:    strings.NewReader(""),
			args:     []string{"check", "-"},
			wantCode: exitFailure,
			wantStderrContains: []string{
				"<stdin>:1:1: version: is required",
				"tenancy: <stdin> is invalid: 4 error(s)\n",
			},
		},
		"explain -": {
			stdin: strings.NewReader(reference),
			args:  []string{"explain", "-"},
			// The reference explanation names its file in the first line only.
			wantStdout: strings.Replace(readGolden(t, "explain", "reference", "stdout.txt"), "tenancy.toml: ", "<stdin>: ", 1),
		},
		"explain - invalid": {
			stdin:    strings.NewReader(typoAgreement),
			args:     []string{"explain", "-"},
			wantCode: exitFailure,
			wantStderr: `<stdin>:7:1: teams.training.lendible: unknown key "lendible" (did you mean "lendable"?)
tenancy: <stdin> is invalid: 1 error(s)
`,
		},
		"diff FILE - (new side on stdin)": {
			dir:        gainsDir,
			stdin:      strings.NewReader(gainsNew),
			args:       []string{"diff", "old.toml", "-"},
			wantStdout: strings.Replace(gainsText, "old.toml → new.toml", "old.toml → <stdin>", 1),
		},
		"diff - FILE (old side on stdin)": {
			dir:        gainsDir,
			stdin:      strings.NewReader(gainsOld),
			args:       []string{"diff", "-", "new.toml"},
			wantStdout: strings.Replace(gainsText, "old.toml → new.toml", "<stdin> → new.toml", 1),
		},
		"diff FILE - with --exit-code": {
			dir:        gainsDir,
			stdin:      strings.NewReader(gainsNew),
			args:       []string{"diff", "--exit-code", "old.toml", "-"},
			wantCode:   exitFailure,
			wantStdout: strings.Replace(gainsText, "old.toml → new.toml", "old.toml → <stdin>", 1),
		},
		"diff FILE - invalid stdin": {
			dir:      gainsDir,
			stdin:    strings.NewReader(brokenDiffAgreement),
			args:     []string{"diff", "old.toml", "-"},
			wantCode: exitDiffTrouble,
			wantStderrContains: []string{
				"<stdin>:9:",
				"tenancy diff: the new side, <stdin>, is invalid: 1 error(s)\n",
			},
		},
		"diff - -": {
			dir:      gainsDir,
			stdin:    strings.NewReader(gainsNew),
			args:     []string{"diff", "-", "-"},
			wantCode: exitUsage,
			wantStderr: `tenancy diff: OLD and NEW are both - (stdin): at most one side can be read from stdin
Run 'tenancy diff --help' for usage.
`,
		},
		"diff --base REV -": {
			dir:      gainsDir,
			stdin:    strings.NewReader(gainsNew),
			args:     []string{"diff", "--base", "HEAD", "-"},
			wantCode: exitUsage,
			wantStderrContains: []string{
				"tenancy diff: --base reads FILE at a git revision, and - (stdin) is not a file in git",
				"tenancy diff - FILE",
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := tc.dir
			if dir == "" {
				dir = t.TempDir()
			}
			stdout, stderr, code := runWithStdin(dir, tc.stdin, tc.args...)
			if code != tc.wantCode {
				t.Errorf("exit code = %d, want %d (stderr %q)", code, tc.wantCode, stderr)
			}
			if diff := cmp.Diff(tc.wantStdout, stdout); diff != "" {
				t.Errorf("stdout (-want,+got):\n%s", diff)
			}
			if tc.wantStderrContains == nil {
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

// TestStdinInHelp: each command's --help says that - is stdin, with an
// example a user can copy.
func TestStdinInHelp(t *testing.T) {
	tests := map[string]struct {
		args       []string
		wantStdout []string // each must appear in stdout
	}{
		"render": {
			args:       []string{"render", "--help"},
			wantStdout: []string{"- reads it from stdin", "git show main:tenancy.toml | tenancy render -"},
		},
		"check": {
			args:       []string{"check", "--help"},
			wantStdout: []string{"- reads it from stdin", "git show main:tenancy.toml | tenancy check -"},
		},
		"explain": {
			args:       []string{"explain", "--help"},
			wantStdout: []string{"- reads it from stdin", "git show main:tenancy.toml | tenancy explain -"},
		},
		"diff": {
			args:       []string{"diff", "--help"},
			wantStdout: []string{"One of OLD and NEW may be -", "git show main:tenancy.toml | tenancy diff - tenancy.toml"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runWithStdin(t.TempDir(), strings.NewReader(""), tc.args...)
			if code != exitOK || stderr != "" {
				t.Errorf("exit code = %d, stderr %q; want 0 and nothing", code, stderr)
			}
			for _, want := range tc.wantStdout {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout = %q, want it to contain %q", stdout, want)
				}
			}
		})
	}
}

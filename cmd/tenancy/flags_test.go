package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator"
)

// TestFlagsAfterArguments: flags may come after the arguments, as kubectl
// users type them, with - (stdin) among the arguments too.
func TestFlagsAfterArguments(t *testing.T) {
	kai, err := generator.Render(generator.Source{Path: generator.StdinName, Data: []byte(lendingAgreement)}, generator.Options{Backend: generator.KAI})
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		stdin      string
		args       []string
		wantCode   int
		wantStdout string // exact, when set
		inStderr   string
	}{
		"render - then --backend": {
			stdin:      lendingAgreement,
			args:       []string{"render", "-", "--backend", "kai"},
			wantStdout: string(kai.Manifests),
			inStderr:   "<stdin>:7:12: warning:",
		},
		"diff OLD NEW then --exit-code": {
			args:     []string{"diff", "testdata/diff/team-gains-gpus/old.toml", "testdata/diff/team-gains-gpus/new.toml", "--exit-code", "--output", "json"},
			wantCode: exitFailure,
		},
		"report FILE then its flags": {
			args:     []string{"report", "../../generator/testdata/monitoring/tenancy.toml", "--from", "-1h", "--prometheus", "localhost:9090"},
			wantCode: exitUsage,
			inStderr: `--prometheus "localhost:9090": want an http(s) URL`,
		},
		"a value that starts with a dash": {
			args:     []string{"report", "--prometheus", "http://x", "--from", "-2h", "--to", "-3h"},
			wantCode: exitUsage,
			inStderr: "tenancy report: --to (",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runWithStdin(".", strings.NewReader(tc.stdin), tc.args...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.wantCode, stderr)
			}
			if tc.wantStdout != "" {
				if diff := cmp.Diff(tc.wantStdout, stdout); diff != "" {
					t.Errorf("stdout (-want,+got):\n%s", diff)
				}
			}
			if tc.wantCode != exitOK && tc.wantCode != exitFailure && stdout != "" {
				t.Errorf("stdout = %q on a usage error, want nothing", stdout)
			}
			if !strings.Contains(stderr, tc.inStderr) {
				t.Errorf("stderr = %q, want it to contain %q", stderr, tc.inStderr)
			}
		})
	}
}

// TestUnknownFlags: every command refuses a flag it does not have with exit
// 2, the flag as the user typed it on stderr and nothing on stdout; a long
// flag with one dash gets a hint instead of pflag's shorthand wording.
func TestUnknownFlags(t *testing.T) {
	tests := map[string]struct {
		args []string
		want string
	}{
		"render":          {args: []string{"render", "--nope"}, want: "tenancy render: unknown flag: --nope\nRun 'tenancy render --help' for usage.\n"},
		"check":           {args: []string{"check", "tenancy.toml", "--nope=1"}, want: "tenancy check: unknown flag: --nope\n"},
		"explain":         {args: []string{"explain", "--nope"}, want: "tenancy explain: unknown flag: --nope\n"},
		"diff":            {args: []string{"diff", "a.toml", "b.toml", "--nope"}, want: "tenancy diff: unknown flag: --nope\n"},
		"report":          {args: []string{"report", "--nope"}, want: "tenancy report: unknown flag: --nope\n"},
		"kustomize":       {args: []string{"kustomize", "--nope"}, want: "tenancy kustomize: unknown flag: --nope\n"},
		"argocd generate": {args: []string{"argocd", "generate", "--nope"}, want: "tenancy argocd generate: unknown flag: --nope\n"},
		"a shorthand":     {args: []string{"render", "-b", "kai"}, want: "tenancy render: unknown shorthand flag: 'b' in -b\n"},
		"one dash":        {args: []string{"render", "-backend", "kai"}, want: "tenancy render: -backend: flags take two dashes: --backend\n"},
		"one dash and =":  {args: []string{"diff", "-output=json", "a.toml", "b.toml"}, want: "tenancy diff: -output=json: flags take two dashes: --output=json\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, stdout, stderr, code := runInTempDir(t, map[string]string{"tenancy.toml": lendingAgreement}, tc.args...)
			if code != exitUsage || stdout != "" || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2, no stdout, stderr containing %q", code, stdout, stderr, tc.want)
			}
		})
	}
}

// TestDoubleDash: "--" ends the flags; what follows is an argument even when
// it looks like a flag, and - after it is still stdin.
func TestDoubleDash(t *testing.T) {
	tests := map[string]struct {
		files    map[string]string
		stdin    string
		args     []string
		wantCode int
		inStderr string
	}{
		"a file named like a flag": {
			files:    map[string]string{"--backend": lendingAgreement},
			args:     []string{"check", "--", "--backend"},
			inStderr: "--backend: valid\n",
		},
		"stdin after --": {
			stdin:    lendingAgreement,
			args:     []string{"check", "--", "-"},
			inStderr: "<stdin>: valid\n",
		},
		"flags before -- still count": {
			files:    map[string]string{"tenancy.toml": lendingAgreement},
			args:     []string{"render", "--backend", "volcano", "--", "tenancy.toml"},
			wantCode: exitUsage,
			inStderr: `backend "volcano": must be kueue or kai`,
		},
		"a flag after -- is an argument": {
			files:    map[string]string{"tenancy.toml": lendingAgreement},
			args:     []string{"render", "tenancy.toml", "--", "--backend", "kai"},
			wantCode: exitUsage,
			inStderr: "tenancy render: expected at most one FILE, got 3\n",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir, _, _, _ := runInTempDir(t, tc.files)
			stdout, stderr, code := runWithStdin(dir, strings.NewReader(tc.stdin), tc.args...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.wantCode, stderr)
			}
			if code != exitOK && stdout != "" {
				t.Errorf("stdout = %q on failure, want nothing", stdout)
			}
			if !strings.Contains(stderr, tc.inStderr) {
				t.Errorf("stderr = %q, want it to contain %q", stderr, tc.inStderr)
			}
		})
	}
}

// TestHelpListsFlags: each command's --help (or -h, anywhere) is on stdout,
// lists its flags with two dashes and keeps its examples.
func TestHelpListsFlags(t *testing.T) {
	tests := map[string]struct {
		args []string
		want []string
	}{
		"render": {
			args: []string{"render", "--help"},
			want: []string{"Usage:\n  tenancy render [--backend kueue|kai]", "Examples:\n  tenancy render ", "\nFlags:\n  --backend string\n      scheduler to render for: kueue or kai (default: the agreement's backend key, its first when it names both; kueue without it)\n  --cluster string\n      the part of a fleet agreement (one with [clusters]) to work on: its manager's name or a worker cluster's; required by render for such an agreement, refused for any other\n  --kueue-api string\n"},
		},
		"check":   {args: []string{"check", "-h"}, want: []string{"Examples:\n  tenancy check ", "git show main:tenancy.toml | tenancy check -"}},
		"explain": {args: []string{"explain", "tenancy.toml", "--help"}, want: []string{"Examples:\n  tenancy explain "}},
		"diff": {
			args: []string{"diff", "--help"},
			want: []string{"git show main:tenancy.toml | tenancy diff - tenancy.toml", "  --exit-code\n      exit 1 when anything changes", "  --output string\n      output format: text, markdown or json (default \"text\")\n"},
		},
		"report": {
			args: []string{"report", "--help"},
			want: []string{"Examples:\n  tenancy report --prometheus", "  --step duration\n      integration step, a Prometheus duration (30s, 1m, 1h): one value per step, held for the step (default \"1m\")\n"},
		},
		"kustomize":       {args: []string{"kustomize", "--help"}, want: []string{"Run as a kustomize KRM function"}},
		"argocd generate": {args: []string{"argocd", "generate", "--help"}, want: []string{"Usage:\n  tenancy argocd generate\n"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, stdout, stderr, code := runInTempDir(t, nil, tc.args...)
			if code != exitOK || stderr != "" {
				t.Fatalf("exit %d, stderr %q; want exit 0 and nothing on stderr", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("help lacks %q:\n%s", w, stdout)
				}
			}
			for _, line := range strings.Split(stdout, "\n") {
				if strings.HasPrefix(line, "  -") && !strings.HasPrefix(line, "  --") {
					t.Errorf("flag listed with one dash: %q", line)
				}
			}
		})
	}
}

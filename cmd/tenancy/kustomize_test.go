package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// kustomizeInput is a ResourceList as kustomize sends it, with spec lines
// indented under the TenancyGenerator's spec.
func kustomizeInput(spec ...string) string {
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n")
	b.WriteString("  apiVersion: tenancy.dev/v1alpha1\n  kind: TenancyGenerator\n  metadata:\n    name: gpu-tenancy\n  spec:\n")
	for _, s := range spec {
		b.WriteString("    " + s + "\n")
	}
	return b.String()
}

func TestKustomizeCommand(t *testing.T) {
	tests := map[string]struct {
		args     []string // nil: the binary run with no arguments, as kustomize execs it
		stdin    string
		terminal bool
		wantCode int
		// wantStderr lines must all appear in stderr.
		wantStderr []string
		// wantResourceList: stdout holds a ResourceList with empty items.
		wantResourceList bool
		wantStdout       string // checked when not empty
	}{
		"no arguments and a pipe: runs as the function": {
			stdin:            kustomizeInput("file: missing.toml"),
			wantCode:         exitFailure,
			wantStderr:       []string{`TenancyGenerator/gpu-tenancy: spec.file: "missing.toml": no such file in the kustomization directory`, "no resources were generated"},
			wantResourceList: true,
		},
		"typo in spec is an error, not the defaults": {
			args:             []string{"kustomize"},
			stdin:            kustomizeInput("file: tenancy.toml", "bakend: kai"),
			wantCode:         exitFailure,
			wantStderr:       []string{"spec.bakend: unknown field"},
			wantResourceList: true,
		},
		"path outside the kustomization": {
			args:             []string{"kustomize"},
			stdin:            kustomizeInput("file: ../tenancy.toml"),
			wantCode:         exitFailure,
			wantStderr:       []string{`spec.file: "../tenancy.toml" is outside the kustomization directory`},
			wantResourceList: true,
		},
		"not a ResourceList": {
			args:             []string{"kustomize"},
			stdin:            "items: [",
			wantCode:         exitFailure,
			wantStderr:       []string{"failed to read ResourceList input"},
			wantResourceList: true,
		},
		"stdin is a terminal": {
			args:       []string{"kustomize"},
			terminal:   true,
			wantCode:   exitUsage,
			wantStderr: []string{"expects a ResourceList on stdin"},
		},
		"an argument": {
			args:       []string{"kustomize", "tenancy.toml"},
			wantCode:   exitUsage,
			wantStderr: []string{`unexpected argument "tenancy.toml"`},
		},
		"help": {
			args:       []string{"kustomize", "--help"},
			wantCode:   exitOK,
			wantStdout: "kind: TenancyGenerator",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "tenancy.toml"), []byte("version = 1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			e := &env{
				stdin:           strings.NewReader(tc.stdin),
				stdout:          &stdout,
				stderr:          &stderr,
				getenv:          func(string) string { return "" },
				environ:         func() []string { return nil },
				dir:             dir,
				stdinIsTerminal: tc.terminal,
			}
			code := run(e, tc.args)
			if diff := cmp.Diff(tc.wantCode, code); diff != "" {
				t.Errorf("exit code (-want,+got):\n%s\nstderr:\n%s", diff, stderr.String())
			}
			for _, line := range tc.wantStderr {
				if !strings.Contains(stderr.String(), line) {
					t.Errorf("stderr lacks %q:\n%s", line, stderr.String())
				}
			}
			if tc.wantStdout != "" && !strings.Contains(stdout.String(), tc.wantStdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.wantStdout, stdout.String())
			}
			out := stdout.String()
			if tc.wantResourceList {
				if !strings.Contains(out, "kind: ResourceList\n") || !strings.Contains(out, "items: []\n") || !strings.Contains(out, "severity: error") {
					t.Errorf("stdout is not a ResourceList with error results and no items:\n%s", out)
				}
			} else if tc.wantStdout == "" && out != "" {
				t.Errorf("stdout = %q, want nothing", out)
			}
		})
	}
}

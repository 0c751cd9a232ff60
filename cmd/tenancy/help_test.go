package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHelpCommandIsCommandHelp: tenancy help CMD prints exactly what
// tenancy CMD --help prints, for every command, and exits 0 with nothing on
// stderr; help help and help version print the overview.
func TestHelpCommandIsCommandHelp(t *testing.T) {
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			_, want, wantErr, wantCode := runInTempDir(t, nil, c.name, "--help")
			_, got, gotErr, code := runInTempDir(t, nil, "help", c.name)
			if code != exitOK || wantCode != exitOK {
				t.Errorf("exit codes: help %s %d, %s --help %d; want 0", c.name, code, c.name, wantCode)
			}
			if want == "" {
				t.Fatalf("%s --help printed nothing on stdout", c.name)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("help %s differs from %s --help (-want,+got):\n%s", c.name, c.name, diff)
			}
			if gotErr != "" || wantErr != "" {
				t.Errorf("stderr: help %q, --help %q; want nothing", gotErr, wantErr)
			}
		})
	}
	_, overview, _, _ := runInTempDir(t, nil, "--help")
	for _, args := range [][]string{{"help"}, {"help", "help"}, {"help", "version"}} {
		_, got, stderr, code := runInTempDir(t, nil, args...)
		if code != exitOK || stderr != "" {
			t.Errorf("%v: exit %d, stderr %q; want 0 and nothing", args, code, stderr)
		}
		if diff := cmp.Diff(overview, got); diff != "" {
			t.Errorf("%v differs from --help (-want,+got):\n%s", args, diff)
		}
	}
}

// TestUnknownCommandSuggests: a typo of a command, or of help and version,
// names the command meant, by the distance unknown agreement keys use.
func TestUnknownCommandSuggests(t *testing.T) {
	tests := map[string]string{
		"rendr":    `unknown command "rendr" (did you mean "render"?)`,
		"Render":   `unknown command "Render" (did you mean "render"?)`,
		"chekc":    `unknown command "chekc" (did you mean "check"?)`,
		"exlpain":  `unknown command "exlpain" (did you mean "explain"?)`,
		"ini":      `unknown command "ini" (did you mean "init"?)`,
		"verison":  `unknown command "verison" (did you mean "version"?)`,
		"hlep":     `unknown command "hlep" (did you mean "help"?)`,
		"kustomze": `unknown command "kustomze" (did you mean "kustomize"?)`,
		"deploy":   `unknown command "deploy"`,
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(want, unknownCommand(name)); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
		})
	}
}

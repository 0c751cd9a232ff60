package main

import (
	"testing"
)

// TestExplainContentionRefuses: a busy name that is no team or department,
// and flags that mean nothing without --contention, are usage errors on
// stderr (exit 2) with nothing on stdout.
func TestExplainContentionRefuses(t *testing.T) {
	hint := "Run 'tenancy explain --help' for usage.\n"
	tests := map[string]struct {
		args   []string
		stderr string
	}{
		"an unknown team": {
			args:   []string{"--contention", "--busy", "training,nobody,none", "tenancy.toml"},
			stderr: "tenancy explain: --busy: nobody, none: not a team or department of the agreement\n",
		},
		"an empty name": {
			args:   []string{"--contention", "--busy", "training,", "tenancy.toml"},
			stderr: "tenancy explain: --busy: name one or more teams or departments, comma-separated\n" + hint,
		},
		"--busy without --contention": {
			args:   []string{"--busy", "training", "tenancy.toml"},
			stderr: "tenancy explain: --busy needs --contention\n" + hint,
		},
		"json without --contention": {
			args:   []string{"-o", "json", "tenancy.toml"},
			stderr: "tenancy explain: --output json is for --contention; the agreement's tables are text\n" + hint,
		},
		"an unknown output": {
			args:   []string{"--contention", "--output", "yaml", "tenancy.toml"},
			stderr: "tenancy explain: --output \"yaml\": want text or json\n" + hint,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runIn("../..", append([]string{"explain"}, tc.args...)...)
			wantRun(t, outcome{code, stdout, stderr}, outcome{exitUsage, "", tc.stderr})
		})
	}
}

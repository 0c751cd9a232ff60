package diagtest

import (
	"testing"

	"github.com/tenancy-dev/tenancy/generator/diag"
)

// TestTOML: the check the rules' tests rely on refuses what the issue found
// (a header with a field path's index in it) and TOML written in a message,
// and accepts header names and suggestions that parse.
func TestTOML(t *testing.T) {
	tests := map[string]struct {
		d    diag.Diagnostic
		fail bool
	}{
		"the window hint of before": {
			d:    diag.Diagnostic{Message: "put lendable and borrow under [teams.serving.windows[0].flavors.FLAVOR]"},
			fail: true,
		},
		"an assignment in the message": {
			d:    diag.Diagnostic{Message: "is required: add version = 1 at the top of the file"},
			fail: true,
		},
		"a suggestion that does not parse": {
			d:    diag.Diagnostic{Message: "is required", Suggestion: "[teams.a.windows[0]]\nlendable = 1"},
			fail: true,
		},
		"headers that parse, a field path's index": {
			d: diag.Diagnostic{Message: "in this [[teams.a.windows]] entry, when [topology] is set, teams.a.windows[0]"},
		},
		"a suggestion of several lines": {
			d: diag.Diagnostic{Message: "give guaranteed per flavor", Suggestion: "[teams.a.flavors.h100]\nguaranteed = 8\n"},
		},
		"an inline table inside an entry": {
			d: diag.Diagnostic{Message: "in this [[teams.a.windows]] entry", Suggestion: "flavors.h100 = { lendable = 6 }"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if err := TOML(tc.d); (err != nil) != tc.fail {
				t.Errorf("TOML(%q) = %v, want failure %v", tc.d.String(), err, tc.fail)
			}
		})
	}
}

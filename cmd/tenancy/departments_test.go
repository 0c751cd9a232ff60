package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDepartmentErrors: a bad department is an error on stderr at its line,
// the exit status 1 and nothing on stdout, for every command that reads an
// agreement.
func TestDepartmentErrors(t *testing.T) {
	files := map[string]string{"tenancy.toml": `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 32
[departments.science]
guaranteed = 8
lendable = 8
[teams.a]
department = "sceince"
guaranteed = 8
[teams.b]
department = "science"
guaranteed = 12
lendable = 12
`}
	want := `tenancy.toml:6:14: departments.science.guaranteed: the teams of department science are guaranteed 12 GPUs of flavor h100 (b 12) but the department is guaranteed 8: a department's guarantee must cover its teams'
tenancy.toml:9:14: teams.a.department: unknown department "sceince" (did you mean "science"?)
tenancy: tenancy.toml is invalid: 2 error(s)
`
	for _, args := range [][]string{{"check"}, {"render"}, {"render", "--backend", "kai"}, {"explain"}} {
		_, stdout, stderr, code := runInTempDir(t, files, args...)
		if code != exitFailure || stdout != "" {
			t.Errorf("%s: exit %d, stdout %q; want 1 and nothing", strings.Join(args, " "), code, stdout)
		}
		if diff := cmp.Diff(want, stderr); diff != "" && args[0] != "explain" {
			t.Errorf("%s: stderr (-want,+got):\n%s", strings.Join(args, " "), diff)
		}
		if !strings.Contains(stderr, "unknown department \"sceince\"") {
			t.Errorf("%s: stderr lacks the unknown department:\n%s", strings.Join(args, " "), stderr)
		}
	}
}

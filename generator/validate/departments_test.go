package validate_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/internal/diagtest"
)

// check returns every diagnostic of the agreement's own rules and Kueue's
// (which adds none for departments): the format's rules, free of KAI's
// approximations.
func check(t *testing.T, src string) diag.List {
	t.Helper()
	_, warnings, err := generator.Check(generator.Source{Path: "tenancy.toml", Data: []byte(src)}, generator.Options{Backend: generator.Kueue})
	return diagnostics(t, warnings, err)
}

// diagnostics is what Check or CheckAll says: the warnings of an agreement
// it accepts, or every diagnostic of one it refuses.
func diagnostics(t *testing.T, warnings diag.List, err error) diag.List {
	t.Helper()
	var ae *generator.AgreementError
	switch {
	case err == nil:
		return warnings
	case errors.As(err, &ae):
		return ae.Diagnostics
	}
	t.Fatalf("check: unexpected error %v", err)
	return nil
}

// problemCase is an agreement and every diagnostic check reports on it,
// compared by type, position and path.
type problemCase struct {
	src  string
	want diag.List
}

func checkProblems(t *testing.T, tests map[string]problemCase) {
	t.Helper()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := diagtest.Diff(t, tc.want, check(t, tc.src)); diff != "" {
				t.Errorf("diagnostics (-want,+got):\n%s", diff)
			}
		})
	}
}

// messageCase is an agreement and its diagnostics as printed, for the
// messages whose wording is the feature.
type messageCase struct {
	src  string
	want string
}

func checkMessages(t *testing.T, tests map[string]messageCase) {
	t.Helper()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, check(t, tc.src).String()); diff != "" {
				t.Errorf("messages (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestDepartmentProblems(t *testing.T) {
	tests := map[string]problemCase{
		"a department covering its teams is valid": {
			src: header + `[departments.science]
guaranteed = 24
lendable = 8
borrow = 8
weight = 2
[teams.genomics]
department = "science"
guaranteed = 16
lendable = 4
borrow = 4
[teams.physics]
department = "science"
guaranteed = 8
[teams.ops]
guaranteed = 8
lendable = 8
`,
		},
		"several flavors, per flavor": {
			src: `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 32
[flavors.a100]
capacity = 16
[departments.science.flavors.h100]
guaranteed = 24
[departments.science.flavors.a100]
guaranteed = 8
[teams.genomics]
department = "science"
[teams.genomics.flavors.a100]
guaranteed = 10
`,
			want: diag.List{errAt(10, 14, "departments.science.flavors.a100.guaranteed", field.ErrorTypeInvalid)},
		},
		"several flavors, a flavor the department does not name": {
			src: `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 32
[flavors.a100]
capacity = 16
[departments.science.flavors.h100]
guaranteed = 24
[teams.genomics]
department = "science"
[teams.genomics.flavors.a100]
guaranteed = 2
`,
			want: diag.List{errAt(7, 14, "departments.science.flavors.a100.guaranteed", field.ErrorTypeInvalid)},
		},
		"unknown department": {
			src: header + `[departments.science]
guaranteed = 8
[teams.a]
department = "sceince"
guaranteed = 8
[teams.b]
department = "arts"
`,
			want: diag.List{
				warnAt(5, 14, "departments.science", field.ErrorTypeInvalid),
				errAt(8, 14, "teams.a.department", field.ErrorTypeNotFound),
				errAt(11, 14, "teams.b.department", field.ErrorTypeNotFound),
			},
		},
		"teams guaranteed more than their department, lendable over guaranteed, negatives, a department without teams": {
			src: header + `[departments.science]
guaranteed = 8
lendable = 10
borrow = -1
weight = -2
[departments.arts]
guaranteed = 2
[teams.a]
department = "science"
guaranteed = 6
[teams.b]
department = "science"
guaranteed = 6
`,
			want: diag.List{
				errAt(6, 14, "departments.science.guaranteed", field.ErrorTypeInvalid),
				errAt(7, 12, "departments.science.lendable", field.ErrorTypeInvalid),
				errAt(8, 10, "departments.science.borrow", field.ErrorTypeInvalid),
				errAt(9, 10, "departments.science.weight", field.ErrorTypeInvalid),
				warnAt(10, 14, "departments.arts", field.ErrorTypeInvalid),
			},
		},
		"capacity counts departments and the teams without one": {
			src: header + `[departments.science]
guaranteed = 24
[teams.a]
department = "science"
guaranteed = 20
[teams.b]
guaranteed = 10
`,
			want: diag.List{errAt(4, 12, "flavors.h100.capacity", field.ErrorTypeInvalid)},
		},
		"names that collide": {
			src: header + `[teams.science]
guaranteed = 1
[departments.science]
guaranteed = 2
[departments.gpu-pool]
guaranteed = 1
[teams.a]
department = "science"
[teams.b]
department = "gpu-pool"
`,
			want: diag.List{
				errAt(7, 14, "departments.science", field.ErrorTypeDuplicate),
				errAt(9, 14, "departments.gpu-pool", field.ErrorTypeDuplicate),
			},
		},
		"the shorthand with several flavors": {
			src: header + `[flavors.a100]
capacity = 8
[departments.science]
guaranteed = 2
[teams.a]
department = "science"
`,
			want: diag.List{errAt(8, 14, "departments.science.guaranteed", field.ErrorTypeForbidden)},
		},
		"a department's borrow nobody lends": {
			src: header + `[departments.science]
guaranteed = 8
borrow = 4
[teams.a]
department = "science"
guaranteed = 8
borrow = 2
[teams.b]
guaranteed = 8
`,
			want: diag.List{
				warnAt(7, 10, "departments.science.borrow", field.ErrorTypeInvalid),
				warnAt(11, 10, "teams.a.borrow", field.ErrorTypeInvalid),
			},
		},
		"a team borrows its department's surplus": {
			src: header + `[departments.science]
guaranteed = 12
[teams.a]
department = "science"
guaranteed = 8
borrow = 4
`,
		},
	}
	checkProblems(t, tests)
}

// TestDepartmentMessages: the wording that is the feature, a suggestion,
// the teams and sums, the other line of a collision.
func TestDepartmentMessages(t *testing.T) {
	tests := map[string]messageCase{
		"an unknown department names the one meant": {
			src:  header + "[departments.science]\nguaranteed = 8\n[teams.a]\ndepartment = \"sceince\"\n[teams.b]\ndepartment = \"science\"\n",
			want: `tenancy.toml:8:14: teams.a.department: unknown department "sceince" (did you mean "science"?)`,
		},
		"an unknown department lists the departments": {
			src:  header + "[departments.science]\nguaranteed = 8\n[teams.a]\ndepartment = \"arts\"\n[teams.b]\ndepartment = \"science\"\nguaranteed = 8\n",
			want: `tenancy.toml:8:14: teams.a.department: unknown department "arts" (departments: science)`,
		},
		"teams over their department name the sum and the teams": {
			src:  header + "[departments.science]\nguaranteed = 8\n[teams.a]\ndepartment = \"science\"\nguaranteed = 6\n[teams.b]\ndepartment = \"science\"\nguaranteed = 4\n",
			want: "tenancy.toml:6:14: departments.science.guaranteed: the teams of department science are guaranteed 10 GPUs of flavor h100 (a 6, b 4) but the department is guaranteed 8: a department's guarantee must cover its teams'",
		},
		"capacity names departments and teams": {
			src:  header + "[departments.science]\nguaranteed = 24\n[teams.a]\ndepartment = \"science\"\nguaranteed = 20\n[teams.b]\nguaranteed = 10\n",
			want: "tenancy.toml:4:12: flavors.h100.capacity: departments and teams are guaranteed 34 GPUs of flavor h100 (b 10, department science 24) but its capacity is 32",
		},
		"a collision names the other line": {
			src:  header + "[teams.science]\nguaranteed = 1\n[departments.science]\nguaranteed = 1\n[teams.a]\ndepartment = \"science\"\n",
			want: `tenancy.toml:7:14: departments.science: department "science" has the name of team "science" (line 5): a department and a team cannot share a name (KAI queues are one namespace)`,
		},
		"the pool's name": {
			src:  header + "[departments.gpu-pool]\nguaranteed = 1\n[teams.a]\ndepartment = \"gpu-pool\"\n",
			want: `tenancy.toml:5:14: departments.gpu-pool: department "gpu-pool" has the pool's name (name, line 2): the pool and the department would be one Kueue Cohort and one KAI queue`,
		},
	}
	checkMessages(t, tests)
}

// Package sourcetest plans agreements written as TOML, for the tests of
// steps that read a plan (planning itself, schedules) and want their cases
// as an agreement a person would write. Backend tests build plans by hand
// with plantest instead, so that no renderer's test depends on the format.
package sourcetest

import (
	"testing"

	"github.com/tenancy-dev/tenancy/generator/agreement"
	"github.com/tenancy-dev/tenancy/generator/load"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/validate"
)

// Plan plans src as tenancy does (load, decode, validate, plan), failing
// the test on any error: what a step after planning reads is always the
// plan of a valid agreement.
func Plan(t testing.TB, src string) *plan.Agreement {
	t.Helper()
	a := Decode(t, src)
	if diags := validate.Validate(a); len(diags.Errors()) > 0 {
		t.Fatal(diags)
	}
	return plan.Build(a)
}

// Decode loads and decodes src as tenancy.toml, failing the test on any
// problem, and does not validate it: planning's own tests reach cases that
// validation would refuse (a default planning fills in either way).
func Decode(t testing.TB, src string) *agreement.Agreement {
	t.Helper()
	root, diags := load.Parse("tenancy.toml", []byte(src))
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	a, diags := agreement.Decode("tenancy.toml", root)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	return a
}

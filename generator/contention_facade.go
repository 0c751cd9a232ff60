package generator

import (
	"github.com/tenancy-dev/tenancy/generator/contention"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// Contention computes, from a checked plan alone, what each team runs under
// contention (package contention) on every backend tenancy check covers for
// it (Options.Backends): the one o asks for, else those the agreement's
// backend key names, else Kueue. A plan of one part of a fleet is computed
// like any other. A busy name that is neither a team nor a department is an
// error wrapping contention.ErrUnknownTeam.
func Contention(p *plan.Agreement, o Options, q contention.Query) ([]*contention.Report, error) {
	var out []*contention.Report
	for _, b := range o.Backends(p) {
		r, err := contention.Compute(p, b, q)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

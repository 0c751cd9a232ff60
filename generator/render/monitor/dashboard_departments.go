package monitor

//lint:file-ignore SA1019 the department rows extend the classic dashboard model built in dashboard.go (see its note)

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// withDepartments adds, for an agreement with departments, a row that
// groups the teams by department: each department's teams' guarantees and
// allocations summed, per flavor, over time. The recording rules are per
// team, so the sum is by the teams' names; a dashboard without departments
// is unchanged.
func withDepartments(b *dashboard.DashboardBuilder, p *plan.Agreement) *dashboard.DashboardBuilder {
	if len(p.Departments) == 0 {
		return b
	}
	var targets []cog.Builder[variants.Dataquery]
	for _, d := range p.Departments {
		if len(d.Teams) == 0 {
			continue
		}
		sel := fmt.Sprintf("{team=~%q}", gpu.Alternation(d.Teams))
		targets = append(targets,
			query(fmt.Sprintf("sum by (flavor) (%s%s)", Guaranteed, sel), d.Name+" {{flavor}} guaranteed to its teams"),
			query(fmt.Sprintf("sum by (flavor) (%s%s)", Allocated, sel), d.Name+" {{flavor}} allocated"))
	}
	if len(targets) == 0 {
		return b
	}
	return b.WithRow(dashboard.NewRowBuilder("Departments")).
		WithPanel(overTime("Departments: guaranteed vs allocated",
			"Per department and flavor: its teams' guarantees and allocations summed. Allocated above guaranteed is the department's surplus, or GPUs borrowed from the rest of the pool (within the department's borrow).",
			targets...).Span(24))
}

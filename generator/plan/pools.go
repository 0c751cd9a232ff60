package plan

// FlavorPart returns the plan of one flavor's share of the agreement: that
// flavor alone, and every team's, department's and window's quota of it,
// all else as the agreement says. A KAI node pool is rendered from its
// flavor's part as any plan is, so every count in it (guarantees, borrow
// limits, never-lent GPUs) is the flavor's alone. nil when the agreement
// has no such flavor.
func (a *Agreement) FlavorPart(flavor string) *Agreement {
	f := a.Flavor(flavor)
	if f == nil {
		return nil
	}
	out := *a
	out.Flavors = []Flavor{*f}
	out.Teams = make([]Team, len(a.Teams))
	for i, t := range a.Teams {
		t.Quotas = []Quota{t.Quota(flavor)}
		if len(t.Windows) > 0 {
			ws := make([]Window, len(t.Windows))
			for j, w := range t.Windows {
				w.Quotas = []Quota{w.Quota(flavor)}
				ws[j] = w
			}
			t.Windows = ws
		}
		out.Teams[i] = t
	}
	out.Departments = make([]Department, len(a.Departments))
	for i, d := range a.Departments {
		d.Quotas = []Quota{d.Quota(flavor)}
		out.Departments[i] = d
	}
	return &out
}

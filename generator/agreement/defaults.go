package agreement

// defaults fills what the format leaves to defaults, once, so that
// validation and planning cannot disagree about them: a flavor's resource,
// a team's namespaces, and each team's quota per flavor with the one-flavor
// shorthand resolved. Defaulted values carry the position of the table they
// belong to, so a problem with one points at a line the user wrote.
func defaults(a *Agreement) {
	if a.Guardrails != nil {
		defaultGuardrails(a.Guardrails)
	}
	defaultMonitoring(a.Monitoring)
	if a.Components != nil {
		defaultComponents(a.Components)
	}
	defaultPriorities(a)
	defaultClusters(a)
	if a.KAI != nil {
		defaultKAI(a)
	}
	for _, f := range a.Flavors {
		if f.GPUsPerNode.State == Unset {
			f.GPUsPerNode = Int{Value: DefaultGPUsPerNode, State: Defaulted, Pos: f.Pos, Path: f.GPUsPerNode.Path}
		}
		if f.Resource.State == Unset {
			f.Resource = Str{Value: DefaultResource, State: Defaulted, Pos: f.Pos, Path: f.Resource.Path}
		}
	}
	for _, t := range a.Teams {
		if t.Namespaces == nil && t.Path != nil {
			t.Namespaces = []Str{{Value: t.Name, State: Defaulted, Pos: t.Pos, Path: t.Path}}
		}
		t.ByFlavor = byFlavor(a, t.Shorthand, t.Flavors)
		defaultWindows(a, t)
	}
	for _, d := range a.Departments {
		d.ByFlavor = byFlavor(a, d.Shorthand, d.Flavors)
	}
}

package main

import (
	"slices"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/diff"
)

// sideParts is the side's fleet parts (generator.Parts): nil for an absent
// file or an agreement without [clusters]. An agreement that does not load
// or decode has none either: it is then rendered as a single cluster's, and
// that render reports its diagnostics.
func sideParts(s diffSide) []string {
	if s.src == nil {
		return nil
	}
	parts, err := generator.Parts(*s.src)
	if err != nil {
		return nil
	}
	return parts
}

// renderFleet renders every part of either side (diff.FleetParts) with
// --cluster set to it, each side where it has the part. A side without
// [clusters] has one rendering, which stands for the other side's manager:
// a cluster that becomes a fleet's manager keeps what it had and gains
// MultiKueue's objects, and the workers are added whole. Both sides are
// rendered before a failure is reported, so one run shows every problem of
// both; a side stops at its first failing part, whose diagnostics the
// others would repeat.
func renderFleet(e *env, oldSide, newSide diffSide, oldParts, newParts []string, opts generator.Options) ([]diff.Part, bool) {
	names, manager := diff.FleetParts(oldParts, newParts)
	parts := make([]diff.Part, len(names))
	ok := true
	for _, side := range []struct {
		diffSide
		parts []string
		set   func(*diff.Part, *generator.Result)
	}{
		{oldSide, oldParts, func(p *diff.Part, r *generator.Result) { p.Old = r }},
		{newSide, newParts, func(p *diff.Part, r *generator.Result) { p.New = r }},
	} {
		for i, name := range names {
			parts[i].Cluster, parts[i].Manager = name, manager[name]
			if side.src == nil {
				continue
			}
			o := opts
			switch {
			case side.parts == nil && i == 0:
				// The single cluster's render, as the manager's part.
			case slices.Contains(side.parts, name):
				o.Cluster, o.ClusterFrom = name, "the cluster diff compares"
			default:
				continue
			}
			named := side.diffSide
			named.label += " (cluster " + name + ")"
			res, rendered := renderSide(e, named, o)
			if !rendered {
				ok = false
				break
			}
			side.set(&parts[i], res)
		}
	}
	return parts, ok
}

package main

import (
	"errors"
	"slices"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/diff"
)

// sideParts is the side's fleet parts (generator.Parts): nil for an absent
// file or an agreement without [clusters]; an error for one that does not
// load or decode.
func sideParts(s diffSide) ([]string, error) {
	if s.src == nil {
		return nil, nil
	}
	return s.prepared.Parts()
}

// unreadableSides reports the sides whose parts could not be listed, and
// renders the other side all the same, so one run shows every problem of
// both. A side that does not decode is reported with what its render
// reports: every diagnostic for an agreement without [clusters], as before
// fleets; for a fleet, whose render without a cluster is refused for want
// of one, the diagnostics Parts found.
func unreadableSides(e *env, oldSide, newSide diffSide, oldParts, newParts []string, oldErr, newErr error, opts generator.Options) {
	for _, side := range []struct {
		diffSide
		err error
	}{{oldSide, oldErr}, {newSide, newErr}} {
		if side.err == nil {
			continue
		}
		_, err := side.prepared.RenderFields(opts)
		if err == nil || errors.Is(err, generator.ErrOptions) {
			err = side.err
		}
		sideFailed(e, side.diffSide, err)
	}
	switch {
	case oldErr == nil && oldParts == nil:
		renderSide(e, oldSide, opts)
	case oldErr == nil:
		renderFleet(e, oldSide, diffSide{}, oldParts, nil, opts, "")
	case newErr == nil && newParts == nil:
		renderSide(e, newSide, opts)
	case newErr == nil:
		renderFleet(e, diffSide{}, newSide, nil, newParts, opts, "")
	}
}

// renderFleet renders every part of either side (diff.FleetParts) with
// --cluster set to it, each side where it has the part. A side without
// [clusters] has one rendering, which stands for the other side's manager:
// a cluster that becomes a fleet's manager keeps what it had and gains
// MultiKueue's objects, and the workers are added whole. Both sides are
// rendered before a failure is reported, so one run shows every problem of
// both; a side stops at its first failing part, whose diagnostics the
// others would repeat. With --backend kai a fleet's manager renders
// nothing (it is Kueue's: KAI has no multi-cluster dispatch), so only the
// workers are compared, and a single-cluster side's KAI render is compared
// with nothing in the manager's place. A non-empty only keeps that part
// alone (diff --cluster).
func renderFleet(e *env, oldSide, newSide diffSide, oldParts, newParts []string, opts generator.Options, only string) ([]diff.Part, bool) {
	names, manager := diff.FleetParts(oldParts, newParts)
	if only != "" {
		names = []string{only}
	}
	kai := opts.Backend == generator.KAI
	if kai && oldParts != nil && newParts != nil && only == "" {
		names = slices.DeleteFunc(names, func(n string) bool { return manager[n] })
	}
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
			case side.parts == nil && manager[name]:
				// The single cluster's render, as the manager's part.
			case kai && manager[name] && side.parts != nil && only == "":
				continue
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

// Package capacity checks an agreement against less hardware than it
// claims: with a flavor's capacity cut (a node lost, a GPU type gone), which
// guarantees can no longer all be honoured and by how much, and which
// never-lent GPUs are over-promised. Neither backend ranks guarantees when
// the hardware is short (Kueue checks no quota against physical capacity,
// kubernetes-sigs/kueue#2665), so the finding names every part at stake,
// not a winner. It is pure: the plan and the capacities are handed in.
package capacity

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// Share is one part's GPUs of a flavor: a team's or a department's.
type Share struct {
	Name string // "team NAME" or "department NAME"
	GPUs int64
}

// Finding is what one flavor's cut capacity does to the agreement.
type Finding struct {
	Flavor   string
	Was, Now int64 // the capacity in the agreement, and the one checked
	// Guaranteed is what the pool's parts are guaranteed (departments and
	// the teams in none); Short is how far it exceeds Now (0: all fit).
	Guaranteed, Short int64
	Guarantees        []Share // the parts guaranteed any, largest first
	// NeverLent is what the teams keep even when idle (guaranteed -
	// lendable); OverPromised is how far it exceeds Now.
	NeverLent, OverPromised int64
	Kept                    []Share // the teams that keep any, largest first
}

// Breaks reports whether the cut breaks a promise.
func (f Finding) Breaks() bool { return f.Short > 0 || f.OverPromised > 0 }

// Check judges every flavor whose capacity is in capacities (flavor name ->
// GPUs), in the agreement's flavor order.
func Check(p *plan.Agreement, capacities map[string]int64) []Finding {
	var out []Finding
	for _, f := range p.Flavors {
		now, ok := capacities[f.Name]
		if !ok {
			continue
		}
		out = append(out, judge(p, f, now))
	}
	return out
}

// NodeLost judges each flavor with one node (GPUsPerNode GPUs) fewer; a
// flavor whose node size the plan does not know (0: a plan not built from
// an agreement) is left out.
func NodeLost(p *plan.Agreement) []Finding {
	var out []Finding
	for _, f := range p.Flavors {
		if f.GPUsPerNode <= 0 {
			continue
		}
		out = append(out, judge(p, f, max(f.Capacity-f.GPUsPerNode, 0)))
	}
	return out
}

func judge(p *plan.Agreement, f plan.Flavor, now int64) Finding {
	out := Finding{Flavor: f.Name, Was: f.Capacity, Now: now}
	for i := range p.Departments {
		d := &p.Departments[i]
		if g := d.Quota(f.Name).Guaranteed; g > 0 {
			out.Guaranteed += g
			out.Guarantees = append(out.Guarantees, Share{"department " + d.Name, g})
		}
	}
	for i := range p.Teams {
		t := &p.Teams[i]
		q := t.Quota(f.Name)
		if q.Guaranteed > 0 && t.Department == "" {
			out.Guaranteed += q.Guaranteed
			out.Guarantees = append(out.Guarantees, Share{"team " + t.Name, q.Guaranteed})
		}
		if kept := q.Guaranteed - q.Lendable; kept > 0 {
			out.NeverLent += kept
			out.Kept = append(out.Kept, Share{"team " + t.Name, kept})
		}
	}
	out.Short = max(out.Guaranteed-now, 0)
	out.OverPromised = max(out.NeverLent-now, 0)
	largest := func(a, b Share) int {
		if a.GPUs != b.GPUs {
			return int(b.GPUs - a.GPUs)
		}
		return strings.Compare(a.Name, b.Name)
	}
	slices.SortFunc(out.Guarantees, largest)
	slices.SortFunc(out.Kept, largest)
	return out
}

// Shares writes shares as "team a 16, department b 8".
func Shares(shares []Share) string {
	parts := make([]string, len(shares))
	for i, s := range shares {
		parts[i] = fmt.Sprintf("%s %d", s.Name, s.GPUs)
	}
	return strings.Join(parts, ", ")
}

// Warnings says, at each flavor's capacity, what its cut breaks; given
// names the cut as the user wrote it (such as "--capacity h100=24").
func Warnings(p *plan.Agreement, findings []Finding, given func(flavor string) string) diag.List {
	r := &diag.Reporter{File: p.File}
	for _, f := range findings {
		fl := p.Flavor(f.Flavor)
		at := fl.CapacityOrigin
		if f.Short > 0 {
			r.Warnf(field.ErrorTypeInvalid, at.Pos, at.Path, "with %s (%d of the %d GPUs of flavor %s), the guarantees (%d: %s) can no longer all be honoured: %d short; neither backend ranks them, so whichever runs first keeps its GPUs",
				given(f.Flavor), f.Now, f.Was, f.Flavor, f.Guaranteed, Shares(f.Guarantees), f.Short)
		}
		if f.OverPromised > 0 {
			r.Warnf(field.ErrorTypeInvalid, at.Pos, at.Path, "with %s (%d of the %d GPUs of flavor %s), the never-lent GPUs (%d: %s) are over-promised by %d: they cannot all be kept even with every other team idle",
				given(f.Flavor), f.Now, f.Was, f.Flavor, f.NeverLent, Shares(f.Kept), f.OverPromised)
		}
	}
	return r.List
}

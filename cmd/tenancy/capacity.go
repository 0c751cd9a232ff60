package main

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/capacity"
	"github.com/tenancy-dev/tenancy/generator/contention"
	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// exitCapacity is check --strict's status when the capacity given by
// --capacity or --lose breaks a guarantee or a never-lent promise: the
// agreement is valid, but does not survive that hardware.
const exitCapacity = 3

// cut is one --capacity or --lose flag: FLAVOR=GPUS.
type cut struct {
	flag   string // "capacity" or "lose"
	flavor string
	gpus   int64
}

func (c cut) String() string { return fmt.Sprintf("--%s %s=%d", c.flag, c.flavor, c.gpus) }

// parseCuts reads the flags' FLAVOR=GPUS values; what it refuses is a
// usage error naming the flag.
func parseCuts(capacities, losses []string) ([]cut, error) {
	var out []cut
	for _, f := range []struct {
		name   string
		values []string
	}{{"capacity", capacities}, {"lose", losses}} {
		for _, v := range f.values {
			flavor, n, ok := strings.Cut(v, "=")
			gpus, err := strconv.ParseInt(n, 10, 64)
			if !ok || flavor == "" || err != nil || gpus < 0 {
				return nil, fmt.Errorf("--%s %q: want FLAVOR=GPUS, such as h100=24 (a whole number, 0 or more)", f.name, v)
			}
			out = append(out, cut{f.name, flavor, gpus})
		}
	}
	return out, nil
}

// capacities turns the cuts into each flavor's capacity to check, against
// the plan: a flavor the agreement lacks, one given twice, or a loss of more
// than it has is refused, naming the flag.
func capacities(p *plan.Agreement, cuts []cut) (map[string]int64, map[string]string, error) {
	out, given := map[string]int64{}, map[string]string{}
	for _, c := range cuts {
		f := p.Flavor(c.flavor)
		switch {
		case f == nil:
			names := make([]string, len(p.Flavors))
			for i := range p.Flavors {
				names[i] = p.Flavors[i].Name
			}
			return nil, nil, fmt.Errorf("%s: the agreement has no flavor %q (its flavors: %s)", c, c.flavor, strings.Join(names, ", "))
		case given[c.flavor] != "":
			return nil, nil, fmt.Errorf("%s: flavor %s is already given by %s; give each flavor once", c, c.flavor, given[c.flavor])
		case c.flag == "lose" && c.gpus > f.Capacity:
			return nil, nil, fmt.Errorf("%s: flavor %s has %d GPUs, fewer than that", c, c.flavor, f.Capacity)
		case c.flag == "lose":
			out[c.flavor] = f.Capacity - c.gpus
		default:
			out[c.flavor] = c.gpus
		}
		given[c.flavor] = c.String()
	}
	return out, given, nil
}

// withCapacity adds the warnings of the cut capacities to check's, and
// says how many promises they break.
func withCapacity(warnings []generator.Diagnostic, p *plan.Agreement, caps map[string]int64, given map[string]string) ([]generator.Diagnostic, int) {
	findings := capacity.Check(p, caps)
	broken := 0
	for _, f := range findings {
		if f.Short > 0 {
			broken++
		}
		if f.OverPromised > 0 {
			broken++
		}
	}
	if broken == 0 {
		return warnings, 0
	}
	all := append(diag.List(append([]generator.Diagnostic(nil), warnings...)), capacity.Warnings(p, findings, func(f string) string { return given[f] })...)
	all.Sort()
	return all, broken
}

// capacityOutcomes is what check --capacity and --lose print on stdout:
// per backend check covers, each flavor whose GPUs the flags cut, what
// every team runs alone and with every team busy, at the agreement's
// capacity and at the one given (contention.Query.Nodes).
func capacityOutcomes(file string, p *plan.Agreement, opts generator.Options, caps map[string]int64, cuts []cut) ([]byte, error) {
	before, err := generator.Contention(p, opts, contention.Query{})
	if err != nil {
		return nil, err
	}
	after, err := generator.Contention(p, opts, contention.Query{Nodes: caps})
	if err != nil {
		return nil, err
	}
	flags := make([]string, len(cuts))
	for i, c := range cuts {
		flags[i] = c.String()
	}
	var out bytes.Buffer
	for i := range after {
		writeCapacityOutcomes(&out, file, strings.Join(flags, " "), before[i], after[i])
	}
	return out.Bytes(), nil
}

// writeCapacityOutcomes writes one backend's outcomes, before → after
// where they differ, for the flavors whose capacity the flags change.
func writeCapacityOutcomes(w io.Writer, file, flags string, before, after *contention.Report) {
	ranges := false
	for fi, f := range after.Flavors {
		was := before.Flavors[fi]
		if f.Capacity == was.Capacity {
			continue
		}
		fmt.Fprintf(w, "%s with %s, on %s: what each team runs\n", file, flags, after.Backend)
		fmt.Fprintf(w, "%s (%s, capacity %d → %d)\n", f.Flavor, f.Resource, was.Capacity, f.Capacity)
		tw := tableWriter(w)
		tableRow(tw, "TEAM", "GUARANTEED", "ALONE", "ALL BUSY")
		for ti, o := range f.Teams {
			old := was.Teams[ti]
			ranges = ranges || !o.Alone.Decided() || !o.AllBusy.Decided()
			tableRow(tw, o.Team, formatInt(o.Guaranteed), shareChange(old.Alone, o.Alone), shareChange(old.AllBusy, o.AllBusy))
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	if ranges {
		fmt.Fprintln(w, "A range (8-16) is the least and the most the team runs: with fewer GPUs than the scheduler")
		fmt.Fprintln(w, "admits (Kueue admits by quota alone, KAI gives every queue its deserved quota), which pods wait")
		fmt.Fprintln(w, "for a node is first come, and so is the order in which borrowers arrive.")
		fmt.Fprintln(w)
	}
}

// shareChange is "16" when a share stays, "16 → 8-16" when it changes.
func shareChange(old, new contention.Share) string {
	if old == new {
		return new.String()
	}
	return old.String() + " → " + new.String()
}

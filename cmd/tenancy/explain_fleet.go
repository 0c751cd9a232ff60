package main

import (
	"fmt"
	"io"

	"github.com/tenancy-dev/tenancy/generator/plan"
)

// explainFleet shows a fleet agreement's clusters: the manager, each
// worker's GPUs and kubeconfig Secret, then per flavor each team's share in
// each worker (guaranteed, lendable, may borrow) and the largest gang its
// guarantee admits, a job running in one cluster. Nothing without a fleet,
// or for one part (--cluster), whose plan is that cluster's alone.
func explainFleet(w io.Writer, p *plan.Agreement) {
	f := p.Fleet
	if f == nil {
		return
	}
	if p.Cluster != "" {
		role := "a worker: its share of every quota"
		if p.IsManager() {
			role = "the manager: the fleet-wide quotas, each job dispatched to a worker by MultiKueue"
		}
		fmt.Fprintf(w, "\nCluster %s of the fleet (%s)\n", p.Cluster, role)
		return
	}
	fmt.Fprintf(w, "\nFleet: manager %s, %s (render each with --cluster)\n", f.Manager, plural(len(f.Workers), "worker"))
	tw := tableWriter(w)
	header := []string{"cluster", "kubeconfig Secret"}
	for _, fl := range p.Flavors {
		header = append(header, fl.Name)
	}
	tableRow(tw, header...)
	for _, wk := range f.Workers {
		row := []string{wk.Name, wk.KubeconfigSecret}
		for _, c := range wk.Capacity {
			row = append(row, formatInt(c.GPUs))
		}
		tableRow(tw, row...)
	}
	tw.Flush()
	for fi, fl := range p.Flavors {
		fmt.Fprintf(w, "\nShares of %s per cluster (guaranteed/lendable/may borrow)\n", fl.Name)
		tw := tableWriter(w)
		header := []string{"team"}
		for _, wk := range f.Workers {
			header = append(header, wk.Name)
		}
		tableRow(tw, append(header, "largest gang")...)
		for _, t := range p.Teams {
			q := t.Quotas[fi]
			row := []string{t.Name}
			var largest int64
			for _, s := range q.Shares {
				row = append(row, fmt.Sprintf("%d/%d/%d", s.Guaranteed, s.Lendable, s.Borrow))
				largest = max(largest, s.Guaranteed)
			}
			gang := formatInt(largest)
			if largest < q.Guaranteed {
				gang += fmt.Sprintf(" (of %d guaranteed: split)", q.Guaranteed)
			}
			tableRow(tw, append(row, gang)...)
		}
		tw.Flush()
	}
	fmt.Fprintln(w, "  A job runs in one cluster: the largest gang is the largest share of the guarantee in one cluster.")
}

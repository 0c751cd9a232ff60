package main

import (
	"fmt"
	"io"

	"github.com/tenancy-dev/tenancy/generator/plan"
)

// explainDepartments draws the agreement's tree, pool → departments → teams,
// with each department's numbers per flavor: its guarantee split into its
// teams' and its surplus, what it lends outside at most and what it may
// borrow. Nothing when the agreement has no departments.
func explainDepartments(w io.Writer, p *plan.Agreement) {
	if len(p.Departments) == 0 {
		return
	}
	fmt.Fprintln(w, "\nDepartments (Kueue: a Cohort under the pool's; KAI: a queue between the pool's and its teams')")
	fmt.Fprintf(w, "  %s\n", p.Name)
	var loose []string
	for _, t := range p.Teams {
		if t.Department == "" {
			loose = append(loose, t.Name)
		}
	}
	for i := range p.Departments {
		d := &p.Departments[i]
		last := i == len(p.Departments)-1 && len(loose) == 0
		branch, stem := "├── ", "│   "
		if last {
			branch, stem = "└── ", "    "
		}
		fmt.Fprintf(w, "  %s%s (weight %d)\n", branch, d.Name, d.Weight)
		for _, f := range p.Flavors {
			q := d.Quota(f.Name)
			teams := q.Guaranteed - p.Surplus(d, f.Name)
			if q.Guaranteed == 0 && q.Borrow == 0 && teams == 0 {
				continue
			}
			fmt.Fprintf(w, "  %s    %s: guaranteed %d (teams %d + surplus %d), lends outside at most %d, may borrow %d, max usable %d\n",
				stem, f.Name, q.Guaranteed, teams, p.Surplus(d, f.Name), q.Lendable, q.Borrow, q.Guaranteed+q.Borrow)
		}
		for j, name := range d.Teams {
			leaf := "├── "
			if j == len(d.Teams)-1 {
				leaf = "└── "
			}
			fmt.Fprintf(w, "  %s%s%s\n", stem, leaf, name)
		}
	}
	for i, name := range loose {
		branch := "├── "
		if i == len(loose)-1 {
			branch = "└── "
		}
		fmt.Fprintf(w, "  %s%s (no department)\n", branch, name)
	}
	fmt.Fprintln(w, "  A team borrows its department's surplus and what the department's other teams lend first;")
	fmt.Fprintln(w, "  beyond that, the department's borrow caps what all its teams take from the rest of the pool,")
	fmt.Fprintln(w, "  and its lendable caps what leaves it. A team's own borrow and lendable still hold.")
}

// teamsAndDepartments is the explanation's first line's count of who shares
// the pool.
func teamsAndDepartments(p *plan.Agreement) string {
	s := plural(len(p.Teams), "team")
	if len(p.Departments) == 0 {
		return s
	}
	s += " in " + plural(len(p.Departments), "department")
	for _, t := range p.Teams {
		if t.Department == "" {
			return s + " and the pool"
		}
	}
	return s
}

package diff

import (
	"fmt"
	"slices"
	"time"

	"github.com/tenancy-dev/tenancy/generator"
)

// A fleet agreement (one with [clusters]) renders a part per cluster: the
// manager's and each worker's (generator.Parts). Its comparison is a Report
// per part, so what a change does is said where it does it: a team's share
// that moves from east to west changes two workers and not the manager,
// whose fleet-wide numbers stay. Whatever a Report learns to say (the
// contention a change causes, for one) is then said per cluster too.

// Part is one part of a fleet agreement, rendered on both sides: Old or New
// is nil where the part does not exist (a cluster added or removed).
type Part struct {
	Cluster string
	// Manager marks the manager's part: the one that admits and dispatches
	// (MultiKueue), holding the fleet-wide numbers.
	Manager  bool
	Old, New *generator.Result
}

// FleetReport is the comparison of a fleet agreement, cluster by cluster.
type FleetReport struct {
	Old      string          `json:"old"`
	New      string          `json:"new"`
	Changed  bool            `json:"changed"`
	Clusters []ClusterReport `json:"clusters"`
	// Counts sums the clusters' object counts: an object that changes in
	// two clusters counts twice, since it is applied twice.
	Counts Counts `json:"counts"`
	// NewWarnings and ChangedWarnings are those every cluster reports
	// alike (the agreement's own, such as a team's borrow no one can
	// lend): said once here, and left out of each cluster's summary.
	NewWarnings     []Warning       `json:"newWarnings"`
	ChangedWarnings []WarningChange `json:"changedWarnings"`
	// ReviewsDue says which parts of the new side are past their
	// review_by, as Summary.ReviewsDue does for one cluster: the dates are
	// the agreement's, the same in every cluster, so they are said once
	// here; the caller fills it (SetReviewsDue).
	ReviewsDue []string `json:"reviewsDue,omitempty"`
}

// SetReviewsDue records the review_by dates that today is past on the new
// side, read from the plan of any of its parts (each carries the
// agreement's dates); nothing when the new side has none.
func (r *FleetReport) SetReviewsDue(parts []Part, today time.Time) {
	for _, p := range parts {
		if p.New != nil {
			var s Summary
			s.SetReviewsDue(p.New.Plan, today)
			r.ReviewsDue = s.ReviewsDue
			return
		}
	}
}

// ClusterReport is what the change does in one cluster of the fleet.
type ClusterReport struct {
	Cluster string `json:"cluster"`
	Manager bool   `json:"manager,omitempty"`
	// Op is added or removed for a cluster on one side only, else changed
	// or unchanged.
	Op     Op      `json:"op"`
	Report *Report `json:"report"`
}

// Role names the cluster's part for headings: "manager" or "worker".
func (c ClusterReport) Role() string {
	if c.Manager {
		return "manager"
	}
	return "worker"
}

// CompareFleet compares each part; old and new label the two sides. Every
// part must exist on at least one side.
func CompareFleet(old, new string, parts []Part) (*FleetReport, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("nothing to compare: the fleet has no parts on either side")
	}
	r := &FleetReport{Old: old, New: new, Clusters: []ClusterReport{}}
	for _, p := range parts {
		rep, err := Compare(Side{Label: old, Result: p.Old}, Side{Label: new, Result: p.New})
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %w", p.Cluster, err)
		}
		c := ClusterReport{Cluster: p.Cluster, Manager: p.Manager, Report: rep, Op: opOf(p.Old != nil, p.New != nil, rep.Changed)}
		r.Changed = r.Changed || rep.Changed
		r.Counts.Added += rep.Counts.Added
		r.Counts.Removed += rep.Counts.Removed
		r.Counts.Changed += rep.Counts.Changed
		r.Counts.Unchanged += rep.Counts.Unchanged
		r.Clusters = append(r.Clusters, c)
	}
	r.NewWarnings = common(r.Clusters, func(s *Summary) *[]Warning { return &s.NewWarnings }, Warning.Text)
	r.ChangedWarnings = common(r.Clusters, func(s *Summary) *[]WarningChange { return &s.ChangedWarnings },
		func(w WarningChange) string { return w.Old.Text() + "\x00" + w.New.Text() })
	return r, nil
}

// common moves the items of list that every cluster's summary holds (by
// key) out of the summaries, and returns them in the first cluster's
// order; none for a fleet of one cluster, whose summary says it all.
func common[T any](clusters []ClusterReport, list func(*Summary) *[]T, key func(T) string) []T {
	out := []T{}
	if len(clusters) < 2 {
		return out
	}
	in := map[string]int{} // how many clusters hold the key
	for _, c := range clusters {
		seen := map[string]bool{}
		for _, it := range *list(&c.Report.Summary) {
			if k := key(it); !seen[k] {
				seen[k] = true
				in[k]++
			}
		}
	}
	for i, c := range clusters {
		l := list(&c.Report.Summary)
		if i == 0 {
			for _, it := range *l {
				if in[key(it)] == len(clusters) {
					out = append(out, it)
				}
			}
		}
		*l = slices.DeleteFunc(*l, func(it T) bool { return in[key(it)] == len(clusters) })
	}
	return out
}

// FleetParts lists the parts to compare, given each side's parts as
// generator.Parts returns them (the manager's first): the new side's
// manager, the old side's when it is another, then every worker of either
// side by name. A side without [clusters] passes nil; the caller decides
// which of the other side's parts its one rendering stands for.
func FleetParts(old, new []string) (names []string, manager map[string]bool) {
	manager = map[string]bool{}
	var workers []string
	for _, side := range [][]string{new, old} {
		for i, n := range side {
			switch {
			case i == 0 && !manager[n]:
				manager[n] = true
				names = append(names, n)
			case i > 0 && !slices.Contains(workers, n):
				workers = append(workers, n)
			}
		}
	}
	slices.Sort(workers)
	for _, w := range workers {
		if !manager[w] {
			names = append(names, w)
		}
	}
	return names, manager
}

// FleetJSON renders the fleet's report for tools, as JSON does a Report.
func FleetJSON(r *FleetReport) ([]byte, error) {
	return marshalIndented(r)
}

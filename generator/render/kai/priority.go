package kai

import (
	"slices"

	"github.com/tenancy-dev/tenancy/generator/plan"
)

// NonPreemptibleFrom is KAI's line between its two kinds of work: a
// PodGroup whose priority is below it is preemptible, one at or above it is
// not, unless the workload says otherwise with the kai.scheduler/preemptibility
// label (KAI's CalculatePreemptibility, nonPreemptiblePriorityThreshold; the
// docs' "Priority and preemptibility"). Non-preemptible work runs only
// within its queue's quota (NonPreemptibleOverQuota) and is never preempted.
const NonPreemptibleFrom = 100

// ClassValues returns the PriorityClass value KAI is given for each
// priority, by name, so that KAI's band (below NonPreemptibleFrom: may
// borrow and be preempted) says what the agreement's preemptible says, and
// the order of the agreement's values is kept. Each band is written as the
// agreement writes it when all of its priorities already fall in it;
// otherwise that band is renumbered by rank: preemptible values from 99
// down, non-preemptible ones from 100 up, equal values staying equal. The
// order holds across bands only when every non-preemptible priority is
// above every preemptible one, which Check requires.
func ClassValues(priorities []plan.Priority) map[string]int64 {
	out := make(map[string]int64, len(priorities))
	var pre, non []plan.Priority
	for _, r := range priorities {
		if r.Preemptible {
			pre = append(pre, r)
		} else {
			non = append(non, r)
		}
	}
	if !slices.ContainsFunc(pre, func(r plan.Priority) bool { return r.Value >= NonPreemptibleFrom }) {
		for _, r := range pre {
			out[r.Name] = int64(r.Value)
		}
	} else {
		renumber(pre, out, NonPreemptibleFrom-1, -1)
	}
	if !slices.ContainsFunc(non, func(r plan.Priority) bool { return r.Value < NonPreemptibleFrom || r.Value > maxUserPriority }) {
		for _, r := range non {
			out[r.Name] = int64(r.Value)
		}
	} else {
		renumber(non, out, NonPreemptibleFrom, 1)
	}
	return out
}

// renumber gives the distinct values of ranks consecutive numbers from
// start, stepping by step (-1: highest value first; 1: lowest first).
func renumber(ranks []plan.Priority, out map[string]int64, start, step int64) {
	values := make([]int64, 0, len(ranks))
	for _, r := range ranks {
		values = append(values, int64(r.Value))
	}
	slices.Sort(values)
	values = slices.Compact(values)
	if step < 0 {
		slices.Reverse(values)
	}
	index := make(map[int64]int64, len(values))
	for i, v := range values {
		index[v] = int64(i)
	}
	for _, r := range ranks {
		out[r.Name] = start + step*index[int64(r.Value)]
	}
}

// DefaultPriority names the priority that work naming none gets: the
// lowest preemptible one, which the render makes the cluster's
// globalDefault PriorityClass. Under Kueue such work has priority 0, below
// every class, and may borrow and be preempted; without a default, KAI's
// podgrouper would give it a class of KAI's chart by workload kind (a
// Deployment gets "inference", 125: non-preemptible, held at the team's
// guarantee; issue 19). The API server writes the globalDefault class's name
// into every pod that names none, and the podgrouper reads it from there.
// It returns "" when the agreement has no preemptible priority.
func DefaultPriority(priorities []plan.Priority) string {
	best := -1
	for i, r := range priorities {
		if !r.Preemptible {
			continue
		}
		if best < 0 || r.Value < priorities[best].Value || r.Value == priorities[best].Value && r.Name < priorities[best].Name {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return priorities[best].Name
}

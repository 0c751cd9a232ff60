package plan

import (
	"math/big"
	"slices"
	"sort"

	"github.com/tenancy-dev/tenancy/generator/agreement"
	"github.com/tenancy-dev/tenancy/generator/diag"
)

// Fleet is an agreement's clusters ([clusters]): the manager, which admits
// every job against the fleet-wide quotas (the whole plan) and dispatches
// it through Kueue's MultiKueue, and the workers, which run the jobs, each
// holding its share of every quota (Part).
type Fleet struct {
	// Manager names the manager's part: its [clusters.NAME], or "manager".
	Manager       string
	ManagerOrigin diag.Origin // the manager's table; zero when defaulted
	// AdmissionCheck names the MultiKueue AdmissionCheck (and its
	// MultiKueueConfig) every team ClusterQueue on the manager requires:
	// the pool's name.
	AdmissionCheck string
	Workers        []Worker    // sorted by name
	Origin         diag.Origin // the [clusters] key
}

// Worker is one worker cluster of a fleet.
type Worker struct {
	Name string
	// KubeconfigSecret names the Secret (key "kubeconfig") in Kueue's
	// namespace on the manager through which the manager reaches it.
	KubeconfigSecret string
	// Dispatcher is the user of that kubeconfig in the worker, as which
	// the manager's MultiKueue creates the copies of the jobs it
	// dispatches: the only requester, besides the trusted controllers,
	// that the worker's guardrails let create GPU work.
	Dispatcher string
	// Capacity is its GPUs per flavor of the agreement, in flavor order (0
	// for a flavor it does not list).
	Capacity []Capacity
	Origin   diag.Origin // the worker's table
}

// Capacity is a worker's GPUs of one flavor.
type Capacity struct {
	Flavor string
	GPUs   int64
	Origin diag.Origin // the value; the worker's table when not listed
}

// Share is a team's or a department's quota of one flavor in one worker
// of a fleet.
type Share struct {
	Cluster                      string
	Guaranteed, Lendable, Borrow int64
	// Origin is where the clusters key writes each count; a count of the
	// default split has its quota's origin.
	Origin QuotaOrigin
}

// Parts names the parts of a fleet: the manager first, then the workers by
// name. nil for an agreement of one cluster.
func (a *Agreement) Parts() []string {
	if a.Fleet == nil {
		return nil
	}
	out := []string{a.Fleet.Manager}
	for _, w := range a.Fleet.Workers {
		out = append(out, w.Name)
	}
	return out
}

// Worker returns the named worker, or nil.
func (f *Fleet) Worker(name string) *Worker {
	for i := range f.Workers {
		if f.Workers[i].Name == name {
			return &f.Workers[i]
		}
	}
	return nil
}

// GPUs returns the worker's GPUs of a flavor.
func (w *Worker) GPUs(flavor string) int64 {
	for _, c := range w.Capacity {
		if c.Flavor == flavor {
			return c.GPUs
		}
	}
	return 0
}

// Share returns the quota's share in a cluster; the zero Share when absent.
func (q Quota) Share(cluster string) Share {
	for _, s := range q.Shares {
		if s.Cluster == cluster {
			return s
		}
	}
	return Share{Cluster: cluster}
}

// Worker returns the worker whose part the plan is; nil for a manager's
// part and for a whole agreement.
func (a *Agreement) Worker() *Worker {
	if a.Fleet == nil || a.Cluster == "" {
		return nil
	}
	return a.Fleet.Worker(a.Cluster)
}

// IsManager reports whether the plan is a fleet manager's part.
func (a *Agreement) IsManager() bool { return a.Fleet != nil && a.Cluster == a.Fleet.Manager }

// Part returns the plan of one part of a fleet: for the manager, the whole
// agreement (the fleet-wide quotas) whose team ClusterQueues require the
// MultiKueue AdmissionCheck; for a worker, the agreement as that cluster
// holds it: its GPUs per flavor, and every team's and department's share
// there. The families render a part as they render any plan. nil when the
// agreement has no such part.
func (a *Agreement) Part(name string) *Agreement {
	if a.Fleet == nil {
		return nil
	}
	out := *a
	out.Cluster = name
	if name == a.Fleet.Manager {
		out.AdmissionChecks = []string{a.Fleet.AdmissionCheck}
		return &out
	}
	w := a.Fleet.Worker(name)
	if w == nil {
		return nil
	}
	out.Flavors = make([]Flavor, len(a.Flavors))
	for i, f := range a.Flavors {
		c := w.Capacity[i]
		f.Capacity, f.CapacityOrigin = c.GPUs, c.Origin
		out.Flavors[i] = f
	}
	out.Teams = make([]Team, len(a.Teams))
	for i, t := range a.Teams {
		t.Quotas = shareQuotas(t.Quotas, name)
		// Windows are refused with clusters (validate): a worker's
		// share has none.
		t.Windows = nil
		out.Teams[i] = t
	}
	out.Departments = make([]Department, len(a.Departments))
	for i, d := range a.Departments {
		d.Quotas = shareQuotas(d.Quotas, name)
		out.Departments[i] = d
	}
	return &out
}

// shareQuotas is quotas as one cluster holds them: each flavor's share
// there.
func shareQuotas(quotas []Quota, cluster string) []Quota {
	out := make([]Quota, len(quotas))
	for i, q := range quotas {
		s := q.Share(cluster)
		out[i] = Quota{Flavor: q.Flavor, Guaranteed: s.Guaranteed, Lendable: s.Lendable, Borrow: s.Borrow, Origin: s.Origin}
	}
	return out
}

// buildFleet plans a's [clusters] (nil without them) and splits every
// team's and department's quotas over the workers (Quota.Shares).
func buildFleet(a *agreement.Agreement, p *Agreement) *Fleet {
	if len(a.Clusters) == 0 {
		return nil
	}
	f := &Fleet{Manager: agreement.DefaultManager, AdmissionCheck: p.Name, Origin: diag.Origin{Pos: a.ClustersPos, Path: a.Clusters[0].Path.Root()}}
	for _, c := range a.Clusters {
		if c.Manager.Value {
			if f.ManagerOrigin.Pos.IsZero() {
				f.Manager, f.ManagerOrigin = c.Name, origin(c.Pos, c.Path)
			}
			continue
		}
		w := Worker{Name: c.Name, KubeconfigSecret: c.KubeconfigSecret.Value, Dispatcher: c.Dispatcher.Value, Origin: origin(c.Pos, c.Path)}
		for _, fl := range p.Flavors {
			capacity := Capacity{Flavor: fl.Name, Origin: w.Origin}
			for _, cf := range c.Flavors {
				if cf.Flavor == fl.Name {
					capacity.GPUs, capacity.Origin = cf.GPUs.Value, origin(cf.GPUs.Pos, cf.GPUs.Path)
				}
			}
			w.Capacity = append(w.Capacity, capacity)
		}
		f.Workers = append(f.Workers, w)
	}
	sort.Slice(f.Workers, func(i, j int) bool { return f.Workers[i].Name < f.Workers[j].Name })
	for i := range p.Teams {
		if t := a.Team(p.Teams[i].Name); t != nil {
			splitQuotas(f, p.Teams[i].Quotas, t.ByFlavor)
		}
	}
	for i := range p.Departments {
		if d := a.Department(p.Departments[i].Name); d != nil {
			splitQuotas(f, p.Departments[i].Quotas, d.ByFlavor)
		}
	}
	return f
}

// splitQuotas fills each quota's Shares, one per worker: as its clusters
// key writes them, or by the default split (split).
func splitQuotas(f *Fleet, quotas []Quota, byFlavor map[string]*agreement.Quota) {
	for i := range quotas {
		q := &quotas[i]
		var written []*agreement.ClusterShare
		if aq := byFlavor[q.Flavor]; aq != nil {
			written = aq.Clusters
		}
		q.Shares = split(f, *q, written)
	}
}

// split is a quota's shares per worker. Each count the clusters key writes
// for some cluster is taken as written for every cluster (0 where left
// out); validate checks that they add up. What it leaves out is split by
// default: the guarantee in proportion to each worker's GPUs of the flavor,
// lendable in proportion to the guarantee's split (so never above the
// guarantee there), both by largest remainder so the shares add up; and
// borrow in each worker the least of the quota's borrow and what the worker
// has beyond the guarantee there: the manager holds the fleet-wide limits,
// a worker must not refuse what the manager dispatches to it and can never
// give more than it has.
func split(f *Fleet, q Quota, written []*agreement.ClusterShare) []Share {
	n := len(f.Workers)
	shares := make([]Share, n)
	gpus := make([]int64, n)
	for i, w := range f.Workers {
		shares[i] = Share{Cluster: w.Name, Origin: q.Origin}
		gpus[i] = w.GPUs(q.Flavor)
	}
	at := func(s *agreement.ClusterShare) int {
		return slices.IndexFunc(f.Workers, func(w Worker) bool { return w.Name == s.Cluster })
	}
	has := func(get func(*agreement.ClusterShare) agreement.Int) bool {
		return slices.ContainsFunc(written, func(s *agreement.ClusterShare) bool { return get(s).State != agreement.Unset })
	}
	take := func(get func(*agreement.ClusterShare) agreement.Int, set func(*Share, int64, diag.Origin)) {
		for i := range shares {
			set(&shares[i], 0, diag.Origin{})
		}
		for _, s := range written {
			if i := at(s); i >= 0 {
				v := get(s)
				set(&shares[i], v.Value, origin(v.Pos, v.Path))
			}
		}
	}
	guaranteed := func(s *agreement.ClusterShare) agreement.Int { return s.Guaranteed }
	lendable := func(s *agreement.ClusterShare) agreement.Int { return s.Lendable }
	borrow := func(s *agreement.ClusterShare) agreement.Int { return s.Borrow }

	if written != nil && has(guaranteed) {
		take(guaranteed, func(s *Share, v int64, o diag.Origin) { s.Guaranteed, s.Origin.Guaranteed = v, o })
	} else {
		for i, v := range LargestRemainder(q.Guaranteed, gpus) {
			shares[i].Guaranteed = v
		}
	}
	if has(lendable) {
		take(lendable, func(s *Share, v int64, o diag.Origin) { s.Lendable, s.Origin.Lendable = v, o })
	} else {
		g := make([]int64, n)
		for i := range shares {
			g[i] = shares[i].Guaranteed
		}
		for i, v := range LargestRemainder(q.Lendable, g) {
			shares[i].Lendable = v
		}
	}
	if has(borrow) {
		take(borrow, func(s *Share, v int64, o diag.Origin) { s.Borrow, s.Origin.Borrow = v, o })
	} else {
		for i := range shares {
			shares[i].Borrow = max(min(q.Borrow, gpus[i]-shares[i].Guaranteed), 0)
		}
	}
	return shares
}

// LargestRemainder splits total in proportion to weights, in whole units
// that add up to total: each gets the floor of its exact share, and what is
// left goes one by one to the largest remainders, ties to the first. All
// zero weights (or a negative total) split nothing.
func LargestRemainder(total int64, weights []int64) []int64 {
	out := make([]int64, len(weights))
	var sum int64
	for _, w := range weights {
		sum += max(w, 0)
	}
	if sum <= 0 || total <= 0 {
		return out
	}
	rems := make([]*big.Int, len(weights))
	left := total
	bigTotal, bigSum := big.NewInt(total), big.NewInt(sum)
	for i, w := range weights {
		q, r := new(big.Int).QuoRem(new(big.Int).Mul(bigTotal, big.NewInt(max(w, 0))), bigSum, new(big.Int))
		out[i], rems[i] = q.Int64(), r
		left -= out[i]
	}
	order := make([]int, len(weights))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return rems[order[a]].Cmp(rems[order[b]]) > 0 })
	for _, i := range order[:left] {
		out[i]++
	}
	return out
}

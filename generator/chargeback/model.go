// Package chargeback is the chargeback model of an agreement: which accounts
// (team × flavor) a backend's metrics can tell apart, what each was agreed,
// the raw series that measure them, and the monthly statement computed from
// those series. It is pure: series are handed to it, so it is tested with
// synthetic data; the one piece that talks to Prometheus lives next to the
// command that needs it (cmd/tenancy/report.go).
//
// The same model feeds the PrometheusRule (render/monitor), so the recording
// rules and the statement count the same GPUs.
package chargeback

import (
	"fmt"
	"slices"
	"time"

	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// AllFlavors is the flavor of an account on KAI when the agreement has
// several flavors but one queue tree: KAI's queue metrics count a queue's
// GPUs across all of them (kai_queue_allocated_gpus has no flavor label).
// On an agreement of several node pools each pool's flavor is an account
// of its own, read from the team's queue of that pool.
const AllFlavors = "all"

// Model is what one backend's metrics can say about an agreement.
type Model struct {
	Pool     string
	Backend  gpu.Backend // whose metrics the model reads
	Currency string
	Flavors  []Flavor // in the agreement's order
	Teams    []Team   // sorted by name
	// Departments names the agreement's departments, sorted; on Kueue each
	// is the Cohort its teams' ClusterQueues are in.
	Departments []string
	// Scope is a label matcher every query of Sources adds, such as
	// cluster="east": one Prometheus that holds a fleet's series (Thanos,
	// Mimir, or Prometheus with each cluster's external labels) then
	// answers for one cluster. Empty for none.
	Scope string
	// Pools are KAI's node pools (gpu.Pools), whose queues Sources reads
	// one pool at a time; nil on Kueue and for one queue tree.
	Pools []PoolQueues
	// at is the model at an instant, for agreements with lending windows
	// (nil without, or outside every window); see lendable.
	at func(time.Time) *Model
}

// Flavor is a flavor as the backend's metrics see it: on KAI with several
// flavors, the one pseudo-flavor AllFlavors.
type Flavor struct {
	Name      string
	Resources []string // the Kubernetes resources counted
	// Capacity, in the backend's GPU units: units of the resource on Kueue;
	// on KAI, GPUs as KAI counts them (a MIG slice Ng.Mgb counts N).
	Capacity int64
	// Unassigned is the capacity no team is guaranteed: borrowers use it
	// before anyone's lent GPUs (see Lent).
	Unassigned int64
	// Price is the price of one unit-hour. On KAI with several flavors it
	// is the capacity-weighted mean of the flavors' prices.
	Price float64
	// MIGProfiles are the GPU_I_PROFILE values (e.g. 1g.10gb) of the MIG
	// resources counted; WholeGPUs says whether nvidia.com/gpu is one.
	MIGProfiles []string
	WholeGPUs   bool
}

// Team is a team's agreed numbers per flavor of the model.
type Team struct {
	Name string
	// Department is the team's department; empty without one.
	Department string
	Namespaces []string
	Quotas     map[string]Quota // by Flavor.Name
}

// PoolQueues are the team Queues of one KAI node pool: Queues, each a
// team's name and Suffix, count Flavor.
type PoolQueues struct {
	Flavor, Suffix string
	Queues         []string
}

// Quota is what a team was agreed for one flavor, in the flavor's units.
type Quota gpu.Sum

// NewModel builds the model of a planned agreement for a backend.
func NewModel(p *plan.Agreement, b gpu.Backend) (*Model, error) {
	m := &Model{Pool: p.Name, Backend: b, Currency: "USD"}
	if p.Monitoring != nil {
		m.Currency = p.Monitoring.Currency
	}
	price := func(flavor string) float64 {
		if p.Monitoring == nil {
			return 0
		}
		return p.Monitoring.Price(flavor)
	}
	units := b.Units()
	pools := gpu.Pools(p)
	if b != gpu.KAI {
		pools = nil
	}
	switch {
	case pools != nil:
		// KAI's node pools: a queue tree per flavor, so per flavor
		// accounts, of the pools' flavors only (the others have no
		// queue to count them).
		for _, pool := range pools {
			f := pool.Flavor
			mf := Flavor{Name: f.Name, Resources: []string{f.Resource}, Capacity: units(f.Resource, f.Capacity), Price: price(f.Name)}
			mf.addResource(f.Resource)
			m.Flavors = append(m.Flavors, mf)
		}
	case b == gpu.Kueue || len(p.Flavors) == 1:
		for _, f := range p.Flavors {
			mf := Flavor{Name: f.Name, Resources: []string{f.Resource}, Capacity: units(f.Resource, f.Capacity), Price: price(f.Name)}
			mf.addResource(f.Resource)
			m.Flavors = append(m.Flavors, mf)
		}
	case b == gpu.KAI:
		all := Flavor{Name: AllFlavors}
		var weighted float64
		for _, f := range p.Flavors {
			c := units(f.Resource, f.Capacity)
			all.Capacity += c
			weighted += float64(c) * price(f.Name)
			all.Resources = append(all.Resources, f.Resource)
			all.addResource(f.Resource)
		}
		if all.Capacity > 0 {
			all.Price = weighted / float64(all.Capacity)
		}
		m.Flavors = []Flavor{all}
	default:
		return nil, fmt.Errorf("chargeback: unknown backend %q", b)
	}
	for _, d := range p.Departments {
		m.Departments = append(m.Departments, d.Name)
	}
	for i, t := range p.Teams {
		mt := Team{Name: t.Name, Department: t.Department, Namespaces: t.Namespaces, Quotas: map[string]Quota{}}
		if b == gpu.KAI && len(p.Flavors) > 1 && pools == nil {
			mt.Quotas[AllFlavors] = Quota(gpu.TeamSum(p, &p.Teams[i], units, nil))
		} else {
			for _, f := range m.Flavors {
				mt.Quotas[f.Name] = Quota(gpu.TeamSum(p, &p.Teams[i], units, gpu.Flavor(f.Name)))
			}
		}
		m.Teams = append(m.Teams, mt)
	}
	for i := range m.Flavors {
		f := &m.Flavors[i]
		f.Unassigned = f.Capacity
		for _, t := range m.Teams {
			f.Unassigned -= t.Quotas[f.Name].Guaranteed
		}
		f.Unassigned = max(f.Unassigned, 0)
	}
	for _, pool := range pools {
		pq := PoolQueues{Flavor: pool.Flavor.Name, Suffix: "-" + pool.Name}
		for i := range p.Teams {
			if pool.HasQueue(&p.Teams[i]) {
				pq.Queues = append(pq.Queues, gpu.PoolQueueName(p.Teams[i].Name, pool.Name))
			}
		}
		slices.Sort(pq.Queues)
		m.Pools = append(m.Pools, pq)
	}
	if p.HasWindows() {
		m.at = windowModels(p, b)
	}
	return m, nil
}

func (f *Flavor) addResource(r string) {
	if r == gpu.WholeGPU {
		f.WholeGPUs = true
	}
	if profile, ok := gpu.MIGProfile(r); ok {
		f.MIGProfiles = append(f.MIGProfiles, profile)
	}
}

// Flavor returns the model's flavor of that name, or nil.
func (m *Model) Flavor(name string) *Flavor {
	for i := range m.Flavors {
		if m.Flavors[i].Name == name {
			return &m.Flavors[i]
		}
	}
	return nil
}

// Team returns the model's team of that name, or nil.
func (m *Model) Team(name string) *Team {
	for i := range m.Teams {
		if m.Teams[i].Name == name {
			return &m.Teams[i]
		}
	}
	return nil
}

// TeamNames returns the teams' names, sorted.
func (m *Model) TeamNames() []string {
	out := make([]string, len(m.Teams))
	for i, t := range m.Teams {
		out[i] = t.Name
	}
	return out
}

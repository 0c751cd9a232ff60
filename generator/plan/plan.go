// Package plan holds the normalized agreement: every default applied, every
// team's quota spelled out per flavor, in a stable order. Renderers render
// from a plan only; they never see TOML. Every value a family's checks read
// keeps its Origin in the agreement (position and field path), so a check on
// the plan points at the line and key the user wrote, as validation does.
package plan

import "github.com/tenancy-dev/tenancy/generator/diag"

// ReclaimPolicy says what happens when a team wants back GPUs it lent.
type ReclaimPolicy string

const (
	// ReclaimPreempt preempts borrowers as soon as the owner needs its GPUs.
	ReclaimPreempt ReclaimPolicy = "preempt"
	// ReclaimWait makes the owner wait until borrowers finish.
	ReclaimWait ReclaimPolicy = "wait"
)

// Agreement is the whole normalized agreement.
type Agreement struct {
	File       string // the agreement's name in diagnostics
	Name       string // the shared pool: Kueue Cohort, KAI parent queue
	NameOrigin diag.Origin
	// Backend is the agreement's backend key, the schedulers it is written
	// for; nil when the key is absent. Which backend a render uses is the
	// facade's choice (generator.Options), made from this and the options.
	// A key whose value failed to decode is nil too.
	Backend    *BackendKey
	Flavors    []Flavor   // in the file's order: Kueue tries them in this order
	Priorities []Priority // sorted by value descending, then name
	Teams      []Team     // sorted by name
	// Departments sorted by name; empty when the agreement has none.
	Departments []Department
	Topology    *Topology // nil without [topology]
	Guardrails  Guardrails
	Monitoring  *Monitoring // nil without [monitoring]
	// Fleet is the agreement's clusters; nil for an agreement of one
	// cluster.
	Fleet *Fleet
	// Cluster names the part of the fleet this plan is (Part); empty for
	// the whole agreement.
	Cluster string
	// AdmissionChecks are the AdmissionChecks every team's ClusterQueue
	// requires: the MultiKueue check on a fleet's manager, none elsewhere.
	AdmissionChecks []string
	// Source is the agreement's bytes, for the family that ships the
	// agreement itself (the windows controller's ConfigMap).
	Source []byte
	// Stewardship is the pool's: its owners answer for the flavors and
	// the pool itself.
	Stewardship
	// Includes are the files the agreement includes, as diagnostics name
	// them, in the order read; empty for an agreement in one file.
	Includes []string
	// NodePoolLabel is the label whose value names a KAI node pool ([kai]
	// node_pool_label; always filled, by default KAI's
	// kai.scheduler/node-pool), at NodePoolLabelOrigin.
	NodePoolLabel       string
	NodePoolLabelOrigin diag.Origin
}

// GPU sharing of a flavor (Flavor.GPUSharing).
const (
	GPUSharingNone     = "none"     // whole GPUs and MIG slices only
	GPUSharingFraction = "fraction" // pods may share a GPU by fraction (KAI)
)

// BackendKey is the backend key as written: its names in the file's order
// (a string is a list of one), each with its origin, and the origin of the
// key's value.
type BackendKey struct {
	Names   []string
	Origins []diag.Origin // Origins[i] is Names[i]'s
	Origin  diag.Origin
}

// Flavor is one kind of GPU and how many of it the cluster has.
type Flavor struct {
	Name     string
	Resource string // e.g. nvidia.com/gpu or nvidia.com/mig-1g.10gb
	Capacity int64
	// GPUsPerNode is one node's count of the flavor's resource (default
	// 8): what "if one node is lost" takes away.
	GPUsPerNode int64
	NodeLabels  map[string]string
	Tolerations []Toleration
	Origin      diag.Origin // the flavor's table
	// ResourceOrigin and CapacityOrigin are those keys' values (the
	// table's, for a resource left to its default).
	ResourceOrigin, CapacityOrigin diag.Origin
	// NodeLabelOrigins are the node labels' values, in the file's order.
	NodeLabelOrigins []diag.Origin
	// NodePool is the value of the node pool label (Agreement.NodePoolLabel)
	// on the flavor's Nodes, its KAI pool; always filled, by default the
	// flavor's name.
	NodePool       string
	NodePoolOrigin diag.Origin
	// GPUSharing is GPUSharingNone or GPUSharingFraction; always filled
	// (the flavor's gpu_sharing, else [kai]'s, else none). Its origin is
	// the value that set it: the flavor's key, [kai]'s, or the flavor's
	// table.
	GPUSharing       string
	GPUSharingOrigin diag.Origin
}

// Toleration mirrors corev1.Toleration's string fields.
type Toleration struct {
	Key      string
	Operator string
	Value    string
	Effect   string
	Origin   diag.Origin
}

// Priority is a named workload priority.
type Priority struct {
	Name  string
	Value int32
	// Preemptible: work at this priority may borrow beyond its team's
	// guarantee and may be preempted; false, it runs only within the
	// guarantee and is never preempted (where the backend can say so).
	Preemptible bool
	// Origin is the priority's value, or its key when a table leaves the
	// value out. Origins keep the file's order, which Priorities do not.
	Origin diag.Origin
}

// Team is one party to the agreement.
type Team struct {
	Name string
	// Department names the team's department (one of Departments); empty:
	// the team sits directly in the pool.
	Department string
	Namespaces []string // sorted
	Reclaim    ReclaimPolicy
	Weight     int64
	VMs        *int64      // nil: no limit on KubeVirt VirtualMachines
	Quotas     []Quota     // one per flavor of the agreement, in flavor order
	Retiring   bool        // its queues hold and drain: the first step of removing it
	Origin     diag.Origin // the team's table
	// ReclaimOrigin and RetiringOrigin are those keys' values; zero when
	// the team does not write them.
	ReclaimOrigin, RetiringOrigin diag.Origin
	// Windows are the team's lending windows, in the file's order; empty
	// for most teams.
	Windows []Window
	Stewardship
}

// Quota is a team's share of one flavor.
type Quota struct {
	Flavor     string
	Guaranteed int64 // nominal quota
	Lendable   int64 // at most Guaranteed
	Borrow     int64 // most GPUs used beyond Guaranteed
	Origin     QuotaOrigin
	// Shares are the quota split over a fleet's workers, one per worker
	// in Fleet.Workers' order; nil without a fleet.
	Shares []Share
}

// QuotaOrigin is where each count of a Quota was written (the team's
// shorthand keys or its [teams.T.flavors.F] table); zero for counts the
// agreement leaves out.
type QuotaOrigin struct {
	Guaranteed, Lendable, Borrow diag.Origin
}

// Topology lists node label keys, coarse to fine.
type Topology struct {
	Name         string
	Levels       []string
	LevelOrigins []diag.Origin // one per level
}

// Flavor returns the named flavor, or nil.
func (a *Agreement) Flavor(name string) *Flavor {
	for i := range a.Flavors {
		if a.Flavors[i].Name == name {
			return &a.Flavors[i]
		}
	}
	return nil
}

// Quota returns the team's quota for a flavor; the zero Quota when absent.
func (t *Team) Quota(flavor string) Quota {
	for _, q := range t.Quotas {
		if q.Flavor == flavor {
			return q
		}
	}
	return Quota{Flavor: flavor}
}

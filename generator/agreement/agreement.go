// Package agreement decodes a parsed tenancy.toml into typed fields that keep
// their positions, reporting unknown keys (with a suggestion for typos) and
// wrong types, and applies the format's defaults once, so validation and
// planning read the same values. Semantic rules live in package validate.
package agreement

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
)

// Pos is a 1-based line and column in the agreement file.
type Pos = diag.Pos

// State says what the file said about a value. A position says only where a
// value is; whether it is there is the State's job.
type State uint8

const (
	// Unset: the key is absent and has no default.
	Unset State = iota
	// Set: the key is written with a value of the right type.
	Set
	// Invalid: the key is written but its value could not be decoded; the
	// problem is already reported.
	Invalid
	// Defaulted: the key is absent and Value holds the format's default.
	Defaulted
)

// Scalar is one value of the file: its value, its state, and where it is.
// Pos is the value when written, the owning table when defaulted, and zero
// when unset.
type Scalar[T any] struct {
	Value T
	State State
	Pos   Pos
	Path  *field.Path
}

// IsSet reports whether the file gives the value.
func (s Scalar[T]) IsSet() bool { return s.State == Set }

// Int, Bool and Str are the scalar kinds the format has.
type (
	Int  = Scalar[int64]
	Bool = Scalar[bool]
	Str  = Scalar[string]
)

// DefaultResource is the resource a flavor counts when it names none.
const DefaultResource = "nvidia.com/gpu"

// DefaultGPUsPerNode is a flavor's node size when it names none: eight
// GPUs, the usual HGX/DGX board.
const DefaultGPUsPerNode = 8

// Agreement is the decoded file, in document order.
type Agreement struct {
	File    string
	Version Int
	Name    Str
	// Backend is the top-level backend key: the schedulers the agreement
	// is written for, in the order written (a string is a list of one).
	// Unset when absent; Pos is the value's, the string or the array.
	Backend    Scalar[[]Str]
	Flavors    []*Flavor
	Priorities []*Priority
	Teams      []*Team
	// Departments are the [departments.NAME] tables, in document order.
	Departments []*Department
	Topology    *Topology
	Guardrails  *Guardrails // never nil after Decode: absent means all defaults
	Monitoring  *Monitoring // nil without [monitoring]
	Components  *Components // never nil after Decode: absent means the upstream namespaces
	KAI         *KAI        // never nil after Decode: absent means KAI's defaults
	// Clusters are the [clusters.NAME] tables of a fleet, in document
	// order; nil for an agreement of one cluster.
	Clusters []*Cluster
	// ClustersPos is the [clusters] key; zero when absent.
	ClustersPos Pos
	// Stewardship is the pool's: its owners answer for the flavors and
	// the pool itself.
	Stewardship
}

// Flavor is a [flavors.NAME] table.
type Flavor struct {
	Name     string
	Pos      Pos
	Path     *field.Path
	Resource Str // Defaulted to DefaultResource
	Capacity Int
	// GPUsPerNode is how many of the flavor's resource one node has, for
	// "if one node is lost"; Defaulted to DefaultGPUsPerNode.
	GPUsPerNode Int
	NodeLabels  []Label
	Tolerations []*Toleration
	// NodePool is the value of the node pool label ([kai] node_pool_label)
	// on the flavor's Nodes: its KAI SchedulingShard's partitionLabelValue.
	// Defaulted to the flavor's name.
	NodePool Str
	// GPUSharing says whether pods may share the flavor's GPUs by fraction
	// (GPUSharingValues); Defaulted to [kai] gpu_sharing.
	GPUSharing Str
}

// Label is one node_labels entry; Value.Pos is the label's key.
type Label struct {
	Key   string
	Value Str
}

// Toleration is one entry of a flavor's tolerations array.
type Toleration struct {
	Pos      Pos
	Path     *field.Path
	Key      Str
	Operator Str
	Value    Str
	Effect   Str
}

// Priority is one [priorities] entry: NAME = VALUE, or
// NAME = { value = VALUE, preemptible = BOOL }.
type Priority struct {
	Name  string
	Pos   Pos         // the entry's key
	Path  *field.Path // priorities.NAME
	Value Int
	// Preemptible says whether work at this priority may borrow beyond its
	// team's guarantee and be preempted (for reclaim, or for higher
	// priorities of its team); false: it runs only within the guarantee and
	// is never preempted. Defaulted to DefaultPreemptible.
	Preemptible Bool
}

// Team is a [teams.NAME] table.
type Team struct {
	Name string
	Pos  Pos
	Path *field.Path
	// Namespaces lists the team's namespaces; when the key is absent it
	// holds the default, the team's name, in state Defaulted.
	Namespaces []Str
	// Department names the team's [departments.NAME]; Unset: the team
	// sits directly in the pool.
	Department Str
	Reclaim    Str
	Weight     Int
	VMs        Int
	// Retiring is the first step of removing a team: its queues stop
	// admitting and drain, so removing it later deletes nothing in use.
	Retiring Bool
	// Shorthand holds quota keys written on the team itself, allowed when
	// the agreement has one flavor. nil when none were written.
	Shorthand *Quota
	// Flavors holds [teams.NAME.flavors.FLAVOR] tables.
	Flavors []*Quota
	// ByFlavor is the team's quota per known flavor name, the shorthand
	// resolved: what the agreement states, computed once by Decode.
	// Unknown flavors are left out (validate reports them).
	ByFlavor map[string]*Quota
	// Windows are the team's [[teams.NAME.windows]], in document order.
	Windows []*Window
	Stewardship
}

// Quota is a team's guaranteed, lendable and borrow for one flavor.
type Quota struct {
	Flavor     string // for the shorthand, the agreement's one flavor once resolved
	Pos        Pos
	Path       *field.Path
	Guaranteed Int
	Lendable   Int
	Borrow     Int
	// Clusters are the quota's shares per cluster of a fleet, as written
	// (the clusters key); nil when absent: the default split applies.
	Clusters []*ClusterShare
}

// Topology is the optional [topology] table.
type Topology struct {
	Pos    Pos
	Path   *field.Path
	Levels []Str
}

// Flavor returns the named flavor, or nil.
func (a *Agreement) Flavor(name string) *Flavor {
	return named(a.Flavors, name, func(f *Flavor) string { return f.Name })
}

// Team returns the named team, or nil.
func (a *Agreement) Team(name string) *Team {
	return named(a.Teams, name, func(t *Team) string { return t.Name })
}

// named returns the item of list whose name (nameOf) is name, or nil.
func named[T any](list []*T, name string, nameOf func(*T) string) *T {
	for _, item := range list {
		if nameOf(item) == name {
			return item
		}
	}
	return nil
}

// Package agreement decodes a parsed tenancy.toml into typed fields that keep
// their positions, reporting unknown keys (with a suggestion for typos) and
// wrong types. Semantic rules live in package validate.
package agreement

import "github.com/tenancy-dev/tenancy/generator/load"

// Pos is a 1-based line and column in the agreement file.
type Pos = load.Pos

// Int is an integer field: its value, whether it was set, and where.
type Int struct {
	Value int64
	Set   bool
	Pos   Pos
	Path  string
}

// Str is a string field: its value, whether it was set, and where.
type Str struct {
	Value string
	Set   bool
	Pos   Pos
	Path  string
}

// Agreement is the decoded file, in document order.
type Agreement struct {
	File       string
	Version    Int
	Name       Str
	Flavors    []*Flavor
	Priorities []*Priority
	Teams      []*Team
	Topology   *Topology
}

// Flavor is a [flavors.NAME] table.
type Flavor struct {
	Name        string
	Pos         Pos
	Path        string
	Resource    Str
	Capacity    Int
	NodeLabels  []Label
	Tolerations []*Toleration
}

// Label is one node_labels entry.
type Label struct {
	Key   string
	Value Str
}

// Toleration is one entry of a flavor's tolerations array.
type Toleration struct {
	Pos      Pos
	Path     string
	Key      Str
	Operator Str
	Value    Str
	Effect   Str
}

// Priority is one [priorities] entry.
type Priority struct {
	Name  string
	Value Int
}

// Team is a [teams.NAME] table.
type Team struct {
	Name       string
	Pos        Pos
	Path       string
	Namespaces []Str
	// NamespacesField is the namespaces key itself; Set is false when the
	// team relies on the default [NAME].
	NamespacesField Str
	Reclaim         Str
	Weight          Int
	VMs             Int
	// Shorthand holds quota keys written on the team itself, allowed when
	// the agreement has one flavor. nil when none were written.
	Shorthand *Quota
	// Flavors holds [teams.NAME.flavors.FLAVOR] tables.
	Flavors []*Quota
}

// Quota is a team's guaranteed, lendable and borrow for one flavor.
type Quota struct {
	Flavor     string // empty for the shorthand until the plan fills it
	Pos        Pos
	Path       string
	Guaranteed Int
	Lendable   Int
	Borrow     Int
}

// Topology is the optional [topology] table.
type Topology struct {
	Pos    Pos
	Path   string
	Levels []Str
}

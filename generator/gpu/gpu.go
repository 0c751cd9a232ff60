// Package gpu is the domain vocabulary every family of rendered objects, the
// chargeback model and the wrappers share: the scheduler backends, the units
// GPUs are counted in (whole GPUs and MIG slices), a team's and a flavor's
// sums of quotas in those units, and the PromQL alternation of label values.
// It reads a plan only and imports no renderer, so any family may use it
// without depending on another.
package gpu

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/tenancy-dev/tenancy/generator/plan"
)

// Backend names the scheduler the manifests are for. Families of objects
// beside a backend (the guardrails, the monitoring) render for one.
type Backend string

// The backends.
const (
	Kueue Backend = "kueue"
	KAI   Backend = "kai"
)

// Backends lists every backend, in the order tenancy check reports them.
var Backends = []Backend{Kueue, KAI}

// WholeGPU is the whole-GPU resource; MIG slices count too (PerUnit).
const WholeGPU = "nvidia.com/gpu"

// MaxExact is the largest count KAI's float64 quotas hold exactly (2^53).
const MaxExact = 1 << 53

// migProfile is how KAI reads a MIG resource name
// (pkg/scheduler/api/common_info/resources/mig.go,
// ExtractGpuAndMemoryFromMigResourceName): nvidia.com/mig-<N>g.<M>gb.
var migProfile = regexp.MustCompile(`^nvidia\.com/mig-((\d+)g\.\d+gb)$`)

// MIGProfile returns the profile of a MIG resource, as DCGM's GPU_I_PROFILE
// label writes it (nvidia.com/mig-1g.10gb is 1g.10gb); ok is false for any
// other resource.
func MIGProfile(resource string) (profile string, ok bool) {
	m := migProfile.FindStringSubmatch(resource)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// PerUnit returns how many GPUs KAI counts against a queue's gpu quota and
// limit for one unit of a resource: 1 for a whole GPU, N for a MIG slice
// nvidia.com/mig-<N>g.<M>gb (GpuResourceRequirement.GetGpusQuota), and 0
// for a resource KAI does not count as GPUs at all.
func PerUnit(resource string) int64 {
	if resource == WholeGPU {
		return 1
	}
	m := migProfile.FindStringSubmatch(resource)
	if m == nil {
		return 0
	}
	n, err := strconv.ParseInt(m[2], 10, 64)
	if err != nil || n > MaxExact {
		return 0 // KAI's strconv.Atoi fails too: it counts nothing
	}
	return n
}

// Counted reports whether KAI counts a resource as GPUs.
func Counted(resource string) bool { return PerUnit(resource) > 0 }

// Units converts a count of a resource into the units a sum is kept in.
type Units func(resource string, n int64) int64

// Raw counts units of the resource itself, as Kubernetes and Kueue do: a MIG
// slice is one unit of its resource.
func Raw(_ string, n int64) int64 { return n }

// InGPUs counts GPUs as KAI does (PerUnit), saturating at MaxExact (KAI's
// checks refuse agreements that get there). A resource KAI does not count
// is 0.
func InGPUs(resource string, n int64) int64 {
	per := PerUnit(resource)
	if per == 0 || n == 0 {
		return 0
	}
	if n > MaxExact/per {
		return MaxExact
	}
	return n * per
}

// Units returns the units the backend's queues count in: units of each
// resource on Kueue, GPUs as KAI counts them on KAI.
func (b Backend) Units() Units {
	if b == KAI {
		return InGPUs
	}
	return Raw
}

// Sum is a team's (or several teams') quotas added up.
type Sum struct {
	Guaranteed, Lendable, Borrow int64
}

// MostUsable is what the quotas let a team ever use: its guarantee plus
// what it may borrow.
func (s Sum) MostUsable() int64 { return s.Guaranteed + s.Borrow }

// NeverLends reports whether a team with this sum lends nothing of a
// guarantee it has.
func (s Sum) NeverLends() bool { return s.Guaranteed > 0 && s.Lendable == 0 }

// Of selects flavors for a sum; nil selects every flavor.
type Of func(f plan.Flavor) bool

// Flavor selects one flavor by name.
func Flavor(name string) Of { return func(f plan.Flavor) bool { return f.Name == name } }

// Resource selects the flavors of one resource.
func Resource(resource string) Of { return func(f plan.Flavor) bool { return f.Resource == resource } }

// TeamSum adds up a team's quotas over the flavors of selects, each in u.
func TeamSum(p *plan.Agreement, t *plan.Team, u Units, of Of) Sum {
	return quotaSum(p, t.Quota, u, of)
}

// quotaSum adds up quota's share of each flavor of selects, in u: a team's
// and a department's quotas are summed alike.
func quotaSum(p *plan.Agreement, quota func(flavor string) plan.Quota, u Units, of Of) Sum {
	var s Sum
	for _, f := range p.Flavors {
		if of != nil && !of(f) {
			continue
		}
		q := quota(f.Name)
		s.Guaranteed += u(f.Resource, q.Guaranteed)
		s.Lendable += u(f.Resource, q.Lendable)
		s.Borrow += u(f.Resource, q.Borrow)
	}
	return s
}

// FlavorSum adds up every team's quotas of the flavors of selects, in u.
func FlavorSum(p *plan.Agreement, u Units, of Of) Sum {
	var s Sum
	for i := range p.Teams {
		ts := TeamSum(p, &p.Teams[i], u, of)
		s.Guaranteed += ts.Guaranteed
		s.Lendable += ts.Lendable
		s.Borrow += ts.Borrow
	}
	return s
}

// Capacity adds up the capacity of the flavors of selects, in u.
func Capacity(p *plan.Agreement, u Units, of Of) int64 {
	var n int64
	for _, f := range p.Flavors {
		if of == nil || of(f) {
			n += u(f.Resource, f.Capacity)
		}
	}
	return n
}

// Alternation is a PromQL regular expression (RE2, fully anchored by
// PromQL's =~) matching exactly the values, each escaped with
// regexp.QuoteMeta: a MIG profile's dot matches only a dot.
func Alternation(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = regexp.QuoteMeta(v)
	}
	return strings.Join(q, "|")
}

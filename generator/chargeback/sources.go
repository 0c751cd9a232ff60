package chargeback

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/tenancy-dev/tenancy/generator/gpu"
)

// Kind names one measured quantity of an account.
type Kind string

// The quantities a statement integrates.
const (
	// Allocated: GPUs the scheduler has admitted for the team.
	Allocated Kind = "allocated"
	// Guaranteed: the team's guarantee as the scheduler enforces it.
	Guaranteed Kind = "guaranteed"
	// UtilSum and UtilCount: the sum and count of the utilisation (0 to 1)
	// of the GPUs in the team's namespaces, per namespace.
	UtilSum   Kind = "util_sum"
	UtilCount Kind = "util_count"
)

// Query is one PromQL query of raw series and how its labels name an
// account: TeamLabel and FlavorLabel are label names in the result; an
// empty FlavorLabel means Flavor is fixed.
type Query struct {
	Kind        Kind
	Flavor      string // fixed flavor, when FlavorLabel is empty
	Expr        string
	TeamLabel   string // "namespace" for DCGM: mapped to teams by Team.Namespaces
	FlavorLabel string
}

// Replica selects the Kueue replica whose metrics count: the leader, or a
// single replica ("standalone"; older Kueue has no replica_role). A
// follower's gauges may be stale.
const Replica = `replica_role!="follower"`

// Sources returns the queries of raw series a statement needs. They read
// the schedulers' and dcgm-exporter's own metrics, so a statement works for
// ranges before tenancy's recording rules were installed.
//
// Kueue (metrics.enableClusterQueueResources: true) reports per ClusterQueue
// (the team), flavor and resource; the cohort is the pool (or one of its
// departments), so a ClusterQueue in those cohorts that is not a team is
// reported as an unknown team. KAI's
// queue controller reports per queue (queue_name, the team) in GPUs as KAI
// counts them, across flavors; on an agreement of several node pools, per
// pool queue (training-h100), one account per pool's flavor.
func (m *Model) Sources() []Query {
	var out []Query
	switch m.Backend {
	case gpu.Kueue:
		var resources []string
		for _, f := range m.Flavors {
			resources = append(resources, f.Resources...)
		}
		cohort := fmt.Sprintf("cohort=%q", m.Pool)
		if len(m.Departments) > 0 {
			// A department's teams are in its Cohort, a child of the pool's.
			cohort = fmt.Sprintf("cohort=~`%s`", gpu.Alternation(append([]string{m.Pool}, m.Departments...)))
		}
		sel := fmt.Sprintf("{%s, resource=~`%s`, %s%s}", cohort, gpu.Alternation(resources), Replica, m.scope())
		out = append(out,
			Query{Kind: Allocated, Expr: "sum by (cluster_queue, flavor) (kueue_cluster_queue_resource_usage" + sel + ")", TeamLabel: "cluster_queue", FlavorLabel: "flavor"},
			Query{Kind: Guaranteed, Expr: "sum by (cluster_queue, flavor) (kueue_cluster_queue_nominal_quota" + sel + ")", TeamLabel: "cluster_queue", FlavorLabel: "flavor"},
		)
	case gpu.KAI:
		if len(m.Pools) > 0 {
			out = append(out, m.poolSources()...)
			break
		}
		sel := fmt.Sprintf("{queue_name=~`%s`%s}", gpu.Alternation(m.TeamNames()), m.scope())
		f := m.Flavors[0].Name
		out = append(out,
			Query{Kind: Allocated, Flavor: f, Expr: "sum by (queue_name) (kai_queue_allocated_gpus" + sel + ")", TeamLabel: "queue_name"},
			Query{Kind: Guaranteed, Flavor: f, Expr: "sum by (queue_name) (kai_queue_deserved_gpus" + sel + ")", TeamLabel: "queue_name"},
		)
	}
	var namespaces []string
	for _, t := range m.Teams {
		namespaces = append(namespaces, t.Namespaces...)
	}
	for _, f := range m.Flavors {
		util := m.Utilization(f, gpu.Alternation(namespaces))
		if util == "" {
			continue
		}
		out = append(out,
			Query{Kind: UtilSum, Flavor: f.Name, Expr: "sum by (namespace) (" + util + ")", TeamLabel: "namespace"},
			Query{Kind: UtilCount, Flavor: f.Name, Expr: "count by (namespace) (" + util + ")", TeamLabel: "namespace"},
		)
	}
	return out
}

// poolSources read, per KAI node pool, its team Queues (training-h100) as
// the pool's flavor, with the pool's suffix taken off the queue name, so
// the team label holds the team as on one queue tree.
func (m *Model) poolSources() []Query {
	var out []Query
	for _, pq := range m.Pools {
		if len(pq.Queues) == 0 {
			continue
		}
		sel := fmt.Sprintf("{queue_name=~`%s`%s}", gpu.Alternation(pq.Queues), m.scope())
		team := func(metric string) string {
			return fmt.Sprintf("label_replace(sum by (queue_name) (%s%s), \"queue_name\", \"$1\", \"queue_name\", `(.+)%s`)", metric, sel, regexp.QuoteMeta(pq.Suffix))
		}
		out = append(out,
			Query{Kind: Allocated, Flavor: pq.Flavor, Expr: team("kai_queue_allocated_gpus"), TeamLabel: "queue_name"},
			Query{Kind: Guaranteed, Flavor: pq.Flavor, Expr: team("kai_queue_deserved_gpus"), TeamLabel: "queue_name"},
		)
	}
	return out
}

// Utilization returns the PromQL of the utilisation, from 0 to 1, of each
// GPU (or MIG instance) of a flavor in the namespaces matched by the
// regular expression nsRegexp, one series per device; "" when dcgm-exporter
// cannot tell the flavor's devices apart from another flavor's.
//
// dcgm-exporter labels a device used by a pod with the pod's namespace, pod
// and container (its Kubernetes mapping); a MIG instance carries
// GPU_I_PROFILE and GPU_I_ID. DCGM_FI_DEV_GPU_UTIL (percent) is a whole
// device's; a MIG instance's activity is DCGM_FI_PROF_GR_ENGINE_ACTIVE (a
// ratio). Whole GPUs of two flavors look alike (only modelName differs, in
// words the agreement does not hold), so a flavor sharing whole GPUs with
// another has no utilisation.
func (m *Model) Utilization(f Flavor, nsRegexp string) string {
	wholeFlavors := 0
	for _, o := range m.Flavors {
		if o.WholeGPUs {
			wholeFlavors++
		}
	}
	var parts []string
	if f.WholeGPUs && wholeFlavors == 1 {
		parts = append(parts, fmt.Sprintf("DCGM_FI_DEV_GPU_UTIL{namespace=~`%s`, pod!=\"\", GPU_I_PROFILE=\"\"%s} / 100", nsRegexp, m.scope()))
	}
	if len(f.MIGProfiles) > 0 {
		parts = append(parts, fmt.Sprintf("DCGM_FI_PROF_GR_ENGINE_ACTIVE{namespace=~`%s`, pod!=\"\", GPU_I_PROFILE=~`%s`%s}", nsRegexp, gpu.Alternation(f.MIGProfiles), m.scope()))
	}
	if len(parts) == 0 || (f.WholeGPUs && wholeFlavors > 1 && len(f.MIGProfiles) == 0) {
		return ""
	}
	return strings.Join(parts, " or ")
}

// scope is the Scope matcher as the last of a selector's: ", cluster=\"east\"",
// or "" without one, so the queries of a single cluster stay as they were.
func (m *Model) scope() string {
	if m.Scope == "" {
		return ""
	}
	return ", " + m.Scope
}

// Package kai renders a plan into NVIDIA KAI Scheduler objects: a tree of
// scheduling.run.ai/v2 Queues, PriorityClasses and labelled Namespaces, and
// for an agreement with quotas on several flavors a node pool per flavor
// (a kai.scheduler/v1 SchedulingShard and a queue tree each, pools.go).
// Queues count GPUs the way KAI does (a MIG slice nvidia.com/mig-<N>g.<M>gb
// as N GPUs) and PriorityClass values fall in KAI's preemptible or
// non-preemptible band as each priority's preemptible says. KAI has no
// lending limit and no per-flavor quota (hence a pool per flavor); what it
// cannot express exactly is reported by Check, on the plan, as warnings
// naming the agreement field. docs/kai.md says what KAI does with the result.
// The team Namespaces, with QueueLabel on them, are the namespaces family's.
package kai

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render"
)

// The Queue's API and the label naming a workload's queue are KAI's
// descriptor's (gpu.Describe), the one place they are written.
var (
	QueueAPIVersion = gpu.Describe(gpu.KAI).QueueAPIVersion("")
	// QueueLabel names a workload's queue. KAI reads it on the pod or its
	// top owner only (the podgrouper's DefaultGrouper.CalcPodGroupQueue);
	// on a team Namespace it routes nothing and records the namespace's
	// queue for people and admission policies.
	QueueLabel = gpu.Describe(gpu.KAI).QueueLabel
)

const (
	// maxUserPriority is the highest value Kubernetes accepts for a
	// PriorityClass that is not a system one.
	maxUserPriority = 1_000_000_000
)

// Suffixes of the two subtrees under the pool queue.
const (
	SharedSuffix   = "-shared"
	ReservedSuffix = "-reserved"
)

// object is a KAI object as tenancy writes it: its type, its metadata and
// the part of its spec tenancy sets. KAI's Go module is not reachable here,
// so each spec is written from KAI v0.17.0's CRD, and every rendered object
// is checked against that CRD in the tests.
type object[Spec any] struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              Spec `json:"spec"`
}

// Queue is the part of KAI's scheduling.run.ai/v2 Queue that tenancy writes
// (CRD shared/crds/kai/scheduling.run.ai_queues.yaml).
type Queue = object[QueueSpec]

// QueueSpec is a Queue's spec.
type QueueSpec struct {
	ParentQueue string         `json:"parentQueue,omitempty"`
	Resources   QueueResources `json:"resources"`
}

// QueueResources are a Queue's quotas per resource kind.
type QueueResources struct {
	GPU    QueueResource `json:"gpu"`
	CPU    QueueResource `json:"cpu"`
	Memory QueueResource `json:"memory"`
}

// QueueResource is one resource's quota, limit and over-quota weight; -1
// means unlimited. KAI reads them as float64; tenancy's counts are whole
// and at most 2^53, so int64 writes them exactly.
type QueueResource struct {
	Quota           int64 `json:"quota"`
	Limit           int64 `json:"limit"`
	OverQuotaWeight int64 `json:"overQuotaWeight"`
}

// Renderer renders the KAI objects of an agreement.
type Renderer struct{}

// Render returns the KAI objects. Check has refused what KAI cannot take.
// An agreement whose quotas are on one flavor is one queue tree; one whose
// quotas are on several is a node pool per flavor (Pools): a
// SchedulingShard and a queue tree each, counted from that flavor alone.
func (Renderer) Render(p *plan.Agreement) ([]render.Object, diag.List) {
	var typed []any
	values := ClassValues(p.Priorities)
	fallback := DefaultPriority(p.Priorities)
	for _, pr := range p.Priorities {
		pc := priorityClass(p, pr, values[pr.Name])
		if pr.Name == fallback {
			pc.GlobalDefault = true
			pc.Description += "; the cluster's default for pods that name no priority"
		}
		typed = append(typed, pc)
	}
	pools := Pools(p)
	if pools == nil {
		typed = append(typed, queueTree(tree{p: p})...)
	}
	for _, pool := range pools {
		typed = append(typed, schedulingShard(p, pool))
		typed = append(typed, queueTree(poolTree(p, pool))...)
	}
	objs, err := render.Objects(typed)
	if err != nil {
		return nil, diag.List{{Severity: diag.Error, Type: field.ErrorTypeInternal, File: p.File, Message: "kai: " + err.Error()}}
	}
	return objs, nil
}

// queueTree returns one tree of Queues: the pool queue, its shared and
// reserved subtrees, the departments and the teams. A team that never
// lends (gpu.Sum.NeverLends) goes in a subtree whose limit equals its
// quota, and the other subtree's limit keeps its GPUs out of everyone
// else's reach.
func queueTree(tr tree) []any {
	p := tr.p
	capacity := gpu.Capacity(p, gpu.InGPUs, nil)
	type leaf struct {
		team               plan.Team
		guaranteed, borrow int64
	}
	var shared, reservedTeams []leaf
	var sharedQuota, reservedQuota int64
	for i, t := range p.Teams {
		if t.Department != "" || !tr.holds(&p.Teams[i]) {
			continue // under its department's queue (departmentQueues), or not in this pool
		}
		s := gpu.TeamSum(p, &p.Teams[i], gpu.InGPUs, nil)
		if s.NeverLends() {
			reservedTeams = append(reservedTeams, leaf{t, s.Guaranteed, s.Borrow})
			reservedQuota += s.Guaranteed
		} else {
			shared = append(shared, leaf{t, s.Guaranteed, s.Borrow})
			sharedQuota += s.Guaranteed
		}
	}

	var typed []any
	departments := departmentQueues(tr)
	for i := range p.Departments {
		sharedQuota += gpu.DepartmentSum(p, &p.Departments[i], gpu.InGPUs, nil).Guaranteed
	}
	root := tr.root()
	typed = append(typed, tr.queue(root, "", "", queueResources(sharedQuota+reservedQuota, capacity, 1)))
	if len(shared) > 0 || len(departments) > 0 {
		// The shared subtree may grow into everything but the reserved
		// teams' guarantees: that is what keeps them never lent.
		typed = append(typed, tr.queue(root+SharedSuffix, root, "", queueResources(sharedQuota, capacity-reservedQuota, 1)))
		for _, l := range shared {
			typed = append(typed, tr.queue(tr.name(l.team.Name), root+SharedSuffix, l.team.Name, queueResources(l.guaranteed, l.guaranteed+l.borrow, l.team.Weight)))
		}
		typed = append(typed, departments...)
	}
	if len(reservedTeams) > 0 {
		typed = append(typed, tr.queue(root+ReservedSuffix, root, "", queueResources(reservedQuota, reservedQuota, 0)))
		for _, l := range reservedTeams {
			typed = append(typed, tr.queue(tr.name(l.team.Name), root+ReservedSuffix, l.team.Name, queueResources(l.guaranteed, l.guaranteed, l.team.Weight)))
		}
	}
	return typed
}

// queueResources returns a Queue's resources: GPUs as agreed; cpu and memory unlimited
// (-1), since the agreement is about GPUs.
func queueResources(quota, limit, weight int64) QueueResources {
	unlimited := QueueResource{Quota: -1, Limit: -1, OverQuotaWeight: 1}
	return QueueResources{
		GPU:    QueueResource{Quota: quota, Limit: limit, OverQuotaWeight: weight},
		CPU:    unlimited,
		Memory: unlimited,
	}
}

// queue is one Queue of the tree, named as the tree names it (name and
// parent already are), with the tree's labels.
func (tr tree) queue(name, parent, team string, resources QueueResources) *Queue {
	q := &Queue{
		TypeMeta:   metav1.TypeMeta{APIVersion: QueueAPIVersion, Kind: gpu.Describe(gpu.KAI).QueueKind},
		ObjectMeta: render.Meta(tr.p.Name, team, name, ""),
		Spec:       QueueSpec{ParentQueue: parent, Resources: resources},
	}
	if tr.pool != nil {
		q.Labels[tr.label] = tr.pool.Value
	}
	return q
}

// priorityClass is the PriorityClass of one priority, with the value
// ClassValues gave it, which KAI reads for preemptibility too.
func priorityClass(p *plan.Agreement, pr plan.Priority, value int64) *schedulingv1.PriorityClass {
	// The API server's default, written out.
	policy := corev1.PreemptLowerPriority
	kind := "preemptible: may borrow idle GPUs"
	if !pr.Preemptible {
		kind = "non-preemptible: runs within the team's guarantee only"
	}
	return &schedulingv1.PriorityClass{
		TypeMeta:         metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"},
		ObjectMeta:       render.Meta(p.Name, "", pr.Name, ""),
		Value:            int32(value),
		Description:      fmt.Sprintf("Priority %s (%d in the agreement; %s) of the GPU pool %s, from its tenancy agreement", pr.Name, pr.Value, kind, p.Name),
		PreemptionPolicy: &policy,
	}
}

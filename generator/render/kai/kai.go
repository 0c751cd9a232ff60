// Package kai renders a plan into NVIDIA KAI Scheduler objects: a tree of
// scheduling.run.ai/v2 Queues, PriorityClasses and labelled Namespaces. KAI
// has no lending limit and no per-flavor quota; what it cannot express
// exactly is reported by Rules, the backend's validation rules, as warnings
// naming the agreement field.
package kai

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render"
)

// Names and labels KAI reads.
const (
	QueueAPIVersion = "scheduling.run.ai/v2"
	// QueueLabel names a workload's queue.
	QueueLabel = "kai.scheduler/queue"
	// WholeGPU is the one resource KAI queues count as GPUs.
	WholeGPU = "nvidia.com/gpu"
	// maxUserPriority is the highest value Kubernetes accepts for a
	// PriorityClass that is not a system one.
	maxUserPriority = 1_000_000_000
)

// Suffixes of the two subtrees under the pool queue.
const (
	SharedSuffix   = "-shared"
	ReservedSuffix = "-reserved"
)

// Queue is the part of KAI's scheduling.run.ai/v2 Queue that tenancy writes.
// KAI's Go module is not reachable here, so the type is written from the
// v0.17.0 CRD (shared/crds/kai/scheduling.run.ai_queues.yaml), and every
// rendered Queue is checked against that CRD in the tests.
type Queue struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              QueueSpec `json:"spec"`
}

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

// counted reports whether KAI counts a resource as GPUs.
func counted(resource string) bool { return resource == WholeGPU }

// neverLends reports whether a team with these whole-GPU sums lends
// nothing: such teams go in a subtree whose limit equals its quota, and the
// other subtree's limit keeps their GPUs out of everyone else's reach.
func neverLends(guaranteed, lendable int64) bool { return guaranteed > 0 && lendable == 0 }

// sums adds up a team's whole-GPU quotas across flavors.
func sums(p *plan.Agreement, t plan.Team) (guaranteed, lendable, borrow int64) {
	for _, f := range p.Flavors {
		if counted(f.Resource) {
			q := t.Quota(f.Name)
			guaranteed, lendable, borrow = guaranteed+q.Guaranteed, lendable+q.Lendable, borrow+q.Borrow
		}
	}
	return guaranteed, lendable, borrow
}

// Render returns the KAI objects. Rules has refused what KAI cannot take.
func (Renderer) Render(p *plan.Agreement) ([]render.Object, diag.List) {
	var capacity int64
	for _, f := range p.Flavors {
		if counted(f.Resource) {
			capacity += f.Capacity
		}
	}
	type leaf struct {
		team               plan.Team
		guaranteed, borrow int64
	}
	var shared, reservedTeams []leaf
	var sharedQuota, reservedQuota int64
	for _, t := range p.Teams {
		g, l, b := sums(p, t)
		if neverLends(g, l) {
			reservedTeams = append(reservedTeams, leaf{t, g, b})
			reservedQuota += g
		} else {
			shared = append(shared, leaf{t, g, b})
			sharedQuota += g
		}
	}

	var typed []any
	for _, t := range p.Teams {
		for _, ns := range t.Namespaces {
			typed = append(typed, render.Namespace(p.Name, t.Name, ns, map[string]string{QueueLabel: t.Name}))
			if t.VMs != nil {
				typed = append(typed, render.VMQuota(p.Name, t.Name, ns, *t.VMs))
			}
		}
	}
	for _, pr := range p.Priorities {
		typed = append(typed, priorityClass(p, pr))
	}
	typed = append(typed, queue(p, p.Name, "", "", gpu(sharedQuota+reservedQuota, capacity, 1)))
	if len(shared) > 0 {
		// The shared subtree may grow into everything but the reserved
		// teams' guarantees: that is what keeps them never lent.
		typed = append(typed, queue(p, p.Name+SharedSuffix, p.Name, "", gpu(sharedQuota, capacity-reservedQuota, 1)))
		for _, l := range shared {
			typed = append(typed, queue(p, l.team.Name, p.Name+SharedSuffix, l.team.Name, gpu(l.guaranteed, l.guaranteed+l.borrow, l.team.Weight)))
		}
	}
	if len(reservedTeams) > 0 {
		typed = append(typed, queue(p, p.Name+ReservedSuffix, p.Name, "", gpu(reservedQuota, reservedQuota, 0)))
		for _, l := range reservedTeams {
			typed = append(typed, queue(p, l.team.Name, p.Name+ReservedSuffix, l.team.Name, gpu(l.guaranteed, l.guaranteed, l.team.Weight)))
		}
	}
	objs, err := render.Objects(typed)
	if err != nil {
		return nil, diag.List{{Severity: diag.Error, Type: field.ErrorTypeInternal, File: p.File, Message: "kai: " + err.Error()}}
	}
	return objs, nil
}

// gpu returns a Queue's resources: GPUs as agreed; cpu and memory unlimited
// (-1), since the agreement is about GPUs.
func gpu(quota, limit, weight int64) QueueResources {
	unlimited := QueueResource{Quota: -1, Limit: -1, OverQuotaWeight: 1}
	return QueueResources{
		GPU:    QueueResource{Quota: quota, Limit: limit, OverQuotaWeight: weight},
		CPU:    unlimited,
		Memory: unlimited,
	}
}

func queue(p *plan.Agreement, name, parent, team string, resources QueueResources) *Queue {
	return &Queue{
		TypeMeta:   metav1.TypeMeta{APIVersion: QueueAPIVersion, Kind: "Queue"},
		ObjectMeta: render.Meta(p.Name, team, name, ""),
		Spec:       QueueSpec{ParentQueue: parent, Resources: resources},
	}
}

func priorityClass(p *plan.Agreement, pr plan.Priority) *schedulingv1.PriorityClass {
	// The API server's default, written out.
	policy := corev1.PreemptLowerPriority
	return &schedulingv1.PriorityClass{
		TypeMeta:         metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"},
		ObjectMeta:       render.Meta(p.Name, "", pr.Name, ""),
		Value:            pr.Value,
		Description:      fmt.Sprintf("Priority %s of the GPU pool %s, from its tenancy agreement", pr.Name, p.Name),
		PreemptionPolicy: &policy,
	}
}

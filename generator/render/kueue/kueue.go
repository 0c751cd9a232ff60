// Package kueue renders a plan into Kueue objects using Kueue's own API types
// (sigs.k8s.io/kueue v0.17.0), so field names cannot drift from what the
// Kueue webhooks and CRDs accept.
package kueue

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/kueueapi"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render"
)

// Jobs request cpu and memory next to GPUs, and Kueue refuses a Workload that
// requests a resource its ClusterQueue does not cover. The agreement is about
// GPUs, so every ClusterQueue covers cpu and memory with a quota no GPU
// cluster reaches and lends or borrows none of it: cpu and memory never
// decide admission. See docs/decisions.md.
var (
	unboundedCPU    = canonical("100k")
	unboundedMemory = canonical("100Ti")
)

// canonical parses a quantity and caches its canonical string, which
// Quantity.MarshalJSON (and DeepCopy) then copy instead of recomputing it
// for every ClusterQueue: for binary units like Ti that goes through
// arbitrary-precision arithmetic.
func canonical(s string) resource.Quantity {
	q := resource.MustParse(s)
	_ = q.String()
	return q
}

// Renderer renders Kueue objects for one API version ("v1beta2" or
// "v1beta1").
type Renderer struct {
	APIVersion string
}

// Render returns the Kueue objects of the agreement; the team Namespaces are
// the namespaces family's.
func (r Renderer) Render(p *plan.Agreement) ([]render.Object, diag.List) {
	typed := typedObjects(p)
	if r.APIVersion == "v1beta1" {
		var err error
		if typed, err = kueueapi.ToV1beta1(typed); err != nil {
			return nil, internal(p, err)
		}
	}
	objs, err := render.Objects(typed)
	if err != nil {
		return nil, internal(p, err)
	}
	for _, o := range objs {
		if o.Kind() != "ResourceFlavor" {
			continue
		}
		// An empty spec is refused by a server-side apply over a flavor
		// that had node labels (spec becomes null), which is what dropping
		// node_labels from an agreement does. An explicit empty map keeps
		// spec an object; the API server stores and returns it as it is.
		// The Go type's omitempty cannot say this, so it is said here.
		if _, ok, _ := unstructured.NestedMap(o.Fields, "spec", "nodeLabels"); !ok {
			if err := unstructured.SetNestedMap(o.Fields, map[string]any{}, "spec", "nodeLabels"); err != nil {
				return nil, internal(p, err)
			}
		}
	}
	return objs, nil
}

// internal reports a failure of the renderer itself, not of the agreement.
func internal(p *plan.Agreement, err error) diag.List {
	return diag.List{{Severity: diag.Error, Type: field.ErrorTypeInternal, File: p.File, Message: "kueue: " + err.Error()}}
}

// typedObjects builds the v1beta2 objects in Kueue's and Kubernetes' Go
// types, so field names cannot drift from what the API server accepts.
func typedObjects(p *plan.Agreement) []runtime.Object {
	// Sized up front: with thousands of teams, growing the slice copies it
	// a dozen times.
	n := len(p.Priorities) + len(p.Flavors) + len(p.Departments) + 2
	for _, t := range p.Teams {
		n += 1 + 2*len(t.Namespaces)
	}
	objs := make([]runtime.Object, 0, n)
	for _, pr := range p.Priorities {
		objs = append(objs, priorityClass(p, pr))
	}
	if p.Topology != nil {
		objs = append(objs, topology(p))
	}
	for _, f := range p.Flavors {
		objs = append(objs, flavor(p, f))
	}
	objs = append(objs, cohort(p))
	for _, d := range p.Departments {
		objs = append(objs, departmentCohort(p, d))
	}
	for _, t := range p.Teams {
		objs = append(objs, clusterQueue(p, t))
		for _, ns := range t.Namespaces {
			objs = append(objs, localQueue(p, t, t.Name, ns))
			if p.Guardrails.DefaultQueue {
				objs = append(objs, localQueue(p, t, plan.DefaultQueueName, ns))
			}
		}
	}
	return objs
}

func meta(p *plan.Agreement, team, name, namespace string) metav1.ObjectMeta {
	return render.Meta(p.Name, team, name, namespace)
}

func typeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: kueue.GroupVersion.String(), Kind: kind}
}

func priorityClass(p *plan.Agreement, pr plan.Priority) *kueue.WorkloadPriorityClass {
	return &kueue.WorkloadPriorityClass{
		TypeMeta:    typeMeta("WorkloadPriorityClass"),
		ObjectMeta:  meta(p, "", pr.Name, ""),
		Value:       pr.Value,
		Description: fmt.Sprintf("Priority %s of the GPU pool %s, from its tenancy agreement", pr.Name, p.Name),
	}
}

func topology(p *plan.Agreement) *kueue.Topology {
	t := &kueue.Topology{TypeMeta: typeMeta("Topology"), ObjectMeta: meta(p, "", p.Topology.Name, "")}
	for _, l := range p.Topology.Levels {
		t.Spec.Levels = append(t.Spec.Levels, kueue.TopologyLevel{NodeLabel: l})
	}
	return t
}

func flavor(p *plan.Agreement, f plan.Flavor) *kueue.ResourceFlavor {
	rf := &kueue.ResourceFlavor{TypeMeta: typeMeta("ResourceFlavor"), ObjectMeta: meta(p, "", f.Name, "")}
	rf.Spec.NodeLabels = f.NodeLabels
	for _, t := range f.Tolerations {
		rf.Spec.Tolerations = append(rf.Spec.Tolerations, corev1.Toleration{
			Key: t.Key, Operator: corev1.TolerationOperator(t.Operator), Value: t.Value, Effect: corev1.TaintEffect(t.Effect),
		})
	}
	if p.Topology != nil {
		name := kueue.TopologyReference(p.Topology.Name)
		rf.Spec.TopologyName = &name
	}
	return rf
}

func cohort(p *plan.Agreement) *kueue.Cohort {
	return &kueue.Cohort{TypeMeta: typeMeta("Cohort"), ObjectMeta: meta(p, "", p.Name, "")}
}

// coveredResources lists each GPU resource once, in flavor order, then cpu
// and memory. Kueue needs every flavor of a resource group to list the same
// resources in the same order.
func coveredResources(p *plan.Agreement) []corev1.ResourceName {
	var out []corev1.ResourceName
	seen := map[string]bool{}
	for _, f := range p.Flavors {
		if !seen[f.Resource] {
			seen[f.Resource] = true
			out = append(out, corev1.ResourceName(f.Resource))
		}
	}
	return append(out, corev1.ResourceCPU, corev1.ResourceMemory)
}

func quantity(n int64) *resource.Quantity { return resource.NewQuantity(n, resource.DecimalSI) }

func clusterQueue(p *plan.Agreement, t plan.Team) *kueue.ClusterQueue {
	covered := coveredResources(p)
	group := kueue.ResourceGroup{CoveredResources: covered}
	for _, f := range p.Flavors {
		q := t.Quota(f.Name)
		fq := kueue.FlavorQuotas{Name: kueue.ResourceFlavorReference(f.Name)}
		for _, r := range covered {
			rq := kueue.ResourceQuota{Name: r}
			switch string(r) {
			case f.Resource:
				rq.NominalQuota = *quantity(q.Guaranteed)
				rq.BorrowingLimit = quantity(q.Borrow)
				rq.LendingLimit = quantity(q.Lendable)
			case string(corev1.ResourceCPU):
				rq.NominalQuota = unboundedCPU.DeepCopy()
				rq.BorrowingLimit, rq.LendingLimit = quantity(0), quantity(0)
			case string(corev1.ResourceMemory):
				rq.NominalQuota = unboundedMemory.DeepCopy()
				rq.BorrowingLimit, rq.LendingLimit = quantity(0), quantity(0)
			default:
				// Another flavor's GPU resource: none of it here.
				rq.NominalQuota = *quantity(0)
				rq.BorrowingLimit, rq.LendingLimit = quantity(0), quantity(0)
			}
			fq.Resources = append(fq.Resources, rq)
		}
		group.Flavors = append(group.Flavors, fq)
	}

	reclaim := kueue.PreemptionPolicyAny
	if t.Reclaim == plan.ReclaimWait {
		reclaim = kueue.PreemptionPolicyNever
	}
	queueing := kueue.BestEffortFIFO
	weight := quantity(t.Weight)
	cq := &kueue.ClusterQueue{
		TypeMeta:   typeMeta("ClusterQueue"),
		ObjectMeta: meta(p, t.Name, t.Name, ""),
		Spec: kueue.ClusterQueueSpec{
			CohortName:     cohortOf(p, t),
			ResourceGroups: []kueue.ResourceGroup{group},
			// Select by the name the API server sets itself: a team label
			// could be put on any namespace by whoever may label it.
			NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: render.NamespaceNameLabel, Operator: metav1.LabelSelectorOpIn, Values: t.Namespaces,
			}}},
			QueueingStrategy: queueing,
			// The API server's defaults, written out so the object read
			// back equals the object rendered.
			FlavorFungibility: &kueue.FlavorFungibility{WhenCanBorrow: kueue.MayStopSearch, WhenCanPreempt: kueue.TryNextFlavor},
			Preemption: &kueue.ClusterQueuePreemption{
				ReclaimWithinCohort: reclaim,
				BorrowWithinCohort:  &kueue.BorrowWithinCohort{Policy: kueue.BorrowWithinCohortPolicyNever},
				WithinClusterQueue:  kueue.PreemptionPolicyLowerPriority,
			},
			StopPolicy:  stopPolicy(t),
			FairSharing: &kueue.FairSharing{Weight: weight},
		},
	}
	// A fleet's manager: every admission waits for MultiKueue to dispatch
	// the job to a worker (plan.Agreement.Part).
	for _, ac := range p.AdmissionChecks {
		if cq.Spec.AdmissionChecksStrategy == nil {
			cq.Spec.AdmissionChecksStrategy = &kueue.AdmissionChecksStrategy{}
		}
		cq.Spec.AdmissionChecksStrategy.AdmissionChecks = append(cq.Spec.AdmissionChecksStrategy.AdmissionChecks, kueue.AdmissionCheckStrategyRule{Name: kueue.AdmissionCheckReference(ac)})
	}
	return cq
}

// stopPolicy is None, or HoldAndDrain for a retiring team: its queues admit
// nothing new and evict what runs, so that removing the team later deletes
// nothing in use (Kueue's resource-in-use finalizer would hold it anyway).
func stopPolicy(t plan.Team) *kueue.StopPolicy {
	stop := kueue.None
	if t.Retiring {
		stop = kueue.HoldAndDrain
	}
	return &stop
}

func localQueue(p *plan.Agreement, t plan.Team, name, ns string) *kueue.LocalQueue {
	lq := &kueue.LocalQueue{
		TypeMeta:   typeMeta("LocalQueue"),
		ObjectMeta: meta(p, t.Name, name, ns),
		Spec:       kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(t.Name), StopPolicy: stopPolicy(t)},
	}
	return lq
}

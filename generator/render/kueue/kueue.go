// Package kueue renders a plan into Kueue objects using Kueue's own API types
// (sigs.k8s.io/kueue v0.17.0), so field names cannot drift from what the
// Kueue webhooks and CRDs accept.
package kueue

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kueuev1beta1 "sigs.k8s.io/kueue/apis/kueue/v1beta1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

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

// QueueNameLabel is the label a Job carries to name its LocalQueue.
const QueueNameLabel = "kueue.x-k8s.io/queue-name"

// Render returns the Kueue objects of the agreement for the API version
// ("v1beta2" or "v1beta1").
func Render(p *plan.Agreement, apiVersion string) ([]render.Object, error) {
	// Sized up front: with thousands of teams, growing the slice copies it
	// a dozen times.
	n := len(p.Priorities) + len(p.Flavors) + 2
	for _, t := range p.Teams {
		n += 1 + 3*len(t.Namespaces)
	}
	objs := make([]render.Object, 0, n)
	for _, t := range p.Teams {
		for _, ns := range t.Namespaces {
			objs = append(objs, render.Namespace(p.Name, t.Name, ns, nil))
		}
	}
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
	for _, t := range p.Teams {
		objs = append(objs, clusterQueue(p, t))
		for _, ns := range t.Namespaces {
			objs = append(objs, localQueue(p, t, ns))
			if t.VMs != nil {
				objs = append(objs, render.VMQuota(p.Name, t.Name, ns, *t.VMs))
			}
		}
	}
	if apiVersion == "v1beta1" {
		return toV1beta1(objs)
	}
	return objs, nil
}

func meta(p *plan.Agreement, team, name, namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: render.Labels(p.Name, team)}
}

func object(o any, kind, namespace, name string) render.Object {
	return render.Object{APIVersion: kueue.GroupVersion.String(), Kind: kind, Namespace: namespace, Name: name, Body: o}
}

func typeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: kueue.GroupVersion.String(), Kind: kind}
}

func priorityClass(p *plan.Agreement, pr plan.Priority) render.Object {
	return object(&kueue.WorkloadPriorityClass{
		TypeMeta:    typeMeta("WorkloadPriorityClass"),
		ObjectMeta:  meta(p, "", pr.Name, ""),
		Value:       pr.Value,
		Description: fmt.Sprintf("Priority %s of the GPU pool %s, from its tenancy agreement", pr.Name, p.Name),
	}, "WorkloadPriorityClass", "", pr.Name)
}

func topology(p *plan.Agreement) render.Object {
	t := &kueue.Topology{TypeMeta: typeMeta("Topology"), ObjectMeta: meta(p, "", p.Topology.Name, "")}
	for _, l := range p.Topology.Levels {
		t.Spec.Levels = append(t.Spec.Levels, kueue.TopologyLevel{NodeLabel: l})
	}
	return object(t, "Topology", "", p.Topology.Name)
}

func flavor(p *plan.Agreement, f plan.Flavor) render.Object {
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
	o := object(rf, "ResourceFlavor", "", f.Name)
	if len(f.NodeLabels) == 0 {
		// An empty spec is refused by a server-side apply over a flavor
		// that had node labels (spec becomes null), which is what dropping
		// node_labels from an agreement does. An explicit empty map keeps
		// spec an object; the API server stores and returns it as it is.
		o.Adjust = func(fields map[string]any) {
			if spec, ok := fields["spec"].(map[string]any); ok {
				spec["nodeLabels"] = map[string]any{}
			}
		}
	}
	return o
}

func cohort(p *plan.Agreement) render.Object {
	return object(&kueue.Cohort{TypeMeta: typeMeta("Cohort"), ObjectMeta: meta(p, "", p.Name, "")}, "Cohort", "", p.Name)
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

func clusterQueue(p *plan.Agreement, t plan.Team) render.Object {
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
	stop := kueue.None
	weight := quantity(t.Weight)
	cq := &kueue.ClusterQueue{
		TypeMeta:   typeMeta("ClusterQueue"),
		ObjectMeta: meta(p, t.Name, t.Name, ""),
		Spec: kueue.ClusterQueueSpec{
			CohortName:     kueue.CohortReference(p.Name),
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
			StopPolicy:  &stop,
			FairSharing: &kueue.FairSharing{Weight: weight},
		},
	}
	return object(cq, "ClusterQueue", "", t.Name)
}

func localQueue(p *plan.Agreement, t plan.Team, ns string) render.Object {
	stop := kueue.None
	lq := &kueue.LocalQueue{
		TypeMeta:   typeMeta("LocalQueue"),
		ObjectMeta: meta(p, t.Name, t.Name, ns),
		Spec:       kueue.LocalQueueSpec{ClusterQueue: kueue.ClusterQueueReference(t.Name), StopPolicy: &stop},
	}
	return object(lq, "LocalQueue", ns, t.Name)
}

// toV1beta1 converts with Kueue's own conversion functions, the ones its
// conversion webhook runs, so the older API says the same thing.
func toV1beta1(objs []render.Object) ([]render.Object, error) {
	out := make([]render.Object, 0, len(objs))
	for _, o := range objs {
		var (
			body any
			err  error
		)
		switch in := o.Body.(type) {
		case *kueue.ClusterQueue:
			cq := &kueuev1beta1.ClusterQueue{}
			err = cq.ConvertFrom(in)
			body = cq
		case *kueue.LocalQueue:
			lq := &kueuev1beta1.LocalQueue{}
			err = lq.ConvertFrom(in)
			body = lq
		case *kueue.Cohort:
			c := &kueuev1beta1.Cohort{}
			err = c.ConvertFrom(in)
			body = c
		case *kueue.ResourceFlavor:
			rf := &kueuev1beta1.ResourceFlavor{}
			err = kueuev1beta1.Convert_v1beta2_ResourceFlavor_To_v1beta1_ResourceFlavor(in, rf, nil)
			body = rf
		case *kueue.Topology:
			t := &kueuev1beta1.Topology{}
			err = kueuev1beta1.Convert_v1beta2_Topology_To_v1beta1_Topology(in, t, nil)
			body = t
		case *kueue.WorkloadPriorityClass:
			w := &kueuev1beta1.WorkloadPriorityClass{}
			err = kueuev1beta1.Convert_v1beta2_WorkloadPriorityClass_To_v1beta1_WorkloadPriorityClass(in, w, nil)
			body = w
		default:
			out = append(out, o)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("convert %s %s to kueue.x-k8s.io/v1beta1: %w", o.Kind, o.Name, err)
		}
		o.APIVersion = kueuev1beta1.GroupVersion.String()
		// The conversion functions convert metadata and spec, not TypeMeta.
		body.(interface{ GetObjectKind() schema.ObjectKind }).GetObjectKind().
			SetGroupVersionKind(kueuev1beta1.GroupVersion.WithKind(o.Kind))
		o.Body = body
		out = append(out, o)
	}
	return out, nil
}

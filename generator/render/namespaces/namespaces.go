// Package namespaces renders the scheduler-independent part of an agreement:
// each team's Namespaces, with the guardrails' Pod Security Admission levels
// and Argo CD prune protection on them, and the ResourceQuota capping a
// team namespace's KubeVirt VirtualMachines. Every backend gets this family;
// a backend that records something on the Namespace (KAI's queue label) says
// so through Family.QueueLabel, so no backend renders Namespaces itself.
package namespaces

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render"
)

// Pod Security Admission's namespace labels.
const (
	PodSecurityEnforceLabel = "pod-security.kubernetes.io/enforce"
	PodSecurityWarnLabel    = "pod-security.kubernetes.io/warn"
	PodSecurityAuditLabel   = "pod-security.kubernetes.io/audit"
)

// ArgoSyncOptions is the annotation Argo CD reads per-resource sync options
// from.
const ArgoSyncOptions = "argocd.argoproj.io/sync-options"

// VMResource is the object count a ResourceQuota limits for KubeVirt.
const VMResource = "count/virtualmachines.kubevirt.io"

// VMQuotaName names the ResourceQuota that caps a namespace's VirtualMachines.
const VMQuotaName = "tenancy-virtualmachines"

// Family renders the team Namespaces and VirtualMachine quotas.
type Family struct {
	// QueueLabel, when not empty, is a label the backend reads the team's
	// queue from on its Namespaces (KAI's descriptor's, gpu.Describe); its value is
	// the team's name.
	QueueLabel string
}

// Check reports nothing: the rules about namespaces are the agreement's own
// (package validate), the same for every backend.
func (Family) Check(*plan.Agreement) diag.List { return nil }

// Render returns every team namespace, and its VirtualMachine quota when the
// team has one.
func (f Family) Render(p *plan.Agreement) ([]render.Object, diag.List) {
	var typed []any
	for _, t := range p.Teams {
		var extra map[string]string
		if f.QueueLabel != "" {
			extra = map[string]string{f.QueueLabel: t.Name}
		}
		for _, ns := range t.Namespaces {
			typed = append(typed, Namespace(p, t.Name, ns, extra))
			if t.VMs != nil {
				typed = append(typed, VMQuota(p.Name, t.Name, ns, *t.VMs))
			}
		}
	}
	objs, err := render.Objects(typed)
	if err != nil {
		return nil, diag.List{{Severity: diag.Error, Type: field.ErrorTypeInternal, File: p.File, Message: "namespaces: " + err.Error()}}
	}
	return objs, nil
}

// Namespace returns a team's Namespace, with extra labels (a backend's). The
// guardrails put their parts on it: Pod Security Admission levels, and the
// Argo CD sync options that keep a removed team's Namespace, and every PVC,
// Secret and Job in it, from being pruned by surprise.
func Namespace(p *plan.Agreement, team, name string, extra map[string]string) *corev1.Namespace {
	ns := &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: render.Meta(p.Name, team, name, ""),
	}
	ns.Labels[render.NamespaceNameLabel] = name
	for k, v := range extra {
		ns.Labels[k] = v
	}
	g := p.Guardrails
	if g.PodSecurity != "" {
		ns.Labels[PodSecurityEnforceLabel] = g.PodSecurity
	}
	if g.PodSecurityAudit != "" {
		ns.Labels[PodSecurityWarnLabel] = g.PodSecurityAudit
		ns.Labels[PodSecurityAuditLabel] = g.PodSecurityAudit
	}
	switch g.NamespacePrune {
	case plan.PruneNever:
		ns.Annotations = map[string]string{ArgoSyncOptions: "Prune=false,Delete=false"}
	case plan.PruneConfirm:
		ns.Annotations = map[string]string{ArgoSyncOptions: "Prune=confirm"}
	}
	return ns
}

// VMQuota returns the ResourceQuota limiting KubeVirt VirtualMachines in a
// team namespace.
func VMQuota(pool, team, namespace string, vms int64) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
		ObjectMeta: render.Meta(pool, team, VMQuotaName, namespace),
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
			VMResource: *resource.NewQuantity(vms, resource.DecimalSI),
		}},
	}
}

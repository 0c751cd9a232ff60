// Package render holds the contract every renderer keeps, the object type
// they all produce, and the objects several of them share (team Namespaces,
// the VirtualMachine quota).
//
// A renderer is a scheduler backend (render/kueue, render/kai) or a family
// of objects beside one; it reads a plan only, never TOML, and returns
// objects and located diagnostics. The rules it needs of an agreement are
// validation rules (validate.Rule), run with all the others, so their
// positions come from the decoded agreement like every other diagnostic.
package render

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// Backend names the scheduler the manifests are for. Families of objects
// beside a backend (the guardrails) render for one.
type Backend string

// The backends.
const (
	Kueue Backend = "kueue"
	KAI   Backend = "kai"
)

// Renderer turns a plan into objects. Diagnostics it returns are located
// through the plan's Origins; an error diagnostic stops the rendering.
type Renderer interface {
	Render(p *plan.Agreement) ([]Object, diag.List)
}

// Func adapts a function to Renderer.
type Func func(p *plan.Agreement) ([]Object, diag.List)

// Render calls f.
func (f Func) Render(p *plan.Agreement) ([]Object, diag.List) { return f(p) }

// Object is one rendered Kubernetes object: its fields as the API server's
// JSON gives them (unstructured content: maps, slices, strings, int64,
// float64, bool), and its canonical YAML once encoded. Kind, name and the
// rest are read from the fields, so they cannot disagree with them.
type Object struct {
	Fields map[string]any
	YAML   []byte // set by package encode; without a leading ---
}

func (o Object) u() *unstructured.Unstructured { return &unstructured.Unstructured{Object: o.Fields} }

// APIVersion returns the object's apiVersion.
func (o Object) APIVersion() string { return o.u().GetAPIVersion() }

// Kind returns the object's kind.
func (o Object) Kind() string { return o.u().GetKind() }

// Namespace returns the object's namespace; empty when cluster-scoped.
func (o Object) Namespace() string { return o.u().GetNamespace() }

// Name returns the object's name.
func (o Object) Name() string { return o.u().GetName() }

// FromTyped converts a typed API object (a pointer to a struct) to an Object with apimachinery's
// unstructured converter (encoding/json's field rules, without the JSON).
// Status and the null creationTimestamp every typed object carries are
// dropped: a client must not send them.
func FromTyped(obj any) (Object, error) {
	fields, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return Object{}, err
	}
	delete(fields, "status")
	if meta, ok := fields["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	return Object{Fields: fields}, nil
}

// Labels tenancy puts on every object, so operators can find and select
// what the agreement owns.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedBy      = "tenancy"
	// PoolLabel names the agreement's pool on every object.
	PoolLabel = "tenancy.dev/pool"
	// TeamLabel names the team on every object that belongs to one team.
	TeamLabel = "tenancy.dev/team"
)

// Labels returns the labels of an object of the pool, and of team when it
// is not empty.
func Labels(pool, team string) map[string]string {
	l := map[string]string{ManagedByLabel: ManagedBy, PoolLabel: pool}
	if team != "" {
		l[TeamLabel] = team
	}
	return l
}

// Meta returns the metadata of an object of the pool (and of team, when not
// empty).
func Meta(pool, team, name, namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: Labels(pool, team)}
}

// NamespaceNameLabel is set by the API server on every Namespace; rendering
// it keeps the object read back equal to the object rendered.
const NamespaceNameLabel = corev1.LabelMetadataName

// Pod Security Admission's namespace labels.
const (
	PodSecurityEnforceLabel = "pod-security.kubernetes.io/enforce"
	PodSecurityWarnLabel    = "pod-security.kubernetes.io/warn"
	PodSecurityAuditLabel   = "pod-security.kubernetes.io/audit"
)

// ArgoSyncOptions is the annotation Argo CD reads per-resource sync options
// from.
const ArgoSyncOptions = "argocd.argoproj.io/sync-options"

// Namespace returns a team's Namespace, with extra labels (a backend's). The
// guardrails put their parts on it: Pod Security Admission levels, and the
// Argo CD sync options that keep a removed team's Namespace, and every PVC,
// Secret and Job in it, from being pruned by surprise.
func Namespace(p *plan.Agreement, team, name string, extra map[string]string) *corev1.Namespace {
	ns := &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: Meta(p.Name, team, name, ""),
	}
	ns.Labels[NamespaceNameLabel] = name
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

// VMResource is the object count a ResourceQuota limits for KubeVirt.
const VMResource = "count/virtualmachines.kubevirt.io"

// VMQuotaName names the ResourceQuota that caps a namespace's VirtualMachines.
const VMQuotaName = "tenancy-virtualmachines"

// VMQuota returns the ResourceQuota limiting KubeVirt VirtualMachines in a
// team namespace. It is the scheduler-independent part of the agreement, so
// both backends render it.
func VMQuota(pool, team, namespace string, vms int64) *corev1.ResourceQuota {
	return &corev1.ResourceQuota{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
		ObjectMeta: Meta(pool, team, VMQuotaName, namespace),
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
			VMResource: *resource.NewQuantity(vms, resource.DecimalSI),
		}},
	}
}

// Objects converts typed objects in order. A Namespace's spec is dropped:
// the agreement sets nothing there (the API server adds its finalizer), and
// writing spec: {} would claim a field nobody renders.
func Objects[T any](typed []T) ([]Object, error) {
	out := make([]Object, 0, len(typed))
	for _, t := range typed {
		o, err := FromTyped(t)
		if err != nil {
			return nil, err
		}
		if _, ok := any(t).(*corev1.Namespace); ok {
			delete(o.Fields, "spec")
		}
		out = append(out, o)
	}
	return out, nil
}

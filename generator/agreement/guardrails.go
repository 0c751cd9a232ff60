package agreement

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/load"
)

// guardrailKeys are the keys of the [guardrails] table.
var guardrailKeys = []string{
	"queue_admission", "default_queue", "gpu_quota",
	"pod_security", "pod_security_audit",
	"network_isolation", "allow_ingress_from",
	"namespace_prune", "trusted_controllers",
}

// DefaultTrustedControllers are the requesters, besides kube-controller-manager's
// own controllers, whose objects the queue policies exempt from naming a queue:
// the operators of the workload kinds the guardrails cover and the schedulers'
// controllers, as their upstream manifests install them. Each creates objects
// from a parent the policies already checked.
var DefaultTrustedControllers = []string{
	"system:serviceaccount:appwrapper-system:appwrapper-controller-manager",
	"system:serviceaccount:jobset-system:jobset-controller-manager",
	"system:serviceaccount:kai-scheduler:binder",
	"system:serviceaccount:kai-scheduler:pod-grouper",
	"system:serviceaccount:kai-scheduler:podgroup-controller",
	"system:serviceaccount:kubeflow-system:kubeflow-trainer-controller-manager",
	"system:serviceaccount:kubeflow:training-operator",
	"system:serviceaccount:kueue-system:kueue-controller-manager",
	"system:serviceaccount:lws-system:lws-controller-manager",
	"system:serviceaccount:mpi-operator:mpi-operator",
	"system:serviceaccount:ray-system:kuberay-operator",
}

// Defaults of the [guardrails] table: every part is on unless the agreement
// turns it off, so a platform team gets enforcement without writing
// anything.
const (
	DefaultPodSecurity      = "baseline"
	DefaultPodSecurityAudit = "restricted"
	DefaultNamespacePrune   = "never"
)

// Guardrails is the [guardrails] table: what the API server itself enforces
// of the agreement. Absent keys hold their defaults (state Defaulted).
type Guardrails struct {
	Pos  Pos // the table's header; the file's start when absent
	Path *field.Path
	// QueueAdmission: ValidatingAdmissionPolicies refuse GPU workloads in
	// team namespaces that do not name their team's queue.
	QueueAdmission Bool
	// DefaultQueue (Kueue): a LocalQueue named "default" in each team
	// namespace, which Kueue gives to Jobs that name no queue.
	DefaultQueue Bool
	// GPUQuota: a ResourceQuota per team namespace, the backstop for GPU
	// use outside the agreement: 0 for what the team may never use (and,
	// without QueueAdmission, a cap at what it may ever use).
	GPUQuota Bool
	// PodSecurity is the Pod Security Admission level enforced in team
	// namespaces; PodSecurityAudit the level warned about and audited.
	// "privileged" turns the part off.
	PodSecurity      Str
	PodSecurityAudit Str
	// NetworkIsolation: NetworkPolicies refuse ingress from other teams'
	// namespaces; AllowIngressFrom names namespaces always allowed in.
	NetworkIsolation Bool
	AllowIngressFrom []Str
	// NamespacePrune says whether Argo CD may prune a team Namespace the
	// agreement no longer renders: "never", "confirm" or "allow".
	NamespacePrune Str
	// TrustedControllers are the user names (service accounts as
	// system:serviceaccount:<namespace>:<name>) whose requests are
	// exempt from naming a queue, besides kube-controller-manager's
	// controllers; nil when absent (the defaults apply).
	TrustedControllers []Str
}

// guardrails decodes the [guardrails] table; absent, it is all defaults.
func (d *decoder) guardrails(v *load.Value) *Guardrails {
	path := field.NewPath("guardrails")
	g := &Guardrails{Pos: Pos{Line: 1, Column: 1}, Path: path}
	t := &load.Fields{}
	if tv := d.table(v, path); tv != nil {
		g.Pos, t = tv.KeyPos, tv.Table
		d.unknown(t, path, guardrailKeys)
	}
	g.QueueAdmission = d.bool(t.Get("queue_admission"), path.Child("queue_admission"))
	g.DefaultQueue = d.bool(t.Get("default_queue"), path.Child("default_queue"))
	g.GPUQuota = d.bool(t.Get("gpu_quota"), path.Child("gpu_quota"))
	g.PodSecurity = d.str(t.Get("pod_security"), path.Child("pod_security"))
	g.PodSecurityAudit = d.str(t.Get("pod_security_audit"), path.Child("pod_security_audit"))
	g.NetworkIsolation = d.bool(t.Get("network_isolation"), path.Child("network_isolation"))
	g.AllowIngressFrom = d.strings(t.Get("allow_ingress_from"), path.Child("allow_ingress_from"))
	g.NamespacePrune = d.str(t.Get("namespace_prune"), path.Child("namespace_prune"))
	g.TrustedControllers = d.strings(t.Get("trusted_controllers"), path.Child("trusted_controllers"))
	return g
}

// defaultGuardrails fills the absent keys: everything on.
func defaultGuardrails(g *Guardrails) {
	on := func(b *Bool, value bool) {
		if b.State == Unset {
			*b = Bool{Value: value, State: Defaulted, Pos: g.Pos, Path: b.Path}
		}
	}
	on(&g.QueueAdmission, true)
	on(&g.DefaultQueue, false)
	on(&g.GPUQuota, true)
	on(&g.NetworkIsolation, true)
	str := func(s *Str, value string) {
		if s.State == Unset {
			*s = Str{Value: value, State: Defaulted, Pos: g.Pos, Path: s.Path}
		}
	}
	str(&g.PodSecurity, DefaultPodSecurity)
	str(&g.PodSecurityAudit, DefaultPodSecurityAudit)
	str(&g.NamespacePrune, DefaultNamespacePrune)
	if g.TrustedControllers == nil {
		for i, name := range DefaultTrustedControllers {
			g.TrustedControllers = append(g.TrustedControllers, Str{Value: name, State: Defaulted, Pos: g.Pos, Path: g.Path.Child("trusted_controllers").Index(i)})
		}
	}
}

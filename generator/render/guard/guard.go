// Package guard renders the guardrails of an agreement: what the API server
// itself enforces, whatever a workload opts into. One ValidatingAdmissionPolicy
// per pool, the same for every agreement of its backend but for the
// agreement's data in its first variables, refuses GPU workloads in team
// namespaces that skip or misuse their team's queue (Kueue's queue-name
// label, or KAI's schedulerName and queue label) or ask for GPUs the
// agreement does not share; its binding selects the pool's team Namespaces
// by label. Objects that a trusted controller creates from a checked parent
// are exempt from naming a queue, decided by who makes the request, not by
// what the object says. A ResourceQuota holds at 0 what a team may never
// use; a NetworkPolicy refuses ingress from other teams. Pod Security labels
// and Argo CD's prune protection go on the team Namespaces, which the
// namespaces family renders (render/namespaces).
package guard

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kueue/pkg/controller/constants"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render"
)

// The queue labels the policies read are the backends' descriptors'
// (gpu.Describe), the one place they are written.
var (
	KueueQueueLabel = gpu.Describe(gpu.Kueue).QueueLabel
	KAIQueueLabel   = gpu.Describe(gpu.KAI).QueueLabel
)

// Names and labels the policies read; Kueue's are Kueue's own constants.
const (
	KueuePriorityLabel = constants.WorkloadPriorityClassLabel
	KAIScheduler       = "kai-scheduler"
	// DefaultQueueName is the LocalQueue Kueue gives to Jobs that name
	// none, when guardrails.default_queue renders it.
	DefaultQueueName = plan.DefaultQueueName

	GPUQuotaName      = "tenancy-gpus"
	NetworkPolicyName = "tenancy-isolation"
)

// Renderer renders the guardrails for one backend, whose conventions the
// queue policy enforces.
type Renderer struct {
	Backend render.Backend
}

// Render returns the guardrail objects the agreement's [guardrails] asks for.
func (r Renderer) Render(p *plan.Agreement) ([]render.Object, diag.List) {
	g := p.Guardrails
	var typed []any
	if g.QueueAdmission {
		typed = append(typed, policy(data(p, r.Backend), r.Backend), binding(p.Name))
	}
	for _, t := range p.Teams {
		for _, ns := range t.Namespaces {
			if g.GPUQuota {
				typed = append(typed, gpuQuota(p, t, ns))
			}
			if g.NetworkIsolation {
				typed = append(typed, networkPolicy(p, t, ns))
			}
		}
	}
	objs, err := render.Objects(typed)
	if err != nil {
		return nil, diag.List{{Severity: diag.Error, Type: field.ErrorTypeInternal, File: p.File, Message: "guardrails: " + err.Error()}}
	}
	return objs, nil
}

// data is the agreement's data the queue policy checks against.
func data(p *plan.Agreement, b render.Backend) agreementData {
	prios := make([]string, len(p.Priorities))
	for i, pr := range p.Priorities {
		prios[i] = pr.Name
	}
	slices.Sort(prios)
	var queues []string
	if b == render.Kueue && p.Guardrails.DefaultQueue {
		queues = append(queues, DefaultQueueName)
	}
	// On KAI's node pools a workload runs in one pool, whose queue holds
	// that flavor alone: what it may use of a resource is the most of any
	// one pool of it, not the sum over the flavors that count it.
	var nodePools []gpu.Pool
	if b == render.KAI {
		nodePools = gpu.Pools(p)
	}
	most := map[string]map[string]int64{}
	for _, t := range p.Teams {
		most[t.Name] = map[string]int64{}
		for _, res := range gpuResources(p) {
			if nodePools == nil {
				most[t.Name][res] = mostUsable(p, t, gpu.Resource(res))
				continue
			}
			for _, pool := range nodePools {
				if pool.Flavor.Resource == res {
					most[t.Name][res] = max(most[t.Name][res], mostUsable(p, t, gpu.Flavor(pool.Flavor.Name)))
				}
			}
		}
	}
	d := agreementData{pool: p.Name, gpus: gpuResources(p), priorities: prios, queues: queues, trusted: p.Guardrails.TrustedControllers, most: most}
	// A Kueue worker of a fleet takes GPU work only from the manager's
	// MultiKueue; a KAI worker is a standalone cluster (no dispatch).
	if w := p.Worker(); w != nil && b == render.Kueue {
		d.worker = &workerData{cluster: w.Name, manager: p.Fleet.Manager, dispatcher: w.Dispatcher}
	}
	if b == render.KAI {
		d.pools = pools(p)
	}
	return d
}

// gpuResources lists the agreement's GPU resources once each, sorted.
func gpuResources(p *plan.Agreement) []string {
	var out []string
	for _, f := range p.Flavors {
		if !slices.Contains(out, f.Resource) {
			out = append(out, f.Resource)
		}
	}
	slices.Sort(out)
	return out
}

// mostUsable returns what a team may ever use of the flavors of: guaranteed
// plus borrow, summed over them; inside a lending window with a larger
// borrow, the window's (the quota cannot change by the hour).
func mostUsable(p *plan.Agreement, t plan.Team, of gpu.Of) int64 {
	most := gpu.TeamSum(p, &t, gpu.Raw, of).MostUsable()
	for _, w := range t.Windows {
		in := t
		in.Quotas = w.Quotas
		most = max(most, gpu.TeamSum(p, &in, gpu.Raw, of).MostUsable())
	}
	return most
}

// DRADeviceClasses are the device classes of NVIDIA's DRA driver. The
// agreement shares GPUs as device-plugin resources, so a team namespace's
// GPU quota holds claims of these classes at 0.
var DRADeviceClasses = []string{"gpu.nvidia.com", "mig.nvidia.com"}

// gpuQuota is the backstop for GPU use outside the agreement, per team
// namespace. Where the queue policy pins every GPU workload to the team's
// queue, the scheduler's quota is the cap (it spans all of a team's
// namespaces, which a ResourceQuota cannot), and a cap here would refuse
// pods that should wait in the queue (KAI's, and Kueue's pod
// integrations): the quota holds at 0 only what the team may never use,
// the agreement's GPU resources it has no quota of and DRA GPU claims.
// Without the queue policy, it caps each GPU resource at the team's most
// usable (guaranteed + borrow), in each of its namespaces.
func gpuQuota(p *plan.Agreement, t plan.Team, ns string) *corev1.ResourceQuota {
	hard := corev1.ResourceList{}
	for _, res := range gpuResources(p) {
		n := mostUsable(p, t, gpu.Resource(res))
		if n == 0 || !p.Guardrails.QueueAdmission {
			hard[corev1.ResourceName("requests."+res)] = *resource.NewQuantity(n, resource.DecimalSI)
		}
	}
	for _, class := range DRADeviceClasses {
		hard[corev1.ResourceName(class+".deviceclass.resource.k8s.io/devices")] = *resource.NewQuantity(0, resource.DecimalSI)
	}
	return &corev1.ResourceQuota{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
		ObjectMeta: render.Meta(p.Name, t.Name, GPUQuotaName, ns),
		Spec:       corev1.ResourceQuotaSpec{Hard: hard},
	}
}

// networkPolicy admits ingress to a team namespace only from the team's own
// namespaces (by the pool and team labels tenancy renders on them) and the
// allow-list. It needs a CNI that enforces it.
func networkPolicy(p *plan.Agreement, t plan.Team, ns string) *networkingv1.NetworkPolicy {
	from := []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{
		MatchLabels: map[string]string{render.PoolLabel: p.Name, render.TeamLabel: t.Name},
	}}}
	if allow := p.Guardrails.AllowIngressFrom; len(allow) > 0 {
		from = append(from, networkingv1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: render.NamespaceNameLabel, Operator: metav1.LabelSelectorOpIn, Values: allow}},
		}})
	}
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: render.Meta(p.Name, t.Name, NetworkPolicyName, ns),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress:     []networkingv1.NetworkPolicyIngressRule{{From: from}},
		},
	}
}

// celString quotes s as a CEL string literal: strconv.Quote's escapes are
// CEL's, so a name from the agreement (a trusted controller) cannot end
// the literal.
func celString(s string) string { return strconv.Quote(s) }

// celMost writes the teams' most usable GPUs as a CEL map literal, team →
// resource → count, in sorted order so the render is stable.
func celMost(most map[string]map[string]int64) string {
	var teams []string
	for _, t := range slices.Sorted(maps.Keys(most)) {
		var res []string
		for _, r := range slices.Sorted(maps.Keys(most[t])) {
			res = append(res, celString(r)+": "+strconv.FormatInt(most[t][r], 10))
		}
		teams = append(teams, celString(t)+": {"+strings.Join(res, ", ")+"}")
	}
	return "{" + strings.Join(teams, ", ") + "}"
}

func celList(ss []string) string {
	quoted := make([]string, len(ss))
	for i, s := range ss {
		quoted[i] = celString(s)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

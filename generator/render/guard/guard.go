// Package guard renders the guardrails of an agreement: what the API server
// itself enforces, whatever a workload opts into. ValidatingAdmissionPolicies
// refuse GPU workloads in team namespaces that skip or misuse their team's
// queue (backend-aware: Kueue's queue-name label, or KAI's schedulerName and
// queue label); a ResourceQuota caps each team namespace's GPU requests at
// what the team may ever use; a NetworkPolicy refuses ingress from other
// teams. Pod Security labels and Argo CD's prune protection go on the team
// Namespaces, which the namespaces family renders (render/namespaces).
package guard

import (
	"fmt"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
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

// Names and labels the policies read; Kueue's are Kueue's own constants.
const (
	KueueQueueLabel    = constants.QueueLabel
	KueuePriorityLabel = constants.WorkloadPriorityClassLabel
	KAIQueueLabel      = "kai.scheduler/queue"
	KAIScheduler       = "kai-scheduler"
	// DefaultQueueName is the LocalQueue Kueue gives to Jobs that name
	// none, when guardrails.default_queue renders it.
	DefaultQueueName = plan.DefaultQueueName

	GPUQuotaName      = "tenancy-gpus"
	NetworkPolicyName = "tenancy-isolation"
)

// Renderer renders the guardrails for one backend, whose conventions the
// queue policies enforce.
type Renderer struct {
	Backend render.Backend
}

// Render returns the guardrail objects the agreement's [guardrails] asks for.
func (r Renderer) Render(p *plan.Agreement) ([]render.Object, diag.List) {
	g := p.Guardrails
	var typed []any
	if g.QueueAdmission {
		for _, f := range families {
			typed = append(typed, policy(p, r.Backend, f), binding(p, f))
		}
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

// mostUsable returns what a team may ever use of a resource: guaranteed plus
// borrow, summed over the flavors that count it; inside a lending window
// with a larger borrow, the window's (the quota cannot change by the hour).
func mostUsable(p *plan.Agreement, t plan.Team, res string) int64 {
	most := gpu.TeamSum(p, &t, gpu.Raw, gpu.Resource(res)).MostUsable()
	for _, w := range t.Windows {
		in := t
		in.Quotas = w.Quotas
		most = max(most, gpu.TeamSum(p, &in, gpu.Raw, gpu.Resource(res)).MostUsable())
	}
	return most
}

// gpuQuota caps GPU requests in a team namespace at the team's most usable:
// a workload that escapes the scheduler still cannot exceed the agreement.
// Resources the team has no quota of get 0. ResourceQuota is per
// namespace, so a team with several namespaces gets the cap in each.
func gpuQuota(p *plan.Agreement, t plan.Team, ns string) *corev1.ResourceQuota {
	hard := corev1.ResourceList{}
	for _, res := range gpuResources(p) {
		hard[corev1.ResourceName("requests."+res)] = *resource.NewQuantity(mostUsable(p, t, res), resource.DecimalSI)
	}
	return &corev1.ResourceQuota{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
		ObjectMeta: render.Meta(p.Name, t.Name, GPUQuotaName, ns),
		Spec:       corev1.ResourceQuotaSpec{Hard: hard},
	}
}

// networkPolicy admits ingress to a team namespace only from the team's own
// namespaces and the allow-list. It needs a CNI that enforces it.
func networkPolicy(p *plan.Agreement, t plan.Team, ns string) *networkingv1.NetworkPolicy {
	from := append(slices.Clone(t.Namespaces), p.Guardrails.AllowIngressFrom...)
	slices.Sort(from)
	from = slices.Compact(from)
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: render.Meta(p.Name, t.Name, NetworkPolicyName, ns),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: namespaces(from)}},
			}},
		},
	}
}

// namespaces selects namespaces by the name the API server sets itself.
func namespaces(names []string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: render.NamespaceNameLabel, Operator: metav1.LabelSelectorOpIn, Values: names,
	}}}
}

// teamNamespaces lists every team namespace of the agreement, sorted.
func teamNamespaces(p *plan.Agreement) []string {
	var out []string
	for _, t := range p.Teams {
		out = append(out, t.Namespaces...)
	}
	slices.Sort(out)
	return out
}

// PolicyName names a queue policy (and its binding) of the pool.
func PolicyName(pool, family string) string { return pool + "-queue-" + family }

func binding(p *plan.Agreement, f family) *admissionv1.ValidatingAdmissionPolicyBinding {
	name := PolicyName(p.Name, f.name)
	equivalent := admissionv1.Equivalent
	return &admissionv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: render.Meta(p.Name, "", name, ""),
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
			// The API server's defaults, written out.
			MatchResources: &admissionv1.MatchResources{
				NamespaceSelector: namespaces(teamNamespaces(p)),
				ObjectSelector:    &metav1.LabelSelector{},
				MatchPolicy:       &equivalent,
			},
		},
	}
}

func policy(p *plan.Agreement, b render.Backend, f family) *admissionv1.ValidatingAdmissionPolicy {
	fail := admissionv1.Fail
	equivalent := admissionv1.Equivalent
	all := admissionv1.AllScopes
	// One rule per API group and version, listing its resources.
	var rules []admissionv1.NamedRuleWithOperations
	for _, r := range f.resources {
		if n := len(rules); n > 0 && rules[n-1].APIGroups[0] == r.group && rules[n-1].APIVersions[0] == r.version {
			rules[n-1].Resources = append(rules[n-1].Resources, r.resource)
			continue
		}
		rules = append(rules, admissionv1.NamedRuleWithOperations{RuleWithOperations: admissionv1.RuleWithOperations{
			Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
			Rule: admissionv1.Rule{
				APIGroups: []string{r.group}, APIVersions: []string{r.version}, Resources: []string{r.resource}, Scope: &all,
			},
		}})
	}
	return &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: render.Meta(p.Name, "", PolicyName(p.Name, f.name), ""),
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{
				ResourceRules:     rules,
				NamespaceSelector: &metav1.LabelSelector{},
				ObjectSelector:    &metav1.LabelSelector{},
				MatchPolicy:       &equivalent,
			},
			Variables:   variables(p, b, f),
			Validations: validations(p, b, f),
		},
	}
}

// celString quotes s as a CEL string literal. The names it is given are
// DNS labels, resource names and label keys, which validation keeps free of
// quotes and backslashes.
func celString(s string) string { return "'" + s + "'" }

func celList(ss []string) string {
	quoted := make([]string, len(ss))
	for i, s := range ss {
		quoted[i] = celString(s)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// Variables shared by every policy: the pod specs of the object (the
// family's own expression), whether any container asks for a GPU resource
// of the agreement, the object's team (from its Namespace's tenancy.dev/team
// label, which tenancy renders), its queue label, and whether a controller
// owns it (its owner was checked when it was admitted).
func variables(p *plan.Agreement, b render.Backend, f family) []admissionv1.Variable {
	gpus := celList(gpuResources(p))
	asks := fmt.Sprintf("has(c.resources) && (has(c.resources.requests) && c.resources.requests.exists(r, r in %[1]s) || has(c.resources.limits) && c.resources.limits.exists(r, r in %[1]s))", gpus)
	labels := f.kueueLabels
	queueLabel := KueueQueueLabel
	if b == render.KAI {
		// KAI reads the queue from the top owner's own labels.
		labels, queueLabel = "object.metadata", KAIQueueLabel
	}
	return []admissionv1.Variable{
		{Name: "podSpecs", Expression: f.podSpecs},
		{Name: "requestsGPU", Expression: fmt.Sprintf("variables.podSpecs.exists(s, (has(s.containers) ? s.containers : []).exists(c, %[1]s) || (has(s.initContainers) ? s.initContainers : []).exists(c, %[1]s))", asks)},
		{Name: "team", Expression: fmt.Sprintf("has(namespaceObject.metadata.labels) && %[1]s in namespaceObject.metadata.labels ? namespaceObject.metadata.labels[%[1]s] : ''", celString(render.TeamLabel))},
		{Name: "queue", Expression: fmt.Sprintf("has(%[1]s.labels) && %[2]s in %[1]s.labels ? %[1]s.labels[%[2]s] : ''", labels, celString(queueLabel))},
		{Name: "owned", Expression: "has(object.metadata.ownerReferences) && object.metadata.ownerReferences.exists(o, has(o.controller) && o.controller)"},
	}
}

func validations(p *plan.Agreement, b render.Backend, f family) []admissionv1.Validation {
	forbidden := metav1.StatusReasonForbidden
	queueLabel := KueueQueueLabel
	if b == render.KAI {
		queueLabel = KAIQueueLabel
	}
	inNamespace := "' in namespace ' + namespaceObject.metadata.name + ' of team ' + variables.team + ' (tenancy agreement " + p.Name + ")'"
	accepted := "variables.queue == variables.team"
	if b == render.Kueue && p.Guardrails.DefaultQueue {
		accepted += " || variables.queue == " + celString(DefaultQueueName)
	}
	out := []admissionv1.Validation{
		{
			Expression:        "variables.owned || !variables.requestsGPU || variables.queue != ''",
			MessageExpression: "'this ' + object.kind + ' requests GPUs' + " + inNamespace + " + ': add the label " + queueLabel + ": ' + variables.team",
			Reason:            &forbidden,
		},
		{
			// Owned objects too: a label, where present, routes quota.
			Expression:        "variables.queue == '' || " + accepted,
			MessageExpression: "'queue ' + variables.queue + ' is not this team\\'s' + " + inNamespace + " + ': set the label " + queueLabel + ": ' + variables.team",
			Reason:            &forbidden,
		},
	}
	switch b {
	case render.Kueue:
		prios := make([]string, len(p.Priorities))
		for i, pr := range p.Priorities {
			prios[i] = pr.Name
		}
		slices.Sort(prios)
		known := "none"
		if len(prios) > 0 {
			known = strings.Join(prios, ", ")
		}
		priority := "object.metadata.labels[" + celString(KueuePriorityLabel) + "]"
		out = append(out, admissionv1.Validation{
			Expression:        fmt.Sprintf("variables.owned || !has(object.metadata.labels) || !(%s in object.metadata.labels) || %s in %s", celString(KueuePriorityLabel), priority, celList(prios)),
			MessageExpression: fmt.Sprintf("'priority ' + %s + ' is not a priority of the agreement %s (%s): set the label %s to one of them'", priority, p.Name, known, KueuePriorityLabel),
			Reason:            &forbidden,
		})
	case render.KAI:
		if f.pods {
			out = append(out, admissionv1.Validation{
				Expression:        "!variables.requestsGPU || has(object.spec.schedulerName) && object.spec.schedulerName == " + celString(KAIScheduler),
				MessageExpression: "'this Pod requests GPUs' + " + inNamespace + " + ': set spec.schedulerName: " + KAIScheduler + "; on the default scheduler it would bypass the team\\'s queue'",
				Reason:            &forbidden,
			})
		}
	}
	return out
}

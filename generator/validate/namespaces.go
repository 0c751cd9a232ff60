package validate

import (
	"fmt"

	"github.com/tenancy-dev/tenancy/generator/agreement"
	"github.com/tenancy-dev/tenancy/generator/windows"
)

// kubernetesNamespaces are managed by Kubernetes itself; rendering a
// Namespace or a LocalQueue there would fight the control plane.
var kubernetesNamespaces = []string{"kube-system", "kube-public", "kube-node-lease"}

// defaultNamespace is the cluster's own default namespace.
const defaultNamespace = "default"

// reservedNamespaces returns the namespaces no team may have, each with the
// reason a refusal gives: Kubernetes' own, the cluster's default namespace,
// the windows controller's, and the namespaces of the components the
// agreement relies on ([components], whose keys a cluster that installed
// them elsewhere overrides, and the [monitoring] namespace). A team given
// one of them would have its admin hold that namespace, and the team's
// Pod Security labels, quotas and network policy would land on whatever
// runs there; for the controller's, the team's Namespace and the
// controller's would be one object.
func (v *validator) reservedNamespaces() map[string]string {
	out := map[string]string{}
	for _, ns := range kubernetesNamespaces {
		out[ns] = "belongs to Kubernetes itself and cannot be given to a team"
	}
	out[defaultNamespace] = "is the cluster's default namespace and cannot be given to a team: tenancy would label it with the guardrails' Pod Security levels and Argo CD prune options, and put the team's quotas and network policy on everything that runs there without a namespace of its own; give the team a namespace of its own"
	out[windows.ControllerNamespace] = "is where tenancy runs the lending windows' controller (rendered as soon as a team has a window) and cannot be given to a team: the team's Namespace and the controller's would be one object"
	component := func(ns agreement.Str, what, key string) {
		if !ns.IsSet() && ns.State != agreement.Defaulted {
			return
		}
		if _, ok := out[ns.Value]; ok {
			return // the first reason stands: it names what the cluster owns
		}
		why := fmt.Sprintf("is %s (%s) and cannot be given to a team: the team's admin would hold that namespace, and the team's quotas and network policy would apply to its pods", what, key)
		if ns.State == agreement.Defaulted && key != "monitoring.namespace" {
			why += "; if this cluster runs it in another namespace, name that one in [components]"
		}
		out[ns.Value] = why
	}
	if c := v.a.Components; c != nil {
		component(c.KueueNamespace, "Kueue's namespace", "components.kueue_namespace")
		component(c.KAINamespace, "KAI Scheduler's namespace", "components.kai_namespace")
		component(c.KAIReservationNamespace, "the namespace of KAI Scheduler's GPU reservation pods", "components.kai_reservation_namespace")
		component(c.ArgoCDNamespace, "Argo CD's namespace", "components.argocd_namespace")
	}
	if m := v.a.Monitoring; m != nil {
		component(m.Namespace, "the monitoring namespace, where the PrometheusRule and the dashboard go", "monitoring.namespace")
	}
	return out
}

// components checks the [components] namespaces are names Kubernetes accepts.
func (v *validator) components() {
	c := v.a.Components
	if c == nil {
		return
	}
	for _, ns := range c.Namespaces() {
		if ns.IsSet() {
			v.dnsLabel(ns.Pos, ns.Path, ns.Value)
		}
	}
}

package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/tenancy-dev/tenancy/generator/plan"
)

// explainGuardrails says what the API server enforces in the team
// namespaces, every default filled in.
func explainGuardrails(w io.Writer, p *plan.Agreement) {
	g := p.Guardrails
	onOff := map[bool]string{true: "on", false: "off"}
	fmt.Fprintln(w, "\nGuardrails (enforced by the API server in the team namespaces)")
	tw := tableWriter(w)
	tableRow(tw, "PART", "SETTING", "WHAT IT DOES")
	tableRow(tw, "queue admission", onOff[g.QueueAdmission], "refuses GPU workloads that name no queue or another team's, GPUs and priorities outside the agreement, workloads larger than their team's guaranteed + borrow, NVIDIA device variables without a GPU request")
	if g.DefaultQueue {
		tableRow(tw, "default queue", "on", "Kueue: a LocalQueue default per team namespace for Jobs that name none")
	}
	quota := "holds at 0 the GPUs a team may never use and DRA GPU claims; the queue caps the rest"
	if !g.QueueAdmission {
		quota = "caps each team namespace's GPU requests at guaranteed + borrow"
	}
	tableRow(tw, "GPU quota", onOff[g.GPUQuota], quota)
	tableRow(tw, "pod security", "enforce "+g.PodSecurity+", warn/audit "+g.PodSecurityAudit, "Pod Security Admission levels")
	allow := "the team's own namespaces"
	if len(g.AllowIngressFrom) > 0 {
		allow += " and " + strings.Join(g.AllowIngressFrom, ", ")
	}
	network := "off"
	if g.NetworkIsolation {
		network = "ingress from " + allow
	}
	tableRow(tw, "network isolation", network, "NetworkPolicies; needs a CNI that enforces them")
	prune := map[plan.NamespacePrune]string{
		plan.PruneNever:   "Argo CD never prunes a removed team's Namespace",
		plan.PruneConfirm: "Argo CD prunes a removed team's Namespace once someone confirms",
		plan.PruneAllow:   "Argo CD may prune a removed team's Namespace and all in it",
	}
	tableRow(tw, "namespace prune", string(g.NamespacePrune), prune[g.NamespacePrune])
	tw.Flush()
	var retiring []string
	for _, t := range p.Teams {
		if t.Retiring {
			retiring = append(retiring, t.Name)
		}
	}
	if len(retiring) > 0 {
		fmt.Fprintf(w, "  Retiring (queues hold and drain; remove the team once they are empty): %s\n", strings.Join(retiring, ", "))
	}
}

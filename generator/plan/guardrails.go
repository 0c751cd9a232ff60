package plan

import (
	"slices"

	"github.com/tenancy-dev/tenancy/generator/agreement"
	"github.com/tenancy-dev/tenancy/generator/diag"
)

// NamespacePrune says whether Argo CD may prune a team Namespace that the
// agreement no longer renders.
type NamespacePrune string

// The values of guardrails.namespace_prune.
const (
	PruneNever   NamespacePrune = "never"
	PruneConfirm NamespacePrune = "confirm"
	PruneAllow   NamespacePrune = "allow"
)

// DefaultQueueName is the LocalQueue Kueue gives to Jobs that name none,
// when guardrails.default_queue renders it: the Kueue backend renders it and
// the guardrails' queue policies accept it, so both read it here.
const DefaultQueueName = "default"

// Guardrails is what the API server enforces of the agreement, defaults
// applied.
type Guardrails struct {
	QueueAdmission bool
	DefaultQueue   bool // Kueue: a LocalQueue "default" per team namespace
	// DefaultQueueOrigin is guardrails.default_queue's value (the table's
	// when left to its default).
	DefaultQueueOrigin diag.Origin
	GPUQuota           bool
	PodSecurity        string // enforced level; "privileged" enforces nothing
	PodSecurityAudit   string // warned and audited level
	NetworkIsolation   bool
	AllowIngressFrom   []string // sorted
	NamespacePrune     NamespacePrune
	// TrustedControllers are the requesters exempt from naming a queue
	// (besides kube-controller-manager's controllers), sorted.
	TrustedControllers []string
}

func buildGuardrails(g *agreement.Guardrails) Guardrails {
	out := Guardrails{
		QueueAdmission:   g.QueueAdmission.Value,
		DefaultQueue:     g.DefaultQueue.Value,
		GPUQuota:         g.GPUQuota.Value,
		PodSecurity:      g.PodSecurity.Value,
		PodSecurityAudit: g.PodSecurityAudit.Value,
		NetworkIsolation: g.NetworkIsolation.Value,
		NamespacePrune:   NamespacePrune(g.NamespacePrune.Value),
	}
	out.DefaultQueueOrigin = origin(g.DefaultQueue.Pos, g.DefaultQueue.Path)
	for _, ns := range g.AllowIngressFrom {
		out.AllowIngressFrom = append(out.AllowIngressFrom, ns.Value)
	}
	slices.Sort(out.AllowIngressFrom)
	for _, name := range g.TrustedControllers {
		out.TrustedControllers = append(out.TrustedControllers, name.Value)
	}
	slices.Sort(out.TrustedControllers)
	out.TrustedControllers = slices.Compact(out.TrustedControllers)
	return out
}

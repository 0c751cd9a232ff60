package guard

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render"
)

// Check reports, under KAI, the parts of the guardrails that only Kueue can
// express, as warnings naming their key; under Kueue it reports nothing.
func (r Renderer) Check(p *plan.Agreement) diag.List {
	if r.Backend != render.KAI {
		return nil
	}
	rep := &diag.Reporter{File: p.File}
	if g := p.Guardrails; g.DefaultQueue {
		rep.Warnf(field.ErrorTypeNotSupported, g.DefaultQueueOrigin.Pos, g.DefaultQueueOrigin.Path,
			"kai: a default queue is Kueue's (LocalQueue defaulting); under KAI a pod without the %s label is refused by the queue policies instead", KAIQueueLabel)
	}
	for _, t := range p.Teams {
		if t.Retiring {
			rep.Warnf(field.ErrorTypeNotSupported, t.RetiringOrigin.Pos, t.RetiringOrigin.Path,
				"kai: KAI queues have no stop policy: retiring does not stop team %s's queue; stop its workloads before removing the team", t.Name)
		}
	}
	return rep.List
}

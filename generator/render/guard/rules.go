package guard

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/agreement"
	"github.com/tenancy-dev/tenancy/generator/diag"
)

// KAIRules is the guardrails' validation rule under KAI (a validate.Rule):
// the parts that only Kueue can express are warnings naming their key.
func KAIRules(a *agreement.Agreement, r *diag.Reporter) {
	if g := a.Guardrails; g != nil && g.DefaultQueue.IsSet() && g.DefaultQueue.Value {
		r.Warnf(field.ErrorTypeNotSupported, g.DefaultQueue.Pos, g.DefaultQueue.Path,
			"kai: a default queue is Kueue's (LocalQueue defaulting); under KAI a pod without the %s label is refused by the queue policies instead", KAIQueueLabel)
	}
	for _, t := range a.Teams {
		if t.Retiring.IsSet() && t.Retiring.Value {
			r.Warnf(field.ErrorTypeNotSupported, t.Retiring.Pos, t.Retiring.Path,
				"kai: KAI queues have no stop policy: retiring does not stop team %s's queue; stop its workloads before removing the team", t.Name)
		}
	}
}

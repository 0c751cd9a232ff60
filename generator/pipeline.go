package generator

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/agreement"
	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/encode"
	"github.com/tenancy-dev/tenancy/generator/load"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render"
	"github.com/tenancy-dev/tenancy/generator/render/guard"
	"github.com/tenancy-dev/tenancy/generator/render/kai"
	"github.com/tenancy-dev/tenancy/generator/render/kueue"
	"github.com/tenancy-dev/tenancy/generator/render/monitor"
	"github.com/tenancy-dev/tenancy/generator/statement"
	"github.com/tenancy-dev/tenancy/generator/validate"
)

// defaultName names an agreement that came without a path (the KRM
// function's inline spec.agreement) in every diagnostic.
const defaultName = "tenancy.toml"

// backend is what one backend renders: the validation rules its renderers
// need, run with the agreement's own, and the renderers themselves, each
// with the same contract: the scheduler's objects, the guardrails for that
// scheduler, and the monitoring rules and dashboard (which render nothing
// unless [monitoring] enables them). A later family (departments) is one
// more entry.
type backend struct {
	rules     []validate.Rule
	renderers []render.Renderer
}

// backendFor picks the rules and renderers of normalized options.
func backendFor(opts Options) backend {
	switch opts.Backend {
	case KAI:
		return backend{
			rules:     []validate.Rule{kai.Rules, guard.KAIRules},
			renderers: []render.Renderer{kai.Renderer{}, guard.Renderer{Backend: render.KAI}, monitor.Renderer{Backend: statement.KAI}},
		}
	default:
		return backend{renderers: []render.Renderer{kueue.Renderer{APIVersion: opts.KueueAPI}, guard.Renderer{Backend: render.Kueue}, monitor.Renderer{Backend: statement.Kueue}}}
	}
}

func check(src Source) (*plan.Agreement, []Diagnostic, error) {
	p, warnings, err := checkSource(src, nil)
	if err != nil {
		return nil, nil, err
	}
	return p, warnings, nil
}

// checkSource loads, decodes and validates an agreement with the extra
// rules, and plans it. The warnings are returned with the plan; errors, with
// every warning, as an *AgreementError.
func checkSource(src Source, rules []validate.Rule) (*plan.Agreement, diag.List, error) {
	name := src.Path
	if name == "" {
		name = defaultName
	}
	if len(src.Data) > MaxAgreementSize {
		return nil, nil, &AgreementError{Diagnostics: diag.List{{Severity: diag.Error, Type: field.ErrorTypeTooLong, File: name,
			Message: fmt.Sprintf("file is %d bytes; agreements are limited to %d bytes (1 MiB)", len(src.Data), MaxAgreementSize)}}}
	}
	root, diags := load.Parse(name, src.Data)
	if len(diags.Errors()) > 0 {
		return nil, nil, &AgreementError{Diagnostics: diags}
	}
	a, diags := agreement.Decode(name, root)
	// Semantic checks run even after type errors, so one run reports
	// everything; a field that failed to decode is simply Invalid.
	diags = append(diags, validate.Validate(a, rules...)...)
	diags.Sort()
	if len(diags.Errors()) > 0 {
		return nil, nil, &AgreementError{Diagnostics: diags}
	}
	return plan.Build(a), diags.Warnings(), nil
}

func renderSource(src Source, opts Options) (*Result, error) {
	opts, err := opts.Normalize()
	if err != nil {
		return nil, err
	}
	b := backendFor(opts)
	p, warnings, err := checkSource(src, b.rules)
	if err != nil {
		return nil, err
	}
	var objs []render.Object
	for _, r := range b.renderers {
		o, diags := r.Render(p)
		warnings = append(warnings, diags.Warnings()...)
		if errs := diags.Errors(); len(errs) > 0 {
			all := append(errs, warnings...)
			all.Sort()
			return nil, &AgreementError{Diagnostics: all}
		}
		objs = append(objs, o...)
	}
	warnings.Sort()
	if len(objs) == 0 {
		// Empty output would let Argo CD prune every queue it manages.
		return nil, &AgreementError{Diagnostics: diag.List{{Severity: diag.Error, Type: field.ErrorTypeRequired, File: p.File, Message: "the agreement renders no objects"}}}
	}
	encoded, stream, err := encode.Encode(objs)
	if err != nil {
		return nil, err
	}
	return &Result{Plan: p, Objects: encoded, Manifests: stream, Warnings: warnings}, nil
}

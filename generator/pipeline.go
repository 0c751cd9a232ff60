package generator

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/agreement"
	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/encode"
	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/load"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render"
	"github.com/tenancy-dev/tenancy/generator/render/guard"
	"github.com/tenancy-dev/tenancy/generator/render/kai"
	"github.com/tenancy-dev/tenancy/generator/render/kueue"
	"github.com/tenancy-dev/tenancy/generator/render/monitor"
	"github.com/tenancy-dev/tenancy/generator/render/namespaces"
	"github.com/tenancy-dev/tenancy/generator/render/windowctl"
	"github.com/tenancy-dev/tenancy/generator/validate"
)

// defaultName names an agreement that came without a path (the KRM
// function's inline spec.agreement) in every diagnostic.
const defaultName = "tenancy.toml"

// families are what one backend renders, each family with the same
// contract on the plan (render.Family): the scheduler's objects, the team
// Namespaces (with the backend's queue label), the guardrails for that
// scheduler, and the monitoring rules and dashboard (which render nothing
// unless [monitoring] enables them). Check runs every family's Check; Render
// runs the same, then every family's Render. A later family (departments)
// is one more entry.
func families(opts Options) []render.Family {
	switch opts.Backend {
	case KAI:
		return []render.Family{kai.Renderer{}, namespacesFamily(gpu.KAI), guard.Renderer{Backend: gpu.KAI}, monitor.Renderer{Backend: gpu.KAI}, windowctl.Renderer{Backend: gpu.KAI}}
	default:
		return []render.Family{kueue.Renderer{APIVersion: opts.KueueAPI}, namespacesFamily(gpu.Kueue), guard.Renderer{Backend: gpu.Kueue}, monitor.Renderer{Backend: gpu.Kueue}, windowctl.Renderer{Backend: gpu.Kueue, KueueAPI: opts.KueueAPI}}
	}
}

// namespacesFamily renders the team Namespaces with the backend's queue
// label when its descriptor says the Namespaces carry it.
func namespacesFamily(b Backend) namespaces.Family {
	if d := gpu.Describe(b); d.NamespaceQueueLabel {
		return namespaces.Family{QueueLabel: d.QueueLabel}
	}
	return namespaces.Family{}
}

func check(src Source, opts Options) (*plan.Agreement, []Diagnostic, error) {
	opts, err := opts.Normalize()
	if err != nil {
		return nil, nil, err
	}
	p, warnings, err := checkSource(src, families(opts))
	if err != nil {
		return nil, nil, err
	}
	return p, warnings, nil
}

// checkSource loads, decodes, validates and plans an agreement, and runs the
// families' checks on the plan. The families' checks run even when the
// agreement's own rules found errors, so one run reports everything. The
// warnings are returned with the plan; errors, with every warning, as an
// *AgreementError.
func checkSource(src Source, fams []render.Family) (*plan.Agreement, diag.List, error) {
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
	diags = append(diags, validate.Validate(a)...)
	p := plan.Build(a)
	p.Source = src.Data
	for _, f := range fams {
		diags = append(diags, f.Check(p)...)
	}
	diags.Sort()
	if len(diags.Errors()) > 0 {
		return nil, nil, &AgreementError{Diagnostics: diags}
	}
	return p, diags.Warnings(), nil
}

func renderSource(src Source, opts Options) (*Result, error) {
	opts, err := opts.Normalize()
	if err != nil {
		return nil, err
	}
	fams := families(opts)
	p, warnings, err := checkSource(src, fams)
	if err != nil {
		return nil, err
	}
	var objs []render.Object
	for _, r := range fams {
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

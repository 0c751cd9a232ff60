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
// unless [monitoring] enables them). Render runs every family's Check, then
// every family's Render; Check runs the same and drops the output. A later
// family (departments) is one more entry.
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

// check is render without the output: the whole rendering (build), its
// YAML included, with the plan and the warnings kept and the rest dropped,
// so whatever render refuses, check refuses, with the same diagnostics.
func check(src Source, opts Options) (*plan.Agreement, []Diagnostic, error) {
	res, err := renderSource(src, opts)
	if err != nil {
		return nil, nil, err
	}
	return res.Plan, res.Warnings, nil
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

// renderSource renders an agreement for opts: build with the backend's
// families. Each step runs once; check runs the same and drops the output.
func renderSource(src Source, opts Options) (*Result, error) {
	opts, err := opts.Normalize()
	if err != nil {
		return nil, err
	}
	return build(src, families(opts))
}

// build renders an agreement with the families fams: the checks
// (checkSource), every family's Render, the stream's order, where two
// objects of one identity are found, and the YAML. What any step refuses is
// an *AgreementError listing every problem and every warning, the renderer's
// own failures included, so check (which runs build too) and render give
// one verdict.
func build(src Source, fams []render.Family) (*Result, error) {
	p, warnings, err := checkSource(src, fams)
	if err != nil {
		return nil, err
	}
	var objs []render.Object
	var errs diag.List
	for _, r := range fams {
		o, diags := r.Render(p)
		warnings = append(warnings, diags.Warnings()...)
		errs = append(errs, diags.Errors()...)
		objs = append(objs, o...)
	}
	if len(errs) == 0 && len(objs) == 0 {
		// Empty output would let Argo CD prune every queue it manages.
		errs = diag.List{{Severity: diag.Error, Type: field.ErrorTypeRequired, File: p.File, Message: "the agreement renders no objects"}}
	}
	var res *Result
	if len(errs) == 0 {
		ordered, dups := encode.Order(objs)
		errs = duplicates(p, dups)
		if len(errs) == 0 {
			encoded, stream, err := encode.Write(ordered)
			if err != nil {
				errs = diag.List{{Severity: diag.Error, Type: field.ErrorTypeInternal, File: p.File, Message: "encode: " + err.Error()}}
			}
			res = &Result{Plan: p, Objects: encoded, Manifests: stream}
		}
	}
	warnings.Sort()
	if len(errs) > 0 {
		all := append(errs, warnings...)
		all.Sort()
		return nil, &AgreementError{Diagnostics: all}
	}
	res.Warnings = warnings
	return res, nil
}

// duplicates reports each pair of rendered objects that share an identity.
// Validation and the families' checks refuse every agreement known to
// render such a pair, at the key that causes it (a team namespace that is
// the windows controller's, a team named like the default LocalQueue), so
// this is the backstop that keeps check's verdict render's for any they
// miss. It points at the team the second object belongs to (its team
// label), else at the pool's name, which every object carries.
func duplicates(p *plan.Agreement, dups []encode.Duplicate) diag.List {
	if len(dups) == 0 {
		return nil
	}
	r := &diag.Reporter{File: p.File}
	for _, d := range dups {
		o := p.NameOrigin
		for _, obj := range []render.Object{d.Second, d.First} {
			if t := teamOf(p, obj); t != nil {
				o = t.Origin
				break
			}
		}
		r.Errorf(field.ErrorTypeDuplicate, o.Pos, o.Path, "the agreement renders two objects that are both %s: the API server holds one object per name, so one would overwrite the other", d.Identity())
	}
	return r.List
}

// teamOf returns the team an object is labelled with, or nil.
func teamOf(p *plan.Agreement, o render.Object) *plan.Team {
	meta, _ := o.Fields["metadata"].(map[string]any)
	labels, _ := meta["labels"].(map[string]any)
	name, _ := labels[render.TeamLabel].(string)
	if name == "" {
		return nil
	}
	for i := range p.Teams {
		if p.Teams[i].Name == name {
			return &p.Teams[i]
		}
	}
	return nil
}

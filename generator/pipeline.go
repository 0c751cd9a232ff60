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

// checkAll checks the backend opts or the agreement names first, then each
// other backend the agreement names (when opts names none), each by a whole
// build, and merges what they say.
func checkAll(src Source, opts Options) (*plan.Agreement, []Diagnostic, error) {
	opts, err := opts.Normalize()
	if err != nil {
		return nil, nil, err
	}
	b := build(src, opts)
	all := b.diags
	if b.plan != nil {
		seen := map[string]bool{}
		for _, d := range all {
			seen[diagKey(d)] = true
		}
		for _, backend := range opts.Backends(b.plan) {
			if backend == b.opts.Backend {
				continue
			}
			o := opts
			o.Backend = backend
			for _, d := range build(src, o).diags {
				if k := diagKey(d); !seen[k] {
					seen[k] = true
					all = append(all, d)
				}
			}
		}
		all.Sort()
	}
	if len(all.Errors()) > 0 {
		return nil, nil, &AgreementError{Diagnostics: all}
	}
	return b.plan, all.Warnings(), nil
}

// diagKey tells two diagnostics apart: the same problem said by two
// backends is one.
func diagKey(d Diagnostic) string {
	return string(d.Severity) + "\x00" + string(d.Type) + "\x00" + d.String()
}

// checkSource loads, decodes, validates and plans an agreement, resolves the
// backend (opts' or the agreement's, checkBackendKey), and runs that
// backend's families' checks on the plan. The families' checks run even when
// the agreement's own rules found errors, and even when the backend asked
// for is refused, so one run reports everything. It returns the plan (nil
// when the file did not load), the options resolved against it, and every
// diagnostic, sorted.
func checkSource(src Source, opts Options) (*plan.Agreement, Options, diag.List) {
	name := src.Path
	if name == "" {
		name = defaultName
	}
	if len(src.Data) > MaxAgreementSize {
		return nil, opts, diag.List{{Severity: diag.Error, Type: field.ErrorTypeTooLong, File: name,
			Message: fmt.Sprintf("file is %d bytes; agreements are limited to %d bytes (1 MiB)", len(src.Data), MaxAgreementSize)}}
	}
	root, diags := load.Parse(name, src.Data)
	if len(diags.Errors()) > 0 {
		return nil, opts, diags
	}
	includes, diags := resolveIncludes(src, name, root)
	if len(diags.Errors()) > 0 {
		diags.Sort()
		return nil, opts, diags
	}
	a, diags := agreement.Decode(name, root)
	// Semantic checks run even after type errors, so one run reports
	// everything; a field that failed to decode is simply Invalid.
	diags = append(diags, validate.Validate(a)...)
	p := plan.Build(a)
	p.Source = src.Data
	p.Includes = includes
	diags = append(diags, checkBackendKey(p, opts)...)
	opts = opts.Resolve(p)
	for _, f := range families(opts) {
		diags = append(diags, f.Check(p)...)
	}
	diags.Sort()
	return p, opts, diags
}

// renderSource renders an agreement for opts. Each step runs once; check
// runs the same and drops the output.
func renderSource(src Source, opts Options) (*Result, error) {
	opts, err := opts.Normalize()
	if err != nil {
		return nil, err
	}
	b := build(src, opts)
	if len(b.diags.Errors()) > 0 {
		return nil, &AgreementError{Diagnostics: b.diags}
	}
	return b.result, nil
}

// built is what build says of an agreement: the plan (nil when the file
// did not load), the options resolved against it, every diagnostic
// (sorted), and the result when nothing was an error.
type built struct {
	plan   *plan.Agreement
	opts   Options
	diags  diag.List
	result *Result
}

// build renders an agreement: the checks (checkSource), then the resolved
// backend's families (renderPlan). What any step refuses is in diags with
// every warning, so check (which runs build too) and render give one
// verdict.
func build(src Source, opts Options) built {
	p, opts, diags := checkSource(src, opts)
	b := built{plan: p, opts: opts, diags: diags}
	if len(diags.Errors()) > 0 {
		return b
	}
	b.result, b.diags = renderPlan(p, families(opts), diags.Warnings())
	if b.result != nil {
		b.result.Backend = opts.Backend
	}
	return b
}

// renderPlan runs the families' Render on a checked plan, orders the
// stream, finds two objects of one identity, and writes the YAML. It returns
// the result and the warnings, or nil and every problem with the warnings,
// the renderer's own failures included.
func renderPlan(p *plan.Agreement, fams []render.Family, warnings diag.List) (*Result, diag.List) {
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
		return nil, all
	}
	res.Warnings = warnings
	return res, warnings
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

// parts lists an agreement's fleet parts (Parts). Until [clusters] is
// decoded every agreement is a single cluster's.
func parts(src Source) ([]string, error) {
	return nil, nil
}

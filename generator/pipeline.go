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
		return []render.Family{kai.Renderer{}, namespaces.Family{QueueLabel: kai.QueueLabel}, guard.Renderer{Backend: gpu.KAI}, monitor.Renderer{Backend: gpu.KAI}, windowctl.Renderer{Backend: gpu.KAI}}
	default:
		return []render.Family{kueue.Renderer{APIVersion: opts.KueueAPI}, namespaces.Family{}, guard.Renderer{Backend: gpu.Kueue}, monitor.Renderer{Backend: gpu.Kueue}, windowctl.Renderer{Backend: gpu.Kueue, KueueAPI: opts.KueueAPI}}
	}
}

func check(src Source, opts Options) (*plan.Agreement, []Diagnostic, error) {
	opts, err := opts.Normalize()
	if err != nil {
		return nil, nil, err
	}
	p, _, diags := checkSource(src, opts)
	if len(diags.Errors()) > 0 {
		return nil, nil, &AgreementError{Diagnostics: diags}
	}
	return p, diags.Warnings(), nil
}

func checkAll(src Source, opts Options) (*plan.Agreement, []Diagnostic, error) {
	opts, err := opts.Normalize()
	if err != nil {
		return nil, nil, err
	}
	p, first, all := checkSource(src, opts)
	if p != nil {
		// The first backend is checked; the others the agreement names
		// (when no backend is asked for) are checked in turn, each run
		// whole, and what they say is merged.
		seen := map[string]bool{}
		for _, d := range all {
			seen[diagKey(d)] = true
		}
		for _, b := range opts.Backends(p) {
			if b == first.Backend {
				continue
			}
			o := opts
			o.Backend = b
			_, _, diags := checkSource(src, o)
			for _, d := range diags {
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
	return p, all.Warnings(), nil
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
	a, diags := agreement.Decode(name, root)
	// Semantic checks run even after type errors, so one run reports
	// everything; a field that failed to decode is simply Invalid.
	diags = append(diags, validate.Validate(a)...)
	p := plan.Build(a)
	p.Source = src.Data
	diags = append(diags, checkBackendKey(p, opts)...)
	opts = opts.Resolve(p)
	for _, f := range families(opts) {
		diags = append(diags, f.Check(p)...)
	}
	diags.Sort()
	return p, opts, diags
}

func renderSource(src Source, opts Options) (*Result, error) {
	opts, err := opts.Normalize()
	if err != nil {
		return nil, err
	}
	p, opts, diags := checkSource(src, opts)
	if len(diags.Errors()) > 0 {
		return nil, &AgreementError{Diagnostics: diags}
	}
	warnings := diags.Warnings()
	var objs []render.Object
	for _, r := range families(opts) {
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
	return &Result{Plan: p, Backend: opts.Backend, Objects: encoded, Manifests: stream, Warnings: warnings}, nil
}

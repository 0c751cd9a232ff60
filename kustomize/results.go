package kustomize

import (
	"errors"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/diag"
)

// inlinePath is what diagnostics about an inline agreement call its file:
// their line numbers count from the first line of spec.agreement.
const inlinePath = "spec.agreement"

// renderFailure turns a generator error into results: one per diagnostic for
// an invalid agreement, one for anything else.
func renderFailure(cfg *Config, err error) framework.Results {
	var ae *generator.AgreementError
	if errors.As(err, &ae) && len(ae.Diagnostics) > 0 {
		rs := diagnosticResults(cfg, ae.Diagnostics)
		if rs.ExitCode() == 0 {
			// An AgreementError always means failure, even if the library
			// ever returned one holding only warnings.
			rs = append(rs, cfg.result("", err.Error()))
		}
		return rs
	}
	r := cfg.result("", err.Error())
	if errors.Is(err, generator.ErrOptions) {
		// Validate refused every bad backend and Kueue API before the
		// render: what the render refuses is the part spec.cluster chose
		// (or left out) for this agreement.
		r.Field = &framework.Field{Path: clusterField}
	}
	return framework.Results{r}
}

// diagnosticResults maps diagnostics to results. The message is the
// diagnostic's own file:line:col: field: message line, so a tool that shows
// only messages still points at the line; file and field repeat it in
// structured form. Diagnostics of an inline agreement refer to the
// TenancyGenerator's spec.agreement instead of a file.
func diagnosticResults(cfg *Config, ds []generator.Diagnostic) framework.Results {
	var rs framework.Results
	for _, d := range ds {
		r := &framework.Result{Severity: severity(d.Severity), Message: d.String()}
		if cfg.Spec.Agreement != "" {
			r.Message = cfg.name() + ": " + r.Message
			r.ResourceRef = cfg.ref()
			r.Field = &framework.Field{Path: inlinePath}
			if cfg.Path != "" {
				r.File = &framework.File{Path: cfg.Path}
			}
		} else {
			path := d.File
			if path == "" {
				path = cfg.Spec.File
			}
			r.File = &framework.File{Path: path}
			if f := d.Field(); f != "" {
				r.Field = &framework.Field{Path: f}
			}
		}
		rs = append(rs, r)
	}
	return rs
}

func severity(s diag.Severity) framework.Severity {
	switch s {
	case diag.Error:
		return framework.Error
	case diag.Warning:
		return framework.Warning
	}
	return framework.Info
}

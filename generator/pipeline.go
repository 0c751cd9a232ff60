package generator

import (
	"fmt"
	"strings"

	"github.com/tenancy-dev/tenancy/generator/agreement"
	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/encode"
	"github.com/tenancy-dev/tenancy/generator/load"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render"
	"github.com/tenancy-dev/tenancy/generator/render/kai"
	"github.com/tenancy-dev/tenancy/generator/render/kueue"
	"github.com/tenancy-dev/tenancy/generator/validate"
)

// checked is an agreement that passed validation.
type checked struct {
	plan     *plan.Agreement
	warnings diag.List
	root     *load.Value
}

func check(src Source) (*plan.Agreement, []Diagnostic, error) {
	c, err := checkSource(src)
	if err != nil {
		return nil, nil, err
	}
	return c.plan, c.warnings, nil
}

func checkSource(src Source) (*checked, error) {
	name := src.Path
	if name == "" {
		name = "tenancy.toml"
	}
	if len(src.Data) > MaxAgreementSize {
		return nil, &AgreementError{Diagnostics: diag.List{{Severity: diag.Error, File: name,
			Message: fmt.Sprintf("file is %d bytes; agreements are limited to %d bytes (1 MiB)", len(src.Data), MaxAgreementSize)}}}
	}
	root, diags := load.Parse(name, src.Data)
	if len(diags.Errors()) > 0 {
		return nil, &AgreementError{Diagnostics: diags}
	}
	a, diags := agreement.Decode(name, root)
	// Semantic checks run even after type errors, so one run reports
	// everything; a field that failed to decode is simply unset.
	diags = append(diags, validate.Validate(a)...)
	diags.Sort()
	if len(diags.Errors()) > 0 {
		return nil, &AgreementError{Diagnostics: diags}
	}
	return &checked{plan: plan.Build(a), warnings: diags.Warnings(), root: root}, nil
}

func renderSource(src Source, opts Options) (*Result, error) {
	opts, err := opts.Normalize()
	if err != nil {
		return nil, err
	}
	c, err := checkSource(src)
	if err != nil {
		return nil, err
	}
	var objs []render.Object
	warnings := c.warnings
	switch opts.Backend {
	case Kueue:
		objs, err = kueue.Render(c.plan, opts.KueueAPI)
		if err != nil {
			return nil, err
		}
	case KAI:
		var kaiWarnings, kaiErrors diag.List
		objs, kaiWarnings, kaiErrors = kai.Render(c.plan, src.Path)
		positions := load.Index(c.root)
		locate(kaiWarnings, positions)
		locate(kaiErrors, positions)
		warnings = append(append(diag.List(nil), warnings...), kaiWarnings...)
		warnings.Sort()
		if len(kaiErrors) > 0 {
			all := append(kaiErrors, warnings...)
			all.Sort()
			return nil, &AgreementError{Diagnostics: all}
		}
	}
	if len(objs) == 0 {
		// Empty output would let Argo CD prune every queue it manages.
		return nil, &AgreementError{Diagnostics: diag.List{{Severity: diag.Error, File: src.Path, Message: "the agreement renders no objects"}}}
	}
	encoded, stream, err := encode.Encode(objs)
	if err != nil {
		return nil, err
	}
	res := &Result{Plan: c.plan, Manifests: stream, Warnings: warnings}
	for _, o := range encoded {
		res.Objects = append(res.Objects, Object{
			APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name,
			Fields: o.Fields, YAML: o.YAML,
		})
	}
	return res, nil
}

// locate gives backend diagnostics, which know only a field path, the
// position of the closest key the file has for it.
func locate(ds diag.List, positions map[string]load.Pos) {
	for i := range ds {
		path := ds[i].Field
		for path != "" {
			if p, ok := positions[path]; ok {
				ds[i].Line, ds[i].Column = p.Line, p.Column
				break
			}
			cut := strings.LastIndexByte(path, '.')
			if cut < 0 {
				break
			}
			path = path[:cut]
		}
	}
}

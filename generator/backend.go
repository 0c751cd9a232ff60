package generator

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// Backends returns the backends tenancy check covers for p: the one o asks
// for; else every backend p's backend key names, in its order; else Kueue,
// which render renders by default. Names the key gets wrong are left out
// (checkBackendKey reports them).
func (o Options) Backends(p *plan.Agreement) []Backend {
	if o.Backend != "" {
		return []Backend{o.Backend}
	}
	var out []Backend
	if p != nil && p.Backend != nil {
		for _, n := range p.Backend.Names {
			if b := Backend(n); slices.Contains(Backends, b) && !slices.Contains(out, b) {
				out = append(out, b)
			}
		}
	}
	if len(out) == 0 {
		out = []Backend{Kueue}
	}
	return out
}

// Resolve returns o with the backend a render of p uses filled in: the one
// o asks for, else the first the agreement names, else Kueue. It does not
// judge whether the agreement allows it; Check and Render do.
func (o Options) Resolve(p *plan.Agreement) Options {
	o.Backend = o.Backends(p)[0]
	return o
}

// checkBackendKey reports what is wrong with p's backend key (a name that
// is no backend, a name written twice, an empty list) and refuses, at the
// key, a backend o asks for that the key does not name: an agreement that
// says it is for Kueue must not be synced to KAI by a parameter set
// elsewhere without a word.
func checkBackendKey(p *plan.Agreement, o Options) diag.List {
	key := p.Backend
	if key == nil {
		return nil
	}
	r := diag.Reporter{File: p.File}
	known := make([]string, len(Backends))
	for i, b := range Backends {
		known[i] = string(b)
	}
	if len(key.Names) == 0 {
		r.Errorf(field.ErrorTypeRequired, key.Origin.Pos, key.Origin.Path, "names no backend: name %s, or leave the key out for kueue", strings.Join(known, " or "))
		r.Suggest(`backend = "kueue"`)
	}
	var named []string
	for i, n := range key.Names {
		at := key.Origins[i]
		switch {
		case !slices.Contains(known, n):
			r.Errorf(field.ErrorTypeNotSupported, at.Pos, at.Path, "unknown backend %q: must be %s", n, strings.Join(known, " or "))
		case slices.Contains(named, n):
			r.Errorf(field.ErrorTypeDuplicate, at.Pos, at.Path, "backend %q is named twice", n)
		default:
			named = append(named, n)
		}
	}
	if o.Backend != "" && len(named) > 0 && !slices.Contains(named, string(o.Backend)) {
		from := o.BackendFrom
		if from == "" {
			from = "the backend option"
		}
		r.Errorf(field.ErrorTypeNotSupported, key.Origin.Pos, key.Origin.Path,
			"the agreement is written for %s, and %s asks for %s: render it for %s, or name %s here too if the agreement holds for both",
			strings.Join(named, " and "), from, o.Backend, named[0], o.Backend)
		r.Suggest(fmt.Sprintf("backend = [%s]", quoted(append(named, string(o.Backend)))))
	}
	return r.List
}

// quoted writes names as the items of a TOML array.
func quoted(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = diag.TOMLString(n)
	}
	return strings.Join(out, ", ")
}

package generator_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/internal/diagtest"
)

// backendAgreement is a one-flavor agreement both backends accept; key is
// its first line (the backend key, or nothing).
func backendAgreement(key string) generator.Source {
	return generator.Source{Path: "tenancy.toml", Data: []byte(key + `
version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 8
[teams.a]
guaranteed = 8
`)}
}

// TestBackendResolution: the agreement's backend key × the backend the
// options ask for → the backend Render renders for and CheckAll checks, or
// the error, at the key, refusing a backend the key does not name.
func TestBackendResolution(t *testing.T) {
	refused := func(line, col int, path string) []generator.Diagnostic {
		return []generator.Diagnostic{diagtest.Error("tenancy.toml", line, col, path, field.ErrorTypeNotSupported)}
	}
	tests := map[string]struct {
		key     string
		asked   generator.Backend
		render  generator.Backend // what Render renders for
		checked []generator.Backend
		errs    []generator.Diagnostic // Render's and CheckAll's errors
	}{
		"no key, nothing asked: kueue, as render always did": {
			render: generator.Kueue, checked: []generator.Backend{generator.Kueue},
		},
		"no key, kai asked": {
			asked: generator.KAI, render: generator.KAI, checked: []generator.Backend{generator.KAI},
		},
		"kai named, nothing asked": {
			key: `backend = "kai"`, render: generator.KAI, checked: []generator.Backend{generator.KAI},
		},
		"kai named, kai asked": {
			key: `backend = "kai"`, asked: generator.KAI, render: generator.KAI, checked: []generator.Backend{generator.KAI},
		},
		"kueue named, kai asked: refused at the key": {
			key: `backend = "kueue"`, asked: generator.KAI,
			errs: refused(1, 11, "backend"),
		},
		"kai named in a list, kueue asked: refused at the list": {
			key: `backend = ["kai"]`, asked: generator.Kueue,
			errs: refused(1, 11, "backend"),
		},
		"both named, nothing asked: render the first, check both": {
			key: `backend = ["kai", "kueue"]`, render: generator.KAI, checked: []generator.Backend{generator.KAI, generator.Kueue},
		},
		"both named, kueue asked": {
			key: `backend = ["kai", "kueue"]`, asked: generator.Kueue, render: generator.Kueue, checked: []generator.Backend{generator.Kueue},
		},
		"an unknown name, at the name": {
			key:  `backend = ["kueue", "volcano"]`,
			errs: refused(1, 21, "backend[1]"),
		},
		"a name written twice": {
			key:  `backend = ["kai", "kai"]`,
			errs: []generator.Diagnostic{diagtest.Error("tenancy.toml", 1, 19, "backend[1]", field.ErrorTypeDuplicate)},
		},
		"an empty list": {
			key:  `backend = []`,
			errs: []generator.Diagnostic{diagtest.Error("tenancy.toml", 1, 11, "backend", field.ErrorTypeRequired)},
		},
		"not a string": {
			key:  `backend = 1`,
			errs: []generator.Diagnostic{diagtest.Error("tenancy.toml", 1, 11, "backend", field.ErrorTypeTypeInvalid)},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			src := backendAgreement(tc.key)
			opts := generator.Options{Backend: tc.asked, BackendFrom: "--backend"}
			res, err := generator.Render(src, opts)
			p, _, cerr := generator.CheckAll(src, opts)
			if tc.errs != nil {
				for what, err := range map[string]error{"Render": err, "CheckAll": cerr} {
					var ae *generator.AgreementError
					if !errors.As(err, &ae) {
						t.Fatalf("%s: %v, want an *AgreementError", what, err)
					}
					if d := diagtest.Diff(t, tc.errs, ae.Diagnostics.Errors()); d != "" {
						t.Errorf("%s errors (-want,+got):\n%s", what, d)
					}
				}
				return
			}
			if err != nil || cerr != nil {
				t.Fatalf("Render: %v; CheckAll: %v", err, cerr)
			}
			if res.Backend != tc.render {
				t.Errorf("rendered for %s, want %s", res.Backend, tc.render)
			}
			if d := cmp.Diff(tc.checked, opts.Backends(p)); d != "" {
				t.Errorf("backends checked (-want,+got):\n%s", d)
			}
		})
	}
}

// TestBackendRefusalSaysWhy: the refusal names what asked for the backend
// and what the agreement is for, suggests the key naming both, and comes
// with the refused backend's own checks, so a reader learns at once whether
// naming it would do.
func TestBackendRefusalSaysWhy(t *testing.T) {
	src := backendAgreement(`backend = "kueue"`)
	src.Data = []byte(strings.Replace(string(src.Data), "guaranteed = 8\n", "guaranteed = 8\nlendable = 4\n", 1))
	_, err := generator.Render(src, generator.Options{Backend: generator.KAI, BackendFrom: "ARGOCD_ENV_TENANCY_BACKEND"})
	var ae *generator.AgreementError
	if !errors.As(err, &ae) {
		t.Fatalf("Render: %v, want an *AgreementError", err)
	}
	var got []string
	for _, d := range ae.Diagnostics {
		got = append(got, d.String())
	}
	if len(got) < 2 {
		t.Fatalf("want the refusal and KAI's warning, got:\n%s", strings.Join(got, "\n"))
	}
	want := `tenancy.toml:1:11: backend: the agreement is written for kueue, and ARGOCD_ENV_TENANCY_BACKEND asks for kai: render it for kueue, or name kai here too if the agreement holds for both
    backend = ["kueue", "kai"]`
	if d := cmp.Diff(want, got[0]); d != "" {
		t.Errorf("refusal (-want,+got):\n%s", d)
	}
	if !strings.Contains(strings.Join(got[1:], "\n"), "warning: teams.a") {
		t.Errorf("KAI's own checks did not run:\n%s", strings.Join(got, "\n"))
	}
}

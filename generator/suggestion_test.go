package generator_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/internal/diagtest"
)

// TestSuggestionsAreTOML: every diagnostic that Check gives for an agreement
// of the repository or a fixture (the broken ones are the point), with
// either backend, suggests only TOML that parses and writes none in its
// message (diagtest.TOML). The rules' table tests check the same of their
// own cases through diagtest.Diff.
func TestSuggestionsAreTOML(t *testing.T) {
	suggested := map[string]int{}
	for path, src := range repositoryAgreements(t) {
		for name, opts := range checkOptions {
			_, ds, err := generator.Check(src, opts)
			var ae *generator.AgreementError
			if errors.As(err, &ae) {
				ds = ae.Diagnostics
			}
			for _, d := range ds {
				if err := diagtest.TOML(d); err != nil {
					t.Errorf("%s (%s): %s\n%v", path, name, d, err)
				}
				if d.Suggestion != "" {
					suggested[path]++
				}
			}
		}
	}
	// generator/testdata/suggestions holds a fixture for each rule that
	// suggests TOML; each must get its suggestions, or the test proves
	// nothing of it.
	for path := range repositoryAgreements(t) {
		if strings.HasPrefix(path, "generator/testdata/suggestions/") && suggested[path] == 0 {
			t.Errorf("%s gets no suggestion", path)
		}
	}
}

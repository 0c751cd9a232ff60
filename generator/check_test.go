package generator_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/internal/examples"
)

// checkOptions are the option sets render accepts, each one backend's
// render; the empty one is the agreement's own choice (its backend key).
var checkOptions = map[string]generator.Options{
	"its backend":   {},
	"kueue v1beta2": {Backend: generator.Kueue, KueueAPI: generator.KueueV1beta2},
	"kueue v1beta1": {Backend: generator.Kueue, KueueAPI: generator.KueueV1beta1},
	"kai":           {Backend: generator.KAI},
}

// repositoryAgreements reads every TOML file of the repository: the shipped
// agreements (examples.Sources) and every fixture under a testdata directory,
// the broken ones included, so a new fixture is covered without a list.
func repositoryAgreements(t *testing.T) map[string]generator.Source {
	t.Helper()
	root := examples.Root(t)
	out := examples.Sources(t)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() || !strings.HasSuffix(path, ".toml") || !strings.Contains(rel, "testdata/") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out[rel] = generator.Source{Path: rel, Data: data}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// verdict is what Check or Render says of an agreement: its diagnostics,
// each with its severity, type, position, field path and message, and
// whether it failed.
func verdict(t *testing.T, warnings []generator.Diagnostic, err error) (failed bool, diags []string) {
	t.Helper()
	var ae *generator.AgreementError
	switch {
	case errors.As(err, &ae):
		failed, warnings = true, ae.Diagnostics
	case errors.Is(err, generator.ErrOptions):
		// A fleet's manager asked of KAI: refused alike, as a usage error.
		return true, []string{"usage: " + err.Error()}
	case err != nil:
		t.Fatalf("not an *AgreementError: %v", err)
	}
	for _, d := range warnings {
		diags = append(diags, string(d.Severity)+" "+string(d.Type)+" "+d.String())
	}
	return failed, diags
}

// resultVerdict is verdict of a rendering's result: its warnings when it
// rendered.
func resultVerdict(t *testing.T) func(*generator.Result, error) (bool, []string) {
	return func(res *generator.Result, err error) (bool, []string) {
		t.Helper()
		var warnings []generator.Diagnostic
		if res != nil {
			warnings = res.Warnings
		}
		return verdict(t, warnings, err)
	}
}

// TestCheckIsRenderWithoutOutput: for every agreement of the repository and
// every fixture, and each backend, Check and Render give the same verdict and
// the same diagnostics (severity, type, position, field path and message),
// so CI running tenancy check fails exactly when the Argo CD sync would; the
// fixtures of generator/testdata/check give the diagnostics wantDiagnostics
// spells out.
func TestCheckIsRenderWithoutOutput(t *testing.T) {
	invalid := map[string]int{}
	agreements := repositoryAgreements(t)
	for path := range wantDiagnostics {
		if _, ok := agreements[path]; !ok {
			t.Errorf("wantDiagnostics names %s, which is not a fixture", path)
		}
	}
	parts := map[string]examples.Part{}
	for path, src := range agreements {
		parts = examples.AddParts(t, parts, path, src)
	}
	for path, part := range parts {
		for name, opts := range checkOptions {
			t.Run(path+"/"+name, func(t *testing.T) {
				_, cw, cerr := generator.Check(part.Source, part.Options(opts))
				checkFailed, checkDiags := verdict(t, cw, cerr)
				renderFailed, renderDiags := resultVerdict(t)(generator.Render(part.Source, part.Options(opts)))
				// diff's rendering (RenderFields) is Render's verdict too.
				fieldsFailed, fieldsDiags := resultVerdict(t)(generator.Prepare(part.Source).RenderFields(part.Options(opts)))
				for _, other := range []struct {
					name   string
					failed bool
					diags  []string
				}{{"Check", checkFailed, checkDiags}, {"RenderFields", fieldsFailed, fieldsDiags}} {
					if other.failed != renderFailed {
						t.Errorf("%s failed = %v, Render failed = %v", other.name, other.failed, renderFailed)
					}
					if diff := cmp.Diff(renderDiags, other.diags); diff != "" {
						t.Errorf("diagnostics (-Render,+%s):\n%s", other.name, diff)
					}
				}
				if want, ok := expected(t, path, name); ok {
					if diff := cmp.Diff(want, checkDiags); diff != "" {
						t.Errorf("Check's diagnostics (-want,+got):\n%s", diff)
					}
				}
				if checkFailed {
					invalid[name]++
				}
			})
		}
	}
	// The broken fixtures (kustomize/testdata/broken-agreement, TOML syntax
	// errors, ...) must be among them, or the test proves little.
	for name := range checkOptions {
		if invalid[name] < 2 {
			t.Errorf("%s: only %d invalid agreements among the fixtures, want the broken ones", name, invalid[name])
		}
	}
}

// expected returns wantDiagnostics' diagnostics of the fixture at path for
// the option set name, with the fixture's path as the file, and whether
// there are any. Every fixture under generator/testdata/check has them: the
// directory holds the cases whose message and position are the point.
func expected(t *testing.T, path, name string) ([]string, bool) {
	t.Helper()
	byBackend, ok := wantDiagnostics[path]
	if !ok {
		if strings.HasPrefix(path, "generator/testdata/check/") {
			t.Fatalf("%s has no entry in wantDiagnostics: say what Check must report of it", path)
		}
		return nil, false
	}
	backend := "kueue"
	if checkOptions[name].Backend == generator.KAI {
		backend = "kai"
	}
	want := byBackend[backend]
	if backend == "kai" && len(want) == 1 && want[0] == sameAsKueue[0] {
		want = byBackend["kueue"]
	}
	var out []string
	for _, w := range want {
		out = append(out, strings.Replace(w, " tenancy.toml:", " "+path+":", 1))
	}
	return out, true
}

// TestCheckRefusesWhatKAIRefuses is the case that made check and render
// disagree (cmd/tenancy/testdata/check/kai-refused.toml): a priority named
// system-high and a team named like the pool's shared subtree are accepted
// by Kueue and refused by KAI, by Check as by Render.
func TestCheckRefusesWhatKAIRefuses(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(examples.Root(t), "cmd", "tenancy", "testdata", "check", "kai-refused.toml"))
	if err != nil {
		t.Fatal(err)
	}
	src := generator.Source{Path: "tenancy.toml", Data: data}
	if _, _, err := generator.Check(src, generator.Options{Backend: generator.Kueue}); err != nil {
		t.Errorf("Check for Kueue: %v", err)
	}
	_, _, cerr := generator.Check(src, generator.Options{Backend: generator.KAI})
	_, rerr := generator.Render(src, generator.Options{Backend: generator.KAI})
	_, checkDiags := verdict(t, nil, cerr)
	_, renderDiags := verdict(t, nil, rerr)
	want := []string{
		`error FieldValueForbidden tenancy.toml:9:15: priorities.system-high: kai: names starting with system- are reserved for Kubernetes' own PriorityClasses`,
		`error FieldValueDuplicate tenancy.toml:10:8: teams.gpu-pool-shared: kai: queue name "gpu-pool-shared" is used both by the shared subtree and by team gpu-pool-shared`,
	}
	if diff := cmp.Diff(want, checkDiags); diff != "" {
		t.Errorf("Check for KAI (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(want, renderDiags); diff != "" {
		t.Errorf("Render for KAI (-want,+got):\n%s", diff)
	}
}

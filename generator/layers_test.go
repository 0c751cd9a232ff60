package generator_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// families are the packages that keep render.Family's contract. None
// imports another: what two families share is the plan's, the contract
// package's (render) or the vocabulary's (gpu).
var families = []string{"render/guard", "render/kai", "render/kueue", "render/monitor", "render/namespaces", "render/windowctl"}

// layers lists every package under generator/ with the packages of the
// module it must not import directly. A package missing from it fails
// TestLayers, so a new package says where it stands. "render/*" stands for
// every family.
var layers = map[string][]string{
	"":                    nil, // the facade: it wires every step
	"agreement":           {"validate", "plan", "render", "render/*", "gpu"},
	"chargeback":          {"load", "agreement", "validate", "render", "render/*"},
	"diag":                {"load", "agreement", "validate", "plan", "render", "render/*", "gpu"},
	"diff":                {"load", "agreement", "validate"},
	"encode":              {"load", "agreement", "validate", "plan", "render/*"},
	"gpu":                 {"load", "agreement", "validate", "render", "render/*", "chargeback"},
	"internal/crdcheck":   nil,
	"internal/diagtest":   nil,
	"internal/examples":   nil,
	"internal/goldentest": {"load", "agreement", "validate", "plan", "render", "render/*", "gpu"},
	"internal/plantest":   {"load", "agreement", "validate"},
	// The tests' shared agreements, as TOML or planned from it: never a
	// renderer, so that no step's test fixtures depend on a backend.
	"internal/sourcetest": {"render", "render/*"},
	"load":                {"agreement", "validate", "plan", "render", "render/*"},
	"plan":                {"validate", "load", "render", "render/*", "gpu"},
	"render":              {"load", "agreement", "validate", "render/*"},
	"render/guard":        {"load", "agreement", "validate", "render/*"},
	"render/kai":          {"load", "agreement", "validate", "render/*"},
	"render/kueue":        {"load", "agreement", "validate", "render/*"},
	"render/monitor":      {"load", "agreement", "validate", "render/*"},
	"render/namespaces":   {"load", "agreement", "validate", "render/*"},
	"render/windowctl":    {"load", "agreement", "validate", "render/*"},
	"synthetic":           {"load", "agreement", "validate", "plan", "render", "render/*"},
	"validate":            {"render", "render/*", "load", "plan", "encode", "gpu"},
	"windows":             {"load", "agreement", "validate", "plan", "render", "render/*", "gpu", "chargeback", "schedule"},
	"schedule":            {"load", "agreement", "validate", "render", "render/*", "chargeback"},
}

// TestLayers keeps the pipeline's steps apart by their direct imports: a
// family never reads TOML (the decoded agreement included) and never imports
// another family, validation never builds Kubernetes objects, planning reads
// the decoded agreement without calling back into validation, and the
// chargeback model and the vocabulary import no renderer.
func TestLayers(t *testing.T) {
	const mod = "github.com/tenancy-dev/tenancy/generator"
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", mod+"/...").Output()
	if err != nil {
		t.Fatalf("go list %s/...: %v", mod, err)
	}
	rel := func(path string) (string, bool) {
		if path == mod {
			return "", true
		}
		return strings.CutPrefix(path, mod+"/")
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, _ := rel(fields[0])
		seen[pkg] = true
		if strings.HasPrefix(pkg, "render/") && !slices.Contains(families, pkg) {
			t.Errorf("generator/%s is not among the families: every package under render/ keeps render.Family's contract", pkg)
		}
		not, listed := layers[pkg]
		if !listed {
			t.Errorf("package generator/%s is not in TestLayers' table: add it with the packages it must not import", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			dep, ok := rel(imp)
			if !ok {
				continue
			}
			forbidden := slices.Contains(not, dep) ||
				slices.Contains(not, "render/*") && slices.Contains(families, dep) && dep != pkg
			if forbidden {
				t.Errorf("generator/%s imports generator/%s", pkg, dep)
			}
		}
	}
	for pkg := range layers {
		if !seen[pkg] {
			t.Errorf("TestLayers lists generator/%s, which go list does not find", pkg)
		}
	}
	for _, f := range families {
		if _, ok := layers[f]; !ok {
			t.Errorf("family %s is not in the table", f)
		}
	}
}

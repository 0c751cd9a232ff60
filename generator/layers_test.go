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
var families = []string{"render/guard", "render/kai", "render/kueue", "render/monitor", "render/multikueue", "render/namespaces", "render/windowctl"}

// layers lists every package under generator/ with the packages of the
// module it must not import directly. A package missing from it fails
// TestLayers, so a new package says where it stands. "render/*" stands for
// every family.
var layers = map[string][]string{
	"":           nil, // the facade: it wires every step
	"agreement":  {"validate", "plan", "render", "render/*", "gpu"},
	"chargeback": {"load", "agreement", "validate", "render", "render/*"},
	// Contention reads a plan and the vocabulary; its backends' trees are
	// written from the renderers' rules, never by importing them.
	"contention":          {"load", "agreement", "validate", "render", "render/*", "chargeback"},
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
	// Reads included files and merges their trees, before decoding.
	"include": {"agreement", "validate", "plan", "render", "render/*", "gpu"},
	// Review dates, judged on the plan at a date handed in.
	"review": {"load", "agreement", "validate", "render", "render/*", "gpu"},
	// Who answers for each part and file, from the plan.
	"owners": {"load", "agreement", "validate", "render", "render/*", "gpu"},
	// An agreement against less hardware, on the plan.
	"capacity":          {"load", "agreement", "validate", "render", "render/*"},
	"plan":              {"validate", "load", "render", "render/*", "gpu"},
	"render":            {"load", "agreement", "validate", "render/*"},
	"render/guard":      {"load", "agreement", "validate", "render/*"},
	"render/kai":        {"load", "agreement", "validate", "render/*"},
	"render/kueue":      {"load", "agreement", "validate", "render/*"},
	"render/monitor":    {"load", "agreement", "validate", "render/*"},
	"render/namespaces": {"load", "agreement", "validate", "render/*"},
	"render/windowctl":  {"load", "agreement", "validate", "render/*"},
	"render/multikueue": {"load", "agreement", "validate", "render/*"},
	// Kueue's API versions, for the families that render Kueue objects.
	"kueueapi":  {"load", "agreement", "validate", "plan", "render", "render/*"},
	"synthetic": {"load", "agreement", "validate", "plan", "render", "render/*"},
	"validate":  {"render", "render/*", "load", "plan", "encode", "gpu"},
	"windows":   {"load", "agreement", "validate", "plan", "render", "render/*", "gpu", "chargeback", "schedule"},
	"schedule":  {"load", "agreement", "validate", "render", "render/*", "chargeback"},
}

// steps are the pipeline's steps and families, which only the facade wires:
// a wrapper calls the facade with options and never runs a step itself.
var steps = []string{"load", "include", "agreement", "validate", "plan", "encode", "render", "render/*", "schedule", "windows"}

// wrappers lists every package of the wrappers (cmd/, kustomize/, argocd/),
// by its path in the module, with the packages under generator/ it must not
// import directly (written as in layers; "*" is every one). A package
// missing from it fails TestLayers. No package under generator/ imports a
// wrapper.
var wrappers = map[string][]string{
	// The CLI: wiring. explain prints the plan a person reads (plan) and
	// KAI's PriorityClass values (render/kai, the one family it names);
	// help's did-you-mean is the agreement's (agreement.Suggest).
	"cmd/tenancy": append(exclude(steps, "plan", "agreement", "render/*", "schedule"), exclude(families, "render/kai")...),
	// The windows controller is handed the checked plan and computes the
	// state at an instant with generator.Windows; the backend's queue is its
	// descriptor's (gpu).
	"cmd/tenancy/internal/controller": exclude(steps, "plan"),
	// Leader election and the Prometheus client know no agreement.
	"cmd/tenancy/internal/lease":                   {"*"},
	"cmd/tenancy/internal/promrange":               exclude(all, "chargeback"),
	"cmd/tenancy/internal/promrange/promrangetest": {"*"},
	"kustomize":     steps,
	"argocd":        steps,
	"argocd/params": steps,
}

// all is every package of layers, for the wrappers that may import only a few.
var all = func() []string {
	out := []string{""}
	for pkg := range layers {
		out = append(out, pkg)
	}
	return out
}()

func exclude(list []string, allowed ...string) []string {
	return slices.DeleteFunc(slices.Clone(list), func(s string) bool { return slices.Contains(allowed, s) })
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
			if w, ok := strings.CutPrefix(imp, module+"/"); ok && wrapperDir(w) {
				t.Errorf("generator/%s imports the wrapper %s", pkg, w)
			}
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
	testWrappers(t)
}

const module = "github.com/tenancy-dev/tenancy"

func wrapperDir(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return first == "cmd" || first == "kustomize" || first == "argocd"
}

// testWrappers keeps the wrappers (cmd/, kustomize/, argocd/) to calling
// the library: each imports of generator/ only what the wrappers table
// allows it.
func testWrappers(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/cmd/...", module+"/kustomize/...", module+"/argocd/...").Output()
	if err != nil {
		t.Fatalf("go list the wrappers: %v", err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module+"/")
		seen[pkg] = true
		not, listed := wrappers[pkg]
		if !listed {
			t.Errorf("package %s is not in TestLayers' wrappers table: add it with the packages of generator/ it must not import", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			dep, ok := strings.CutPrefix(imp, module+"/generator")
			if !ok || dep != "" && dep[0] != '/' {
				continue
			}
			dep = strings.TrimPrefix(dep, "/")
			forbidden := slices.Contains(not, "*") || slices.Contains(not, dep) ||
				slices.Contains(not, "render/*") && slices.Contains(families, dep)
			if forbidden {
				t.Errorf("%s imports generator/%s: a wrapper calls the facade", pkg, dep)
			}
		}
	}
	for pkg := range wrappers {
		if !seen[pkg] {
			t.Errorf("TestLayers' wrappers table lists %s, which go list does not find", pkg)
		}
	}
}

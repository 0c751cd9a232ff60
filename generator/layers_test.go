package generator_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLayers keeps the pipeline's steps apart by their direct imports: a
// renderer never reads TOML, validation never builds Kubernetes objects, and
// planning reads the decoded agreement (with its defaults) without calling
// back into validation.
func TestLayers(t *testing.T) {
	const mod = "github.com/tenancy-dev/tenancy/generator/"
	forbidden := map[string][]string{
		"plan":         {"validate", "load", "render"},
		"validate":     {"render", "load", "plan", "encode"},
		"agreement":    {"validate", "plan", "render"},
		"render":       {"load", "agreement", "validate"},
		"render/kueue": {"load", "agreement", "validate"},
		"render/kai":   {"load", "validate"},
		"encode":       {"load", "agreement", "validate", "plan"},
	}
	for pkg, not := range forbidden {
		out, err := exec.Command("go", "list", "-f", "{{join .Imports \" \"}}", mod+pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		deps := map[string]bool{}
		for _, d := range strings.Fields(string(out)) {
			deps[d] = true
		}
		for _, n := range not {
			if deps[mod+n] {
				t.Errorf("%s depends on %s", pkg, n)
			}
		}
	}
}

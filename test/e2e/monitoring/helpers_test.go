package monitoring_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// example is the agreement the suite renders: one flavor of 32 H100s,
// training (12 guaranteed, lends 4, borrows 12), research (12, lends 12)
// and inference (4, lends nothing); 4 GPUs unassigned; 2.5 EUR a GPU-hour.
const example = "generator/testdata/monitoring/tenancy.toml"

// tenancy runs the tenancy binary and returns its stdout.
func tenancy(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(tools.tenancy, args...)
	cmd.Dir = tools.root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tenancy %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// rendered returns the rendered objects of a kind, decoded.
func rendered(t *testing.T, backend, kind string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, doc := range strings.Split(string(tenancy(t, "render", "--backend", backend, example)), "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatal(err)
		}
		if obj["kind"] == kind {
			out = append(out, obj)
		}
	}
	if len(out) == 0 {
		t.Fatalf("tenancy render --backend %s renders no %s", backend, kind)
	}
	return out
}

// ruleFile writes the PrometheusRule's groups as a Prometheus rule file
// (JSON is YAML) and returns its path.
func ruleFile(t *testing.T, backend string) string {
	t.Helper()
	spec := rendered(t, backend, "PrometheusRule")[0]["spec"]
	data, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rules-"+backend+".yaml")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// run runs a program and fails the test with its output when it fails.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out)
}

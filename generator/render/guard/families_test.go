package guard

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// TestFamiliesCoverKueue: the families hold every integration Kueue enables
// in the configuration it ships (config/components/manager in the Kueue
// module this project builds against), so a kind the next Kueue release adds
// fails here until the policy covers it.
func TestFamiliesCoverKueue(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kueue").Output()
	if err != nil {
		t.Fatalf("go list -m sigs.k8s.io/kueue: %v", err)
	}
	path := filepath.Join(strings.TrimSpace(string(out)), "config", "components", "manager", "controller_manager_config.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("Kueue's default configuration: %v", err)
	}
	var cfg struct {
		Integrations struct {
			Frameworks []string `json:"frameworks"`
		} `json:"integrations"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(cfg.Integrations.Frameworks) == 0 {
		t.Fatalf("%s lists no integrations", path)
	}
	want := slices.Sorted(slices.Values(cfg.Integrations.Frameworks))
	var got []string
	for _, f := range families {
		if f.kueue != "" {
			got = append(got, f.kueue)
		}
	}
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("families' Kueue integrations vs %s (-want,+got):\n%s", path, diff)
	}
}

// TestUnqueuedKinds: DaemonSets and ReplicationControllers have no queue
// under either backend; ReplicaSets have none under Kueue only.
func TestUnqueuedKinds(t *testing.T) {
	if diff := cmp.Diff([]string{"daemonsets", "replicasets", "replicationcontrollers"}, unqueued("kueue")); diff != "" {
		t.Errorf("Kueue (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"daemonsets", "replicationcontrollers"}, unqueued("kai")); diff != "" {
		t.Errorf("KAI (-want,+got):\n%s", diff)
	}
}

package main

import (
	"strings"
	"testing"
)

// TestFleetCommands: --cluster on render, check and explain, and the exit
// status of each refusal: a fleet without --cluster, a cluster the
// agreement lacks, --cluster on an agreement of one cluster and KAI on the
// manager are usage errors (2), with nothing on stdout.
func TestFleetCommands(t *testing.T) {
	const fleet = "../../examples/fleet/tenancy.toml"
	tests := map[string]struct {
		args       []string
		wantCode   int
		wantStdout []string
		wantStderr string
	}{
		"render the manager":      {args: []string{"render", "--cluster", "hub", fleet}, wantStdout: []string{"kind: MultiKueueConfig\n", "controllerName: kueue.x-k8s.io/multikueue\n"}},
		"render a worker":         {args: []string{"render", "--cluster", "east", fleet}, wantStdout: []string{"kind: ClusterQueue\n"}},
		"render a worker for KAI": {args: []string{"render", "--backend", "kai", "--cluster", "west", fleet}, wantStdout: []string{"kind: Queue\n"}},
		"render without --cluster": {args: []string{"render", fleet}, wantCode: exitUsage,
			wantStderr: "tenancy: invalid options: ../../examples/fleet/tenancy.toml is a fleet of clusters: say which part to render with --cluster (one of hub, east, west)\n"},
		"render an unknown cluster": {args: []string{"render", "--cluster", "north", fleet}, wantCode: exitUsage,
			wantStderr: "tenancy: invalid options: --cluster asks for cluster \"north\", which ../../examples/fleet/tenancy.toml does not have: its parts are hub, east, west\n"},
		"render the manager for KAI": {args: []string{"render", "--backend", "kai", "--cluster", "hub", fleet}, wantCode: exitUsage,
			wantStderr: "KAI has no multi-cluster dispatch"},
		"render one cluster's agreement with --cluster": {args: []string{"render", "--cluster", "east", "../../tenancy.toml"}, wantCode: exitUsage,
			wantStderr: "has no [clusters]: render it without a cluster"},
		"check every part":  {args: []string{"check", fleet}, wantStderr: "tenancy.toml: valid\n"},
		"check one part":    {args: []string{"check", "--cluster", "west", fleet}, wantStderr: "tenancy.toml: valid\n"},
		"explain the fleet": {args: []string{"explain", fleet}, wantStdout: []string{"Fleet: manager hub, 2 workers", "  training   16/8/0  0/0/8  16\n"}},
		"explain a worker":  {args: []string{"explain", "--cluster", "east", fleet}, wantStdout: []string{"Cluster east of the fleet (a worker"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runIn(".", tc.args...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.wantCode, stderr)
			}
			if tc.wantCode != exitOK && stdout != "" {
				t.Errorf("stdout %q, want nothing on a refusal", stdout)
			}
			for _, w := range tc.wantStdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			if !strings.Contains(stderr, tc.wantStderr) {
				t.Errorf("stderr %q, want it to contain %q", stderr, tc.wantStderr)
			}
		})
	}
}

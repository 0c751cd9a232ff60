package diff

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tenancy-dev/tenancy/generator"
)

// fleetManager is the manager's part of a fleet of two workers of 16 h100
// each: the fleet-wide numbers, and a MultiKueueCluster per worker.
func fleetManager(training int64, workers ...string) *generator.Result {
	r := agreement("gpu-pool", h100(32),
		team("research", quota("h100", 8, 8, 8)),
		team("training", quota("h100", training, 8, 8)))
	for _, w := range workers {
		r.Objects = append(r.Objects, object("MultiKueueCluster", "", w, map[string]any{
			"clusterSource": map[string]any{"kubeConfig": map[string]any{"locationType": "Secret", "location": w}},
		}))
	}
	return r
}

// fleetWorker is one worker's part: its shares of the two teams.
func fleetWorker(research, training int64) *generator.Result {
	return agreement("gpu-pool", h100(16),
		team("research", quota("h100", research, research, 8)),
		team("training", quota("h100", training, min(training, 4), 8)))
}

// fleetCases are fleets before and after a change, part by part; the
// golden files under testdata/fleet-* hold each report in every format.
var fleetCases = map[string][]Part{
	// training's fleet-wide guarantee stays 16, but 4 of it moves from
	// east to west: the manager does not change, both workers do.
	"fleet-share-moves": {
		{Cluster: "manager", Manager: true, Old: fleetManager(16, "east", "west"), New: fleetManager(16, "east", "west")},
		{Cluster: "east", Old: fleetWorker(4, 12), New: fleetWorker(4, 8)},
		{Cluster: "west", Old: fleetWorker(4, 4), New: fleetWorker(4, 8)},
	},
	// research's borrow grows past what anyone can lend: every cluster
	// warns alike, said once for the fleet; east alone warns of its gang.
	"fleet-warnings": {
		{Cluster: "hub", Manager: true, Old: fleetManager(16, "east", "west"),
			New: withWarning(fleetManager(16, "east", "west"), "teams.research.borrow", "borrows up to 12 GPUs but only 8 are lendable")},
		{Cluster: "east", Old: fleetWorker(4, 8),
			New: withWarning(withWarning(fleetWorker(4, 8), "teams.research.borrow", "borrows up to 12 GPUs but only 8 are lendable"),
				"teams.training.clusters", "the largest gang training's guarantee admits is 8 GPUs")},
		{Cluster: "west", Old: fleetWorker(4, 8),
			New: withWarning(fleetWorker(4, 8), "teams.research.borrow", "borrows up to 12 GPUs but only 8 are lendable")},
	},
	// A third worker joins: the manager gains its MultiKueueCluster, the
	// worker's part is added whole, the others are as they were.
	"fleet-cluster-added": {
		{Cluster: "manager", Manager: true, Old: fleetManager(16, "east", "west"), New: fleetManager(16, "east", "north", "west")},
		{Cluster: "east", Old: fleetWorker(4, 8), New: fleetWorker(4, 8)},
		{Cluster: "north", New: fleetWorker(0, 0)},
		{Cluster: "west", Old: fleetWorker(4, 8), New: fleetWorker(4, 8)},
	},
}

func TestFleetGolden(t *testing.T) {
	for name, parts := range fleetCases {
		t.Run(name, func(t *testing.T) {
			r, err := CompareFleet("old/tenancy.toml", "new/tenancy.toml", parts)
			if err != nil {
				t.Fatal(err)
			}
			js, err := FleetJSON(r)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", name, "diff.txt"), FleetText(r, false))
			golden(t, filepath.Join("testdata", name, "diff.color.txt"), FleetText(r, true))
			golden(t, filepath.Join("testdata", name, "diff.md"), FleetMarkdown(r, 0))
			golden(t, filepath.Join("testdata", name, "diff.json"), js)
		})
	}
}

// TestCompareFleet: each cluster's op and counts, and the fleet's sums.
func TestCompareFleet(t *testing.T) {
	type cluster struct {
		Name   string
		Op     Op
		Counts Counts
		Losses []Loss
	}
	for name, tc := range map[string]struct {
		want        []cluster
		wantCounts  Counts
		wantChanged bool
	}{
		"fleet-share-moves": {
			want: []cluster{
				{"manager", Unchanged, Counts{Unchanged: 6}, []Loss{}},
				{"east", Changed, Counts{Changed: 1, Unchanged: 3}, []Loss{{Team: "training", Flavor: "h100", Old: 12, New: 8}}},
				{"west", Changed, Counts{Changed: 1, Unchanged: 3}, []Loss{}},
			},
			wantCounts: Counts{Changed: 2, Unchanged: 12}, wantChanged: true,
		},
		"fleet-cluster-added": {
			want: []cluster{
				{"manager", Changed, Counts{Added: 1, Unchanged: 6}, []Loss{}},
				{"east", Unchanged, Counts{Unchanged: 4}, []Loss{}},
				{"north", Added, Counts{Added: 4}, []Loss{}},
				{"west", Unchanged, Counts{Unchanged: 4}, []Loss{}},
			},
			wantCounts: Counts{Added: 5, Unchanged: 14}, wantChanged: true,
		},
	} {
		t.Run(name, func(t *testing.T) {
			r, err := CompareFleet("old", "new", fleetCases[name])
			if err != nil {
				t.Fatal(err)
			}
			var got []cluster
			for _, c := range r.Clusters {
				got = append(got, cluster{c.Cluster, c.Op, c.Report.Counts, c.Report.Summary.Losses})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("clusters (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCounts, r.Counts); diff != "" {
				t.Errorf("counts (-want,+got):\n%s", diff)
			}
			if r.Changed != tc.wantChanged {
				t.Errorf("Changed = %v, want %v", r.Changed, tc.wantChanged)
			}
		})
	}
}

func TestCompareFleetRefusesNoParts(t *testing.T) {
	if _, err := CompareFleet("old", "new", nil); err == nil {
		t.Fatal("CompareFleet of no parts succeeded")
	}
	if _, err := CompareFleet("old", "new", []Part{{Cluster: "east"}}); err == nil || !strings.Contains(err.Error(), "cluster east") {
		t.Fatalf("err = %v, want one naming cluster east, absent on both sides", err)
	}
}

func TestFleetParts(t *testing.T) {
	for name, tc := range map[string]struct {
		old, new    []string
		want        []string
		wantManager []string
	}{
		"same fleet":         {old: []string{"hub", "east", "west"}, new: []string{"hub", "east", "west"}, want: []string{"hub", "east", "west"}, wantManager: []string{"hub"}},
		"worker added":       {old: []string{"hub", "west"}, new: []string{"hub", "east", "west"}, want: []string{"hub", "east", "west"}, wantManager: []string{"hub"}},
		"worker removed":     {old: []string{"hub", "east", "west"}, new: []string{"hub", "west"}, want: []string{"hub", "east", "west"}, wantManager: []string{"hub"}},
		"manager renamed":    {old: []string{"manager", "east"}, new: []string{"hub", "east"}, want: []string{"hub", "manager", "east"}, wantManager: []string{"hub", "manager"}},
		"fleet from nothing": {old: nil, new: []string{"manager", "west", "east"}, want: []string{"manager", "east", "west"}, wantManager: []string{"manager"}},
		"fleet to nothing":   {old: []string{"manager", "east"}, new: nil, want: []string{"manager", "east"}, wantManager: []string{"manager"}},
	} {
		t.Run(name, func(t *testing.T) {
			got, manager := FleetParts(tc.old, tc.new)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parts (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantManager, sortedKeys(manager)); diff != "" {
				t.Errorf("managers (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestFleetMarkdownCutsObjectsFirst: a comment cut to its limit keeps every
// cluster's summary and says how many object diffs it left out.
func TestFleetMarkdownCutsObjectsFirst(t *testing.T) {
	r, err := CompareFleet("old", "new", fleetCases["fleet-cluster-added"])
	if err != nil {
		t.Fatal(err)
	}
	full := string(FleetMarkdown(r, 0))
	at := strings.Index(full, "### Manifests")
	if at < 0 {
		t.Fatalf("no manifests section:\n%s", full)
	}
	cut := string(FleetMarkdown(r, at+500))
	for _, want := range []string{"Cluster `manager` (manager)", "Cluster `north` (worker): joins the fleet", "Cluster `west` (worker)", "0 of 5 object diffs shown."} {
		if !strings.Contains(cut, want) {
			t.Errorf("cut comment lacks %q:\n%s", want, cut)
		}
	}
	if strings.Contains(cut, "summary above is cut short") {
		t.Errorf("the summaries were cut:\n%s", cut)
	}
}

package plan_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/internal/sourcetest"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

func TestLargestRemainder(t *testing.T) {
	tests := map[string]struct {
		total   int64
		weights []int64
		want    []int64
	}{
		"even":                     {total: 16, weights: []int64{16, 16}, want: []int64{8, 8}},
		"proportional":             {total: 12, weights: []int64{24, 8}, want: []int64{9, 3}},
		"remainder to the largest": {total: 10, weights: []int64{1, 1, 1}, want: []int64{4, 3, 3}},
		"ties to the first":        {total: 1, weights: []int64{8, 8}, want: []int64{1, 0}},
		"largest fraction first":   {total: 5, weights: []int64{3, 5}, want: []int64{2, 3}},
		"no weight":                {total: 4, weights: []int64{0, 0}, want: []int64{0, 0}},
		"nothing to split":         {total: 0, weights: []int64{3, 5}, want: []int64{0, 0}},
		"no overflow":              {total: 1 << 53, weights: []int64{1 << 53, 1 << 53}, want: []int64{1 << 52, 1 << 52}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, plan.LargestRemainder(tc.total, tc.weights)); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
		})
	}
}

// fleet is a pool of 48 H100s in east (32) and west (16), managed by hub.
const fleet = `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 48
[clusters.hub]
manager = true
[clusters.west]
flavors = { h100 = 16 }
kubeconfig_secret = "west-kubeconfig"
dispatcher = "system:serviceaccount:kueue-system:west-dispatcher"
[clusters.east]
flavors = { h100 = 32 }
`

// TestSplit: each team's shares per worker, written or split by default,
// and the parts' plans: the manager's the whole agreement with the
// MultiKueue AdmissionCheck, a worker's its capacity and shares.
func TestSplit(t *testing.T) {
	tests := map[string]struct {
		team string
		want []plan.Share
	}{
		"by default, in proportion to the workers' GPUs": {team: `[teams.a]
guaranteed = 12
lendable = 5
borrow = 30
`, want: []plan.Share{
			{Cluster: "east", Guaranteed: 8, Lendable: 3, Borrow: 24},
			{Cluster: "west", Guaranteed: 4, Lendable: 2, Borrow: 12},
		}},
		"the guarantee written, lendable following it": {team: `[teams.a]
guaranteed = 16
lendable = 8
borrow = 8
clusters = { west = 16 }
`, want: []plan.Share{
			{Cluster: "east", Guaranteed: 0, Lendable: 0, Borrow: 8},
			{Cluster: "west", Guaranteed: 16, Lendable: 8, Borrow: 0},
		}},
		"every count written": {team: `[teams.a]
guaranteed = 16
lendable = 8
borrow = 8
[teams.a.clusters.east]
guaranteed = 10
lendable = 2
borrow = 1
[teams.a.clusters.west]
guaranteed = 6
lendable = 6
`, want: []plan.Share{
			{Cluster: "east", Guaranteed: 10, Lendable: 2, Borrow: 1},
			{Cluster: "west", Guaranteed: 6, Lendable: 6, Borrow: 0},
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := plan.Build(sourcetest.Decode(t, fleet+tc.team))
			got := p.Teams[0].Quotas[0].Shares
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(plan.Share{}, "Origin")); diff != "" {
				t.Errorf("shares (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"hub", "east", "west"}, p.Parts()); diff != "" {
				t.Errorf("parts (-want,+got):\n%s", diff)
			}
			hub := p.Part("hub")
			if !hub.IsManager() || hub.Teams[0].Quotas[0].Guaranteed != p.Teams[0].Quotas[0].Guaranteed {
				t.Errorf("the manager's part is not the whole agreement: %+v", hub.Teams[0].Quotas)
			}
			if diff := cmp.Diff([]string{"gpu-pool"}, hub.AdmissionChecks); diff != "" {
				t.Errorf("the manager's AdmissionChecks (-want,+got):\n%s", diff)
			}
			for i, share := range tc.want {
				w := p.Part(share.Cluster)
				want := plan.Quota{Flavor: "h100", Guaranteed: share.Guaranteed, Lendable: share.Lendable, Borrow: share.Borrow}
				if diff := cmp.Diff(want, w.Teams[0].Quotas[0], cmpopts.IgnoreFields(plan.Quota{}, "Origin")); diff != "" {
					t.Errorf("%s's quota (-want,+got):\n%s", share.Cluster, diff)
				}
				if w.IsManager() || len(w.AdmissionChecks) > 0 || w.Flavors[0].Capacity != p.Fleet.Workers[i].Capacity[0].GPUs {
					t.Errorf("%s's part: manager %v, checks %v, capacity %d", share.Cluster, w.IsManager(), w.AdmissionChecks, w.Flavors[0].Capacity)
				}
			}
			if p.Part("north") != nil {
				t.Error("a part of a cluster the fleet lacks")
			}
			if p.Teams[0].Quotas[0].Guaranteed != 0 && p.Flavors[0].Capacity != 48 {
				t.Error("Part changed the whole plan")
			}
		})
	}
}

// TestBuildFleet: workers sorted, each with its capacity per flavor and
// kubeconfig Secret (its name by default) and dispatcher (Kueue's
// multikueue-sa by default); the manager's name; the worker a part is;
// nil without [clusters].
func TestBuildFleet(t *testing.T) {
	p := plan.Build(sourcetest.Decode(t, fleet+"[teams.a]\n"))
	want := &plan.Fleet{Manager: "hub", AdmissionCheck: "gpu-pool", Workers: []plan.Worker{
		{Name: "east", KubeconfigSecret: "east", Dispatcher: "system:serviceaccount:kueue-system:multikueue-sa", Capacity: []plan.Capacity{{Flavor: "h100", GPUs: 32}}},
		{Name: "west", KubeconfigSecret: "west-kubeconfig", Dispatcher: "system:serviceaccount:kueue-system:west-dispatcher", Capacity: []plan.Capacity{{Flavor: "h100", GPUs: 16}}},
	}}
	ignore := cmpopts.IgnoreTypes(diag.Origin{})
	if diff := cmp.Diff(want, p.Fleet, ignore); diff != "" {
		t.Errorf("fleet (-want,+got):\n%s", diff)
	}
	for part, want := range map[string]string{"hub": "", "east": "east", "west": "west"} {
		var got string
		if w := p.Part(part).Worker(); w != nil {
			got = w.Name
		}
		if got != want {
			t.Errorf("part %s is worker %q, want %q", part, got, want)
		}
	}
	if p.Worker() != nil {
		t.Errorf("the whole agreement is worker %+v", p.Worker())
	}
	if p := plan.Build(sourcetest.Decode(t, twoFlavors)); p.Fleet != nil || p.Parts() != nil {
		t.Errorf("an agreement without [clusters] has a fleet: %+v", p.Fleet)
	}
	unnamed := plan.Build(sourcetest.Decode(t, "version = 1\nname = \"p\"\n[flavors.h100]\ncapacity = 8\n[clusters.east]\nflavors = { h100 = 8 }\n"))
	if diff := cmp.Diff([]string{"manager", "east"}, unnamed.Parts()); diff != "" {
		t.Errorf("parts without a named manager (-want,+got):\n%s", diff)
	}
}

package gpu_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/internal/plantest"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

func TestPerUnit(t *testing.T) {
	tests := map[string]int64{
		"nvidia.com/gpu":                            1,
		"nvidia.com/mig-1g.10gb":                    1,
		"nvidia.com/mig-3g.40gb":                    3,
		"nvidia.com/mig-7g.80gb":                    7,
		"nvidia.com/mig-1g.10gb+":                   0, // not a profile KAI parses
		"nvidia.com/mig-1g":                         0,
		"nvidia.com/gpu.shared":                     0,
		"amd.com/gpu":                               0,
		"nvidiaXcom/mig-2g.20gb":                    0,
		"nvidia.com/mig-99999999999999999999g.10gb": 0, // KAI's Atoi fails
	}
	for resource, want := range tests {
		if got := gpu.PerUnit(resource); got != want {
			t.Errorf("PerUnit(%q) = %d, want %d", resource, got, want)
		}
	}
}

func TestMIGProfile(t *testing.T) {
	tests := map[string]string{
		"nvidia.com/mig-1g.10gb": "1g.10gb",
		"nvidia.com/mig-7g.80gb": "7g.80gb",
		"nvidia.com/gpu":         "",
		"nvidia.com/mig-1g":      "",
	}
	for resource, want := range tests {
		got, ok := gpu.MIGProfile(resource)
		if got != want || ok != (want != "") {
			t.Errorf("MIGProfile(%q) = %q, %v; want %q", resource, got, ok, want)
		}
	}
}

func TestInGPUs(t *testing.T) {
	tests := []struct {
		resource string
		n, want  int64
	}{
		{"nvidia.com/gpu", 8, 8},
		{"nvidia.com/mig-3g.40gb", 7, 21},
		{"amd.com/gpu", 8, 0},
		{"nvidia.com/mig-7g.80gb", gpu.MaxExact, gpu.MaxExact}, // saturates
	}
	for _, tc := range tests {
		if got := gpu.InGPUs(tc.resource, tc.n); got != tc.want {
			t.Errorf("InGPUs(%q, %d) = %d, want %d", tc.resource, tc.n, got, tc.want)
		}
	}
}

// TestSums: a team's and a flavor's sums, in units of each resource (as
// Kueue and the guardrails' ResourceQuota count) and in KAI's GPUs.
func TestSums(t *testing.T) {
	p := &plan.Agreement{
		Flavors: []plan.Flavor{plantest.H100(16), plantest.MIG(56)},
		Teams: []plan.Team{
			plantest.Team("a", plantest.Quota("h100", 8, 4, 2), plantest.Quota("a100-mig", 28, 0, 7)),
			plantest.Team("b", plantest.Quota("h100", 8, 8, 0), plantest.Quota("a100-mig", 0, 0, 0)),
		},
	}
	a := &p.Teams[0]
	tests := map[string]struct {
		got, want gpu.Sum
	}{
		"team, raw, every flavor": {gpu.TeamSum(p, a, gpu.Raw, nil), gpu.Sum{Guaranteed: 36, Lendable: 4, Borrow: 9}},
		"team, KAI GPUs":          {gpu.TeamSum(p, a, gpu.KAI.Units(), nil), gpu.Sum{Guaranteed: 36, Lendable: 4, Borrow: 9}},
		"team, one flavor":        {gpu.TeamSum(p, a, gpu.Raw, gpu.Flavor("h100")), gpu.Sum{Guaranteed: 8, Lendable: 4, Borrow: 2}},
		"team, one resource":      {gpu.TeamSum(p, a, gpu.Raw, gpu.Resource("nvidia.com/mig-1g.10gb")), gpu.Sum{Guaranteed: 28, Borrow: 7}},
		"flavor, every team":      {gpu.FlavorSum(p, gpu.Raw, gpu.Flavor("h100")), gpu.Sum{Guaranteed: 16, Lendable: 12, Borrow: 2}},
		"flavor, Kueue units":     {gpu.FlavorSum(p, gpu.Kueue.Units(), nil), gpu.Sum{Guaranteed: 44, Lendable: 12, Borrow: 9}},
	}
	for name, tc := range tests {
		if diff := cmp.Diff(tc.want, tc.got); diff != "" {
			t.Errorf("%s (-want,+got):\n%s", name, diff)
		}
	}
	if got := gpu.Capacity(p, gpu.InGPUs, nil); got != 72 {
		t.Errorf("Capacity in KAI GPUs = %d, want 72", got)
	}
	if s := gpu.TeamSum(p, a, gpu.Raw, gpu.Flavor("a100-mig")); !s.NeverLends() || s.MostUsable() != 35 {
		t.Errorf("a's MIG sum %+v: want never lending, most usable 35", s)
	}
}

// TestSumsInKAIGPUs: a MIG slice of N compute units counts N GPUs.
func TestSumsInKAIGPUs(t *testing.T) {
	p := &plan.Agreement{
		Flavors: []plan.Flavor{{Name: "mig3", Resource: "nvidia.com/mig-3g.40gb", Capacity: 7}},
		Teams:   []plan.Team{plantest.Team("a", plantest.Quota("mig3", 4, 2, 1))},
	}
	want := gpu.Sum{Guaranteed: 12, Lendable: 6, Borrow: 3}
	if diff := cmp.Diff(want, gpu.TeamSum(p, &p.Teams[0], gpu.KAI.Units(), nil)); diff != "" {
		t.Errorf("(-want,+got):\n%s", diff)
	}
	if got := gpu.Capacity(p, gpu.Kueue.Units(), nil); got != 7 {
		t.Errorf("Kueue capacity = %d, want 7 slices", got)
	}
}

func TestAlternation(t *testing.T) {
	tests := map[string]struct {
		in   []string
		want string
	}{
		"names":       {[]string{"training", "research-1"}, "training|research-1"},
		"MIG profile": {[]string{"1g.10gb", "3g.40gb"}, `1g\.10gb|3g\.40gb`},
		"resources":   {[]string{"nvidia.com/gpu"}, `nvidia\.com/gpu`},
		"none":        {nil, ""},
	}
	for name, tc := range tests {
		if got := gpu.Alternation(tc.in); got != tc.want {
			t.Errorf("%s: Alternation(%q) = %q, want %q", name, tc.in, got, tc.want)
		}
	}
}

package kai_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"sigs.k8s.io/yaml"

	"github.com/tenancy-dev/tenancy/generator/internal/plantest"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render/kai"
)

func TestClassValues(t *testing.T) {
	pre := func(name string, v int32) plan.Priority {
		return plan.Priority{Name: name, Value: v, Preemptible: true}
	}
	non := func(name string, v int32) plan.Priority { return plan.Priority{Name: name, Value: v} }
	tests := map[string]struct {
		ranks []plan.Priority
		want  map[string]int64
	}{
		"the reference agreement, all preemptible: renumbered below 100 in order": {
			ranks: []plan.Priority{pre("critical", 1000), pre("standard", 100), pre("scavenger", 10)},
			want:  map[string]int64{"critical": 99, "standard": 98, "scavenger": 97},
		},
		"already in KAI's bands: as written": {
			ranks: []plan.Priority{non("inference", 125), non("build", 100), pre("interactive", 75), pre("train", 50)},
			want:  map[string]int64{"inference": 125, "build": 100, "interactive": 75, "train": 50},
		},
		"one band as written, the other renumbered": {
			ranks: []plan.Priority{non("critical", 1000), pre("standard", 100), pre("scavenger", 10)},
			want:  map[string]int64{"critical": 1000, "standard": 99, "scavenger": 98},
		},
		"non-preemptible below 100: renumbered from 100 up, lowest first": {
			ranks: []plan.Priority{non("critical", 50), non("prod", 20), pre("batch", 10)},
			want:  map[string]int64{"critical": 101, "prod": 100, "batch": 10},
		},
		"equal values stay equal": {
			ranks: []plan.Priority{pre("a", 500), pre("b", 500), pre("c", -3)},
			want:  map[string]int64{"a": 99, "b": 99, "c": 98},
		},
		"above what Kubernetes accepts: renumbered": {
			ranks: []plan.Priority{non("huge", 2_000_000_000), non("big", 1000)},
			want:  map[string]int64{"huge": 101, "big": 100},
		},
		"negative preemptible values are in the band": {
			ranks: []plan.Priority{pre("low", -100), pre("lower", -2_000_000_000)},
			want:  map[string]int64{"low": -100, "lower": -2_000_000_000},
		},
		"no priorities": {
			want: map[string]int64{},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := kai.ClassValues(tc.ranks)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ClassValues (-want,+got):\n%s", diff)
			}
			// Whatever the input, the band says what preemptible says.
			for _, r := range tc.ranks {
				if v := got[r.Name]; (v < kai.NonPreemptibleFrom) != r.Preemptible {
					t.Errorf("%s: value %d is in the wrong KAI band for preemptible=%v", r.Name, v, r.Preemptible)
				}
			}
		})
	}
}

// referencePriorityClasses renders the reference agreement's priorities
// (critical, non-preemptible; standard and scavenger, preemptible) and
// returns the PriorityClasses as rendered.
func referencePriorityClasses(t *testing.T) []schedulingv1.PriorityClass {
	t.Helper()
	p := plantest.Pool([]plan.Flavor{plantest.H100(8)}, plantest.Team("a", plantest.Quota("h100", 8, 8, 0)))
	p.Priorities = []plan.Priority{
		{Name: "critical", Value: 1000},
		{Name: "standard", Value: 100, Preemptible: true},
		{Name: "scavenger", Value: 10, Preemptible: true},
	}
	var out []schedulingv1.PriorityClass
	for _, o := range rendered(t, p, "PriorityClass") {
		var pc schedulingv1.PriorityClass
		if err := yaml.Unmarshal(o.YAML, &pc); err != nil {
			t.Fatal(err)
		}
		out = append(out, pc)
	}
	return out
}

// TestPriorityClassValues: the rendered PriorityClasses carry ClassValues'
// numbers, so KAI's band follows each priority's preemptible.
func TestPriorityClassValues(t *testing.T) {
	got := map[string]int32{}
	for _, pc := range referencePriorityClasses(t) {
		got[pc.Name] = pc.Value
	}
	want := map[string]int32{"critical": 1000, "standard": 99, "scavenger": 98}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PriorityClass values (-want,+got):\n%s", diff)
	}
}

// TestDefaultPriority: work naming no priority gets the lowest preemptible
// priority, as under Kueue (priority 0, may borrow, may be preempted).
func TestDefaultPriority(t *testing.T) {
	tests := map[string]struct {
		ranks []plan.Priority
		want  string
	}{
		"the lowest preemptible": {
			ranks: []plan.Priority{{Name: "critical", Value: 1000}, {Name: "standard", Value: 100, Preemptible: true}, {Name: "scavenger", Value: 10, Preemptible: true}},
			want:  "scavenger",
		},
		"a lower non-preemptible one is not it": {
			ranks: []plan.Priority{{Name: "low", Value: 1}, {Name: "batch", Value: 50, Preemptible: true}},
			want:  "batch",
		},
		"equal values: the first by name": {
			ranks: []plan.Priority{{Name: "b", Value: 5, Preemptible: true}, {Name: "a", Value: 5, Preemptible: true}},
			want:  "a",
		},
		"no preemptible priority: none": {
			ranks: []plan.Priority{{Name: "prod", Value: 1000}},
		},
		"no priorities: none": {},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := kai.DefaultPriority(tc.ranks); got != tc.want {
				t.Errorf("DefaultPriority = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestPriorityClassGlobalDefault: exactly the default priority's class is
// the cluster's globalDefault.
func TestPriorityClassGlobalDefault(t *testing.T) {
	var defaults []string
	for _, pc := range referencePriorityClasses(t) {
		if pc.GlobalDefault {
			defaults = append(defaults, pc.Name)
		}
	}
	if diff := cmp.Diff([]string{"scavenger"}, defaults); diff != "" {
		t.Errorf("globalDefault PriorityClasses (-want,+got):\n%s", diff)
	}
}

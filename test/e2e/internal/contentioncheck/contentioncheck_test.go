package contentioncheck

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCompare(t *testing.T) {
	s := Scenario{Name: "busy a,b", Busy: []string{"a", "b"}, Want: map[Key]Share{
		{"a", "h100"}: {16, 16},
		{"b", "h100"}: {8, 12},
		{"c", "h100"}: {0, 0},
	}}
	for _, tc := range []struct {
		name string
		got  map[Key]int64
		ok   bool
		want []string
	}{
		{"equal and within", map[Key]int64{{"a", "h100"}: 16, {"b", "h100"}: 12}, true, []string{
			"a/h100: admitted 16, explain 16 (decided: must be equal)",
			"b/h100: admitted 12, explain 8-12 (a range, as the arrival order decides: must be within)",
			"c/h100: admitted 0, explain 0 (decided: must be equal)",
		}},
		{"decided missed, range left, unlisted admitted", map[Key]int64{{"a", "h100"}: 15, {"b", "h100"}: 13, {"a", "a100"}: 1}, false, []string{
			"MISMATCH a/a100: admitted 1, explain does not list it (0)",
			"MISMATCH a/h100: admitted 15, explain 16 (decided: must be equal)",
			"MISMATCH b/h100: admitted 13, explain 8-12 (a range, as the arrival order decides: must be within)",
			"c/h100: admitted 0, explain 0 (decided: must be equal)",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines, ok := Compare(s, tc.got)
			if ok != tc.ok {
				t.Errorf("ok = %v, want %v", ok, tc.ok)
			}
			if diff := cmp.Diff(tc.want, lines); diff != "" {
				t.Errorf("(-want,+got)\n%s", diff)
			}
		})
	}
}

func TestScenarios(t *testing.T) {
	r := &Report{Backend: "kueue", Flavors: []Flavor{{Flavor: "h100", Teams: []Outcome{
		{Team: "a", Alone: Share{24, 24}, AllBusy: Share{16, 16}},
		{Team: "b", Alone: Share{16, 16}, AllBusy: Share{8, 8}},
	}}}}
	want := []Scenario{
		{Name: "a alone", Busy: []string{"a"}, Want: map[Key]Share{{"a", "h100"}: {24, 24}, {"b", "h100"}: {}}},
		{Name: "b alone", Busy: []string{"b"}, Want: map[Key]Share{{"a", "h100"}: {}, {"b", "h100"}: {16, 16}}},
		{Name: "all busy", Busy: []string{"a", "b"}, Want: map[Key]Share{{"a", "h100"}: {16, 16}, {"b", "h100"}: {8, 8}}},
	}
	if diff := cmp.Diff(want, Scenarios(r)); diff != "" {
		t.Errorf("(-want,+got)\n%s", diff)
	}
	if _, err := BusyScenario(r, []string{"a"}); err == nil {
		t.Error("BusyScenario of a report without a busy set: no error")
	}
}

package diff

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/diag"
)

// TestCompareWarnings: a warning on the same field that says the same but
// for its numbers is changed, with its numbers before → after; one whose
// words differ is new; one that stays, at another line, is neither.
func TestCompareWarnings(t *testing.T) {
	w := func(line int, field, msg string) generator.Diagnostic {
		return generator.Diagnostic{Severity: diag.Warning, File: "tenancy.toml", Pos: diag.Pos{Line: line, Column: 10}, Path: fieldPath(field), Message: msg}
	}
	borrow := func(line int, can int) generator.Diagnostic {
		return w(line, "teams.research.borrow", "borrow (6) exceeds the "+strconv.Itoa(can)+" GPUs of flavor h100 the other teams can lend: at most "+strconv.Itoa(can)+" can ever be borrowed")
	}
	type result struct {
		New     []string
		Changed []string
	}
	tests := map[string]struct {
		old, new []generator.Diagnostic
		want     result
	}{
		"the same warning at another line": {
			old: []generator.Diagnostic{borrow(20, 5)}, new: []generator.Diagnostic{borrow(22, 5)},
		},
		"a number changed": {
			old: []generator.Diagnostic{borrow(20, 5)}, new: []generator.Diagnostic{borrow(21, 4)},
			want: result{Changed: []string{"tenancy.toml:21:10: teams.research.borrow: borrow (6) exceeds the 5 → 4 GPUs of flavor h100 the other teams can lend: at most 5 → 4 can ever be borrowed"}},
		},
		"a flavor's digits are not a number": {
			old:  []generator.Diagnostic{w(3, "teams.a.borrow", "flavor h100 is short")},
			new:  []generator.Diagnostic{w(3, "teams.a.borrow", "flavor h200 is short")},
			want: result{New: []string{"tenancy.toml:3:10: teams.a.borrow: flavor h200 is short"}},
		},
		"another field is new": {
			old:  []generator.Diagnostic{borrow(20, 5)},
			new:  []generator.Diagnostic{borrow(20, 5), w(30, "teams.training.borrow", "borrow (6) exceeds the 5 GPUs of flavor h100 the other teams can lend: at most 5 can ever be borrowed")},
			want: result{New: []string{"tenancy.toml:30:10: teams.training.borrow: borrow (6) exceeds the 5 GPUs of flavor h100 the other teams can lend: at most 5 can ever be borrowed"}},
		},
		"a gone warning is neither": {
			old: []generator.Diagnostic{borrow(20, 5)},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			added, changed := compareWarnings(tc.old, tc.new)
			var got result
			for _, a := range added {
				got.New = append(got.New, a.Text())
			}
			for _, c := range changed {
				got.Changed = append(got.Changed, c.Text())
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want,+got):\n%s", d)
			}
		})
	}
}

package diag

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pelletier/go-toml/v2"
)

// TestString: a suggestion follows the compiler-style line, each of its
// lines indented, so the first line is still the one editors match.
func TestString(t *testing.T) {
	d := Diagnostic{File: "tenancy.toml", Pos: Pos{Line: 3, Column: 1}, Message: "is required",
		Suggestion: "[flavors.h100]\ncapacity = 32\n"}
	want := "tenancy.toml:3:1: is required\n    [flavors.h100]\n    capacity = 32"
	if diff := cmp.Diff(want, d.String()); diff != "" {
		t.Errorf("String (-want,+got):\n%s", diff)
	}
}

// TestTOMLKey: keys a suggestion writes read back as the same key.
func TestTOMLKey(t *testing.T) {
	for _, key := range []string{"h100", "team-a", "nvidia.com/gpu", `a"b\c`, "tab\there", "bell\a", "ünï"} {
		var got map[string]any
		if err := toml.Unmarshal([]byte(TOMLKey(key)+" = 1"), &got); err != nil {
			t.Errorf("TOMLKey(%q) = %s: %v", key, TOMLKey(key), err)
			continue
		}
		if _, ok := got[key]; !ok || len(got) != 1 {
			t.Errorf("TOMLKey(%q) = %s reads back as %v", key, TOMLKey(key), got)
		}
	}
}

func TestLineFrom(t *testing.T) {
	tests := map[string]struct {
		p, at Pos
		want  string
	}{
		"both in the agreement's file":   {Pos{Line: 3}, Pos{Line: 9}, "line 3"},
		"both in one included file":      {Pos{Line: 3, File: "teams/a.toml"}, Pos{Line: 9, File: "teams/a.toml"}, "line 3"},
		"in the agreement's file":        {Pos{Line: 3}, Pos{Line: 9, File: "teams/a.toml"}, "line 3 of tenancy.toml"},
		"in another included file":       {Pos{Line: 3, File: "teams/b.toml"}, Pos{Line: 9, File: "teams/a.toml"}, "line 3 of teams/b.toml"},
		"in an included file, from root": {Pos{Line: 3, File: "teams/b.toml"}, Pos{Line: 9}, "line 3 of teams/b.toml"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.p.LineFrom(tc.at, "tenancy.toml")); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
		})
	}
}

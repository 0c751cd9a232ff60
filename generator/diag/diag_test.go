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

package diff

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNormalizeIsTheJSONRoundTrip holds the direct conversion to what the
// JSON round trip gives, for every kind of value the encoder writes and
// for those left to encoding/json.
func TestNormalizeIsTheJSONRoundTrip(t *testing.T) {
	tests := map[string]map[string]any{
		"empty":              {},
		"scalars":            {"s": "x", "n": int64(-7), "big": int64(math.MaxInt64), "t": true, "f": false, "null": nil},
		"nested":             {"spec": map[string]any{"items": []any{map[string]any{"a": int64(1)}, "b", []any{}}}},
		"nil map and slice":  {"m": map[string]any(nil), "s": []any(nil), "e": map[string]any{}},
		"html characters":    {"expr": "a < b && c > d", "k<&>": "v"},
		"float":              {"f": 1.5, "g": 1e21, "h": float64(3)},
		"not UTF-8":          {"s": "a\xffb"},
		"key not UTF-8":      {"a\xffb": "s"},
		"another type":       {"s": []string{"a", "b"}, "i": 3},
		"unicode":            {"s": "é\u2028"},
		"deep null in array": {"a": []any{nil, map[string]any(nil)}},
	}
	for name, fields := range tests {
		t.Run(name, func(t *testing.T) {
			want, err := roundTrip(fields)
			if err != nil {
				t.Fatal(err)
			}
			got, err := normalize(fields)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("normalize (-round trip,+got):\n%s", diff)
			}
		})
	}
}

// TestSameFieldsNeedNotBeUTF8 holds an object whose strings and keys are
// not UTF-8 unchanged when both sides have it, by sameFields alone, as
// normalizing both sides says.
func TestSameFieldsNeedNotBeUTF8(t *testing.T) {
	fields := func() map[string]any {
		return map[string]any{"a\xffb": "s", "m": map[string]any{"s": "a\xffb", "l": []any{"c\xfe", int64(1), true, nil}}}
	}
	if !sameFields(fields(), fields()) {
		t.Fatal("sameFields is false for two copies of one object")
	}
	a, err := normalize(fields())
	if err != nil {
		t.Fatal(err)
	}
	b, err := normalize(fields())
	if err != nil {
		t.Fatal(err)
	}
	if changes := compareFields(a, b); len(changes) > 0 {
		t.Errorf("normalized, the copies differ: %v", changes)
	}
}

package encode

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// decodeWithEncodingJSON is what decodeObject must always equal.
func decodeWithEncodingJSON(t *testing.T, data []byte) (map[string]any, error) {
	t.Helper()
	var fields map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	err := dec.Decode(&fields)
	return fields, err
}

func TestDecodeObjectEqualsEncodingJSON(t *testing.T) {
	tests := map[string]struct {
		data string
	}{
		"empty object":        {`{}`},
		"scalars":             {`{"s":"a","i":16,"n":-3,"f":1.5e3,"t":true,"f2":false,"z":null}`},
		"nested":              {`{"metadata":{"name":"training","labels":{"a":"b"}},"spec":{"list":[{"x":1},[],{},"s",2]}}`},
		"empty collections":   {`{"a":[],"b":{},"c":[[]],"d":[{}]}`},
		"escapes":             {`{"q":"say \"hi\"\\","u":"\u003cb\u003e \u0026 \u2028","k\"ey":"v","nl":"a\nb\tc"}`},
		"surrogate pair":      {`{"e":"\ud83d\ude00"}`},
		"utf-8":               {`{"é":"ünïcode ✓"}`},
		"whitespace":          {" { \"a\" : [ 1 , 2 ] ,\n\"b\":\t{ } } "},
		"repeated keys":       {`{"a":1,"a":2}`},
		"interned twice":      {`{"a":"x","b":{"a":"x"},"x":"a"}`},
		"big number":          {`{"n":123456789012345678901234567890}`},
		"not an object":       {`[1,2]`},
		"truncated":           {`{"a":[1,2`},
		"trailing comma":      {`{"a":1,}`},
		"bad literal":         {`{"a":tru}`},
		"bad number":          {`{"a":1.}`},
		"control character":   {"{\"a\":\"x\ty\"}"},
		"unterminated string": {`{"a":"x`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			want, wantErr := decodeWithEncodingJSON(t, []byte(tc.data))
			got, err := decodeObject([]byte(tc.data), newInterner())
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("error = %v, want %v", err, wantErr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("decodeObject (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestDecodeObjectKeepsStringsApart guards the interner: equal strings may
// share memory, but a map from one object must not be another's.
func TestDecodeObjectKeepsStringsApart(t *testing.T) {
	strs := newInterner()
	a, err := decodeObject([]byte(`{"metadata":{"name":"x"}}`), strs)
	if err != nil {
		t.Fatal(err)
	}
	b, err := decodeObject([]byte(`{"metadata":{"name":"x"}}`), strs)
	if err != nil {
		t.Fatal(err)
	}
	a["metadata"].(map[string]any)["name"] = "changed"
	if diff := cmp.Diff(map[string]any{"metadata": map[string]any{"name": "x"}}, b); diff != "" {
		t.Errorf("second object (-want,+got):\n%s", diff)
	}
}

package diff

import (
	"encoding/json"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
)

// listKeys are the fields that identify an element of a list of objects, in
// the order they are tried: Kubernetes "listType=map" lists in the objects we
// render (Kueue flavors and resources, Topology levels) are keyed by these. A
// list is keyed only when every element on both sides has the field as a
// string and no two elements on one side share it; otherwise elements are
// named by index.
var listKeys = []string{"name", "nodeLabel"}

// compareFields returns the changed leaves between two normalized objects.
func compareFields(a, b any) []FieldChange {
	var out []FieldChange
	compareValue(nil, a, b, &out)
	return out
}

// pathString is a field path as a FieldChange names it; the root is "".
func pathString(p *field.Path) string {
	if p == nil {
		return ""
	}
	return p.String()
}

func compareValue(path *field.Path, a, b any, out *[]FieldChange) {
	switch av := a.(type) {
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			compareMaps(path, av, bv, out)
			return
		}
	case []any:
		if bv, ok := b.([]any); ok && isObjectList(av) && isObjectList(bv) {
			compareLists(path, av, bv, out)
			return
		}
	}
	if !equal(a, b) {
		c := FieldChange{Path: pathString(path), Op: Changed, Old: a, New: b}
		as, aok := a.(string)
		bs, bok := b.(string)
		if aok && bok && (strings.Contains(as, "\n") || strings.Contains(bs, "\n")) {
			c.Lines = textDiff(as, bs)
		}
		*out = append(*out, c)
	}
}

func compareMaps(path *field.Path, a, b map[string]any, out *[]FieldChange) {
	union := map[string]bool{}
	for k := range a {
		union[k] = true
	}
	for k := range b {
		union[k] = true
	}
	for _, k := range sortedKeys(union) {
		p := diag.Key(path, k)
		av, inA := a[k]
		bv, inB := b[k]
		switch {
		case !inA:
			leaves(p, bv, Added, "", out)
		case !inB:
			leaves(p, av, Removed, "", out)
		default:
			compareValue(p, av, bv, out)
		}
	}
}

// leaves reports a value that exists on one side only as one change per
// leaf, so a flavor added to a ClusterQueue reads
// flavors[a100].resources[nvidia.com/gpu].nominalQuota: (unset) → 16 rather
// than as one long line of JSON. skip is the key field of a keyed list
// element, already named in the path.
func leaves(path *field.Path, v any, op Op, skip string, out *[]FieldChange) {
	before := len(*out)
	switch v := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(v) {
			if k != skip {
				leaves(diag.Key(path, k), v[k], op, "", out)
			}
		}
	case []any:
		if isObjectList(v) {
			key := listKey(v, v)
			for i, e := range v {
				if key != "" {
					leaves(path.Key(e.(map[string]any)[key].(string)), e, op, key, out)
				} else {
					leaves(path.Index(i), e, op, "", out)
				}
			}
		}
	}
	if len(*out) > before {
		return
	}
	// A scalar, a list of scalars, or something empty: one change.
	c := FieldChange{Path: pathString(path), Op: op}
	if op == Added {
		c.New = v
	} else {
		c.Old = v
	}
	*out = append(*out, c)
}

// compareLists compares lists of objects by key when they are keyed, by
// index otherwise. Lists of scalars are compared whole by compareValue: a
// changed coveredResources reads better as one before → after line.
func compareLists(path *field.Path, a, b []any, out *[]FieldChange) {
	key := listKey(a, b)
	if key == "" {
		for i := 0; i < max(len(a), len(b)); i++ {
			p := path.Index(i)
			switch {
			case i >= len(a):
				leaves(p, b[i], Added, "", out)
			case i >= len(b):
				leaves(p, a[i], Removed, "", out)
			default:
				compareValue(p, a[i], b[i], out)
			}
		}
		return
	}
	byKey := func(l []any) map[string]any {
		m := map[string]any{}
		for _, e := range l {
			m[e.(map[string]any)[key].(string)] = e
		}
		return m
	}
	am, bm := byKey(a), byKey(b)
	// Elements in the new order, then the removed ones in the old order.
	for _, e := range b {
		k := e.(map[string]any)[key].(string)
		p := path.Key(k)
		if old, ok := am[k]; ok {
			compareValue(p, old, e, out)
		} else {
			leaves(p, e, Added, key, out)
		}
	}
	for _, e := range a {
		k := e.(map[string]any)[key].(string)
		if _, ok := bm[k]; !ok {
			leaves(path.Key(k), e, Removed, key, out)
		}
	}
}

func isObjectList(l []any) bool {
	for _, e := range l {
		if _, ok := e.(map[string]any); !ok {
			return false
		}
	}
	return true
}

// listKey returns the field both lists are keyed by, or "".
func listKey(a, b []any) string {
	for _, key := range listKeys {
		if uniqueBy(a, key) && uniqueBy(b, key) {
			return key
		}
	}
	return ""
}

func uniqueBy(l []any, key string) bool {
	seen := map[string]bool{}
	for _, e := range l {
		s, ok := e.(map[string]any)[key].(string)
		if !ok || seen[s] {
			return false
		}
		seen[s] = true
	}
	return true
}

// formatValue prints a value for a field change: scalars as YAML would show
// them, objects and lists as compact JSON.
func formatValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		if v == "" || strings.TrimSpace(v) != v || strings.ContainsAny(v, "\n→") {
			b, _ := json.Marshal(v)
			return string(b)
		}
		return v
	case json.Number:
		return v.String()
	case int64:
		return strconv.FormatInt(v, 10)
	case bool:
		if v {
			return "true"
		}
		return "false"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(b)
}

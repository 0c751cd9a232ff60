package render

import (
	"encoding/base64"
	"fmt"
	"reflect"

	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// walk converts a typed value to unstructured content the way
// structured-merge-diff's value.NewValueReflect(obj).Unstructured() does,
// from the same field cache (value.TypeReflectEntryOf: JSON names, inlined
// structs, omitempty and omitzero, and the types' own ToUnstructured or
// MarshalJSON), without wrapping every field in a value.Value: that walk
// allocated a wrapper per field and was a third of explain --contention's CPU
// at 10,000 teams (docs/bench.md). Each step below is the one of the
// library's valueReflect.reuse and Unstructured it names; a value that walk
// would refuse (a kind JSON cannot hold, a converter's error) panics here,
// and FromTyped then takes the library's own walk, so an error says what it
// said before. TestWalkIsTheLibrarys holds the two to equal output on every
// object every agreement of the repository renders.
func walk(v reflect.Value, e *value.TypeReflectCacheEntry) any {
	if e == nil {
		e = value.TypeReflectEntryOf(v.Type())
	}
	// reuse: a type with its own conversion is replaced by its result.
	if e.CanConvertToUnstructured() {
		u, err := e.ToUnstructured(v)
		if err != nil {
			panic(err)
		}
		if u == nil {
			return nil
		}
		v = reflect.ValueOf(u)
	}
	// dereference: one pointer or interface.
	if k := v.Kind(); k == reflect.Interface || k == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Struct:
		// The map is made for the fields that are there, not for all the
		// type has: ObjectMeta has 16 and an object sets three or four, and
		// a map sized for 16 is most of what a rendering allocates.
		type field struct {
			name  string
			value any
		}
		kept := make([]field, 0, 16)
		for _, f := range value.TypeReflectEntryOf(v.Type()).OrderedFields() {
			fv := f.GetFrom(v)
			if f.CanOmit(fv) {
				continue
			}
			kept = append(kept, field{f.JsonName, walk(fv, f.TypeEntry)})
		}
		out := make(map[string]any, len(kept))
		for _, f := range kept {
			out[f.name] = f.value
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		out := make(map[string]any, v.Len())
		if v.Len() == 0 {
			return out
		}
		elem := value.TypeReflectEntryOf(v.Type().Elem())
		for it := v.MapRange(); it.Next(); {
			next := it.Value()
			if !next.IsValid() {
				continue
			}
			out[it.Key().String()] = walk(next, elem)
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return base64.StdEncoding.EncodeToString(v.Bytes())
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = walk(v.Index(i), nil)
		}
		return out
	case reflect.String:
		return v.String()
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Int16, reflect.Int8:
		return v.Int()
	case reflect.Uint, reflect.Uint32, reflect.Uint16, reflect.Uint8:
		return int64(v.Uint())
	case reflect.Bool:
		return v.Bool()
	case reflect.Float64, reflect.Float32:
		return v.Float()
	}
	panic(fmt.Sprintf("unsupported type: %v", v.Type()))
}

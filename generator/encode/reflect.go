package encode

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// fromGo converts a typed API object straight to the plain maps that
// json.Marshal followed by a json.Decoder with UseNumber gives, without the
// JSON in between: that round trip was most of the cost of rendering many
// teams. It follows encoding/json's rules for the shapes Kubernetes API
// types have (tags with omitempty and omitzero, inlined embedded structs,
// pointers, slices, string-keyed maps, json.Marshaler such as
// resource.Quantity). On anything else (floats, []byte, the string option,
// text marshalers, clashing field names, invalid UTF-8) ok is false and the
// caller takes the JSON route, so the result is always what encoding/json
// gives.
func fromGo(body any, strs *interner) (fields map[string]any, ok bool) {
	c := converter{strs: strs}
	v, ok := c.value(reflect.ValueOf(body), 0)
	if !ok {
		return nil, false
	}
	fields, ok = v.(map[string]any)
	return fields, ok
}

type converter struct {
	strs *interner
}

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	isZeroerType      = reflect.TypeFor[interface{ IsZero() bool }]()
)

// maxDepth bounds the recursion; API objects are far shallower, and
// encoding/json handles anything deeper (or cyclic) itself.
const maxDepth = 64

func (c *converter) value(v reflect.Value, depth int) (any, bool) {
	if !v.IsValid() {
		return nil, true
	}
	if depth > maxDepth {
		return nil, false
	}
	t := v.Type()
	// The order of encoding/json's newTypeEncoder: MarshalJSON on the
	// address when the value is addressable, MarshalJSON on the value, then
	// text marshalers, then the kind.
	m := methodsOf(t)
	if m.addrMarshaler && v.CanAddr() {
		return c.marshaler(v.Addr())
	}
	if m.marshaler {
		if t.Kind() == reflect.Interface {
			return nil, false
		}
		if t.Kind() == reflect.Pointer && v.IsNil() {
			return nil, true
		}
		return c.marshaler(v)
	}
	if m.textMarshaler || m.addrTextMarshaler && v.CanAddr() {
		return nil, false
	}

	switch t.Kind() {
	case reflect.String:
		s := v.String()
		if !utf8.ValidString(s) {
			return nil, false // json.Marshal would replace the invalid bytes
		}
		return c.strs.valueString(s), true
	case reflect.Bool:
		return v.Bool(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		var buf [24]byte
		return c.strs.number(strconv.AppendInt(buf[:0], v.Int(), 10)), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		var buf [24]byte
		return c.strs.number(strconv.AppendUint(buf[:0], v.Uint(), 10)), true
	case reflect.Pointer:
		if v.IsNil() {
			return nil, true
		}
		return c.value(v.Elem(), depth+1)
	case reflect.Interface:
		if t.NumMethod() > 0 {
			return nil, false
		}
		if v.IsNil() {
			return nil, true
		}
		return c.value(v.Elem(), depth+1)
	case reflect.Struct:
		return c.structValue(v, depth)
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, false
		}
		if v.IsNil() {
			return nil, true
		}
		out := make(map[string]any, v.Len())
		for it := v.MapRange(); it.Next(); {
			key := it.Key().String()
			if !utf8.ValidString(key) {
				return nil, false
			}
			e, ok := c.value(it.Value(), depth+1)
			if !ok {
				return nil, false
			}
			out[key] = e
		}
		return out, true
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil, false // []byte is base64
		}
		if v.IsNil() {
			return nil, true
		}
		return c.items(v, depth)
	case reflect.Array:
		return c.items(v, depth)
	}
	return nil, false // floats, complex numbers, channels, functions
}

// methods says which marshaling methods a type has; looking them up is
// slow enough to cache.
type methods struct {
	marshaler, addrMarshaler         bool
	textMarshaler, addrTextMarshaler bool
}

var methodCache sync.Map // reflect.Type → methods

func methodsOf(t reflect.Type) methods {
	if m, ok := methodCache.Load(t); ok {
		return m.(methods)
	}
	notPointer := t.Kind() != reflect.Pointer
	m := methods{
		marshaler:         t.Implements(marshalerType),
		addrMarshaler:     notPointer && reflect.PointerTo(t).Implements(marshalerType),
		textMarshaler:     t.Implements(textMarshalerType),
		addrTextMarshaler: notPointer && reflect.PointerTo(t).Implements(textMarshalerType),
	}
	methodCache.Store(t, m)
	return m
}

func (c *converter) items(v reflect.Value, depth int) (any, bool) {
	out := make([]any, v.Len())
	for i := range out {
		e, ok := c.value(v.Index(i), depth+1)
		if !ok {
			return nil, false
		}
		out[i] = e
	}
	return out, true
}

// marshaler calls MarshalJSON and reads what it wrote.
func (c *converter) marshaler(v reflect.Value) (any, bool) {
	m, ok := v.Interface().(json.Marshaler)
	if !ok {
		return nil, false
	}
	data, err := m.MarshalJSON()
	if err != nil {
		return nil, false // json.Marshal reports it
	}
	r := jsonReader{data: data, ok: true, strs: c.strs}
	out := r.value()
	r.space()
	if !r.ok || r.pos != len(data) {
		return nil, false
	}
	return out, true
}

func (c *converter) structValue(v reflect.Value, depth int) (any, bool) {
	info := structInfoOf(v.Type())
	if !info.ok {
		return nil, false
	}
	// Most fields of API structs are omitted; the map is sized for those
	// that are not.
	type field struct {
		name  string
		value any
	}
	var small [16]field
	kept := small[:0]
fields:
	for i := range info.fields {
		f := &info.fields[i]
		fv := v
		for _, idx := range f.index {
			if fv.Kind() == reflect.Pointer {
				if fv.IsNil() {
					continue fields // a nil embedded pointer has no fields
				}
				fv = fv.Elem()
			}
			fv = fv.Field(idx)
		}
		if f.omitEmpty && isEmptyValue(fv) || f.omitZero && f.isZero(fv) {
			continue
		}
		e, ok := c.value(fv, depth+1)
		if !ok {
			return nil, false
		}
		kept = append(kept, field{f.name, e})
	}
	out := make(map[string]any, len(kept))
	for _, f := range kept {
		out[f.name] = f.value
	}
	return out, true
}

// isEmptyValue is encoding/json's test for omitempty.
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64,
		reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// structInfo is what encoding/json's typeFields finds in a struct type, for
// the types fromGo supports.
type structInfo struct {
	ok     bool
	fields []fieldInfo
}

type fieldInfo struct {
	name      string
	index     []int // through inlined embedded structs
	omitEmpty bool
	omitZero  bool
	isZero    func(reflect.Value) bool
}

var structInfos sync.Map // reflect.Type → *structInfo

func structInfoOf(t reflect.Type) *structInfo {
	if info, ok := structInfos.Load(t); ok {
		return info.(*structInfo)
	}
	info := &structInfo{ok: true}
	names := map[string]bool{}
	info.ok = collectFields(t, nil, info, names, 0)
	structInfos.Store(t, info)
	return info
}

// collectFields walks t's fields, inlining embedded structs without a tag
// name as encoding/json does. It gives up (false) where encoding/json's
// rules get subtle: unexported embedded types, clashing names at any depth,
// the string option and tag names encoding/json would ignore.
func collectFields(t reflect.Type, index []int, info *structInfo, names map[string]bool, depth int) bool {
	if depth > maxDepth {
		return false
	}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		fieldIndex := append(index[:len(index):len(index)], i)
		if sf.Anonymous {
			if !sf.IsExported() {
				return false
			}
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if name == "" && ft.Kind() == reflect.Struct {
				if !collectFields(ft, fieldIndex, info, names, depth+1) {
					return false
				}
				continue
			}
		} else if !sf.IsExported() {
			continue
		}
		if name != "" && !isValidTag(name) {
			return false
		}
		if name == "" {
			name = sf.Name
		}
		if hasOption(opts, "string") || names[name] {
			return false
		}
		names[name] = true
		f := fieldInfo{name: name, index: fieldIndex, omitEmpty: hasOption(opts, "omitempty"), omitZero: hasOption(opts, "omitzero")}
		if f.omitZero {
			f.isZero = zeroTest(sf.Type)
		}
		info.fields = append(info.fields, f)
	}
	return true
}

func hasOption(opts, want string) bool {
	for opts != "" {
		var opt string
		opt, opts, _ = strings.Cut(opts, ",")
		if opt == want {
			return true
		}
	}
	return false
}

// isValidTag is encoding/json's rule for a usable tag name.
func isValidTag(s string) bool {
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c > 127):
			return false
		}
	}
	return true
}

// zeroTest is encoding/json's test for omitzero: the type's IsZero method
// when it has one, reflect's zero value otherwise.
func zeroTest(t reflect.Type) func(reflect.Value) bool {
	switch {
	case t.Kind() == reflect.Interface && t.Implements(isZeroerType):
		return func(v reflect.Value) bool {
			return v.IsNil() || (v.Elem().Kind() == reflect.Pointer && v.Elem().IsNil()) ||
				v.Interface().(interface{ IsZero() bool }).IsZero()
		}
	case t.Kind() == reflect.Pointer && t.Implements(isZeroerType):
		return func(v reflect.Value) bool {
			return v.IsNil() || v.Interface().(interface{ IsZero() bool }).IsZero()
		}
	case t.Implements(isZeroerType):
		return func(v reflect.Value) bool { return v.Interface().(interface{ IsZero() bool }).IsZero() }
	case reflect.PointerTo(t).Implements(isZeroerType):
		return func(v reflect.Value) bool {
			if !v.CanAddr() {
				v2 := reflect.New(v.Type()).Elem()
				v2.Set(v)
				v = v2
			}
			return v.Addr().Interface().(interface{ IsZero() bool }).IsZero()
		}
	}
	return reflect.Value.IsZero
}

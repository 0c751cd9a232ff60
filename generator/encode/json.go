package encode

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// decodeObject turns what json.Marshal wrote for an object into plain maps:
// the values a json.Decoder with UseNumber gives (map[string]any, []any,
// string, json.Number, bool and nil). Rendering spends most of its time
// here, and the input is json.Marshal's own compact, valid output, so a
// direct reader is several times faster than the general decoder. Anything
// it does not expect sends the whole object to json.Decoder instead, so the
// result is always what json.Decoder gives.
func decodeObject(data []byte, strs *interner) (map[string]any, error) {
	r := jsonReader{data: data, ok: true, strs: strs}
	v := r.value()
	r.space()
	if m, isMap := v.(map[string]any); r.ok && isMap && r.pos == len(data) {
		return m, nil
	}
	var fields map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&fields); err != nil {
		return nil, err
	}
	return fields, nil
}

// jsonReader reads one JSON value; ok turns false at the first byte it does
// not expect, and the value read is then meaningless.
type jsonReader struct {
	data []byte
	pos  int
	ok   bool
	strs *interner
}

// interner hands out one copy of each string, and of each string value
// already in an interface: the keys and most values of a stream (apiVersion,
// metadata, labels, quantities, team names) repeat in many objects, and one
// copy each saves most of the decoder's allocations.
type interner struct {
	keys    map[string]string
	values  map[string]any // strings
	numbers map[string]any // json.Numbers
}

func newInterner() *interner {
	return &interner{keys: map[string]string{}, values: map[string]any{}, numbers: map[string]any{}}
}

func (in *interner) key(b []byte) string {
	if s, ok := in.keys[string(b)]; ok { // no allocation for the lookup
		return s
	}
	s := string(b)
	in.keys[s] = s
	return s
}

func (in *interner) value(b []byte) any {
	if v, ok := in.values[string(b)]; ok {
		return v
	}
	return in.valueString(string(b))
}

func (in *interner) valueString(s string) any {
	if v, ok := in.values[s]; ok {
		return v
	}
	var v any = s
	in.values[s] = v
	return v
}

func (in *interner) number(b []byte) any {
	if v, ok := in.numbers[string(b)]; ok {
		return v
	}
	n := string(b)
	var v any = json.Number(n)
	in.numbers[n] = v
	return v
}

func (r *jsonReader) fail() any {
	r.ok = false
	r.pos = len(r.data)
	return nil
}

func (r *jsonReader) space() {
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
		default:
			return
		}
	}
}

func (r *jsonReader) value() any {
	r.space()
	if r.pos >= len(r.data) {
		return r.fail()
	}
	switch c := r.data[r.pos]; {
	case c == '{':
		return r.object()
	case c == '[':
		return r.array()
	case c == '"':
		raw, plain, ok := r.string()
		switch {
		case !ok:
			return r.fail()
		case plain:
			return r.strs.value(raw)
		}
		return r.unquote(raw)
	case c == '-' || c >= '0' && c <= '9':
		return r.number()
	case c == 't':
		return r.literal("true", true)
	case c == 'f':
		return r.literal("false", false)
	case c == 'n':
		return r.literal("null", nil)
	}
	return r.fail()
}

func (r *jsonReader) literal(word string, v any) any {
	if !bytes.HasPrefix(r.data[r.pos:], []byte(word)) {
		return r.fail()
	}
	r.pos += len(word)
	return v
}

func (r *jsonReader) object() any {
	r.pos++ // {
	m := map[string]any{}
	r.space()
	if r.pos < len(r.data) && r.data[r.pos] == '}' {
		r.pos++
		return m
	}
	for r.ok {
		r.space()
		raw, plain, ok := r.string()
		if !ok {
			return r.fail()
		}
		var key string
		if plain {
			key = r.strs.key(raw)
		} else if key, ok = r.unquote(raw).(string); !ok {
			return r.fail()
		}
		r.space()
		if r.pos >= len(r.data) || r.data[r.pos] != ':' {
			return r.fail()
		}
		r.pos++
		m[key] = r.value()
		r.space()
		if r.pos >= len(r.data) {
			return r.fail()
		}
		switch r.data[r.pos] {
		case ',':
			r.pos++
		case '}':
			r.pos++
			return m
		default:
			return r.fail()
		}
	}
	return nil
}

func (r *jsonReader) array() any {
	r.pos++ // [
	items := []any{}
	r.space()
	if r.pos < len(r.data) && r.data[r.pos] == ']' {
		r.pos++
		return items
	}
	for r.ok {
		items = append(items, r.value())
		r.space()
		if r.pos >= len(r.data) {
			return r.fail()
		}
		switch r.data[r.pos] {
		case ',':
			r.pos++
		case ']':
			r.pos++
			return items
		default:
			return r.fail()
		}
	}
	return nil
}

// string reads a string and returns it with its quotes. plain strings,
// nearly all of them, have no escapes and are their bytes as they are.
func (r *jsonReader) string() (raw []byte, plain, ok bool) {
	if r.pos >= len(r.data) || r.data[r.pos] != '"' {
		return nil, false, false
	}
	start := r.pos
	escaped := false
	for i := start + 1; i < len(r.data); i++ {
		switch c := r.data[i]; {
		case c == '\\':
			escaped = true
			i++ // skip the escaped byte, which may be a quote
		case c == '"':
			r.pos = i + 1
			if escaped || !utf8.Valid(r.data[start+1:i]) {
				return r.data[start : i+1], false, true
			}
			return r.data[start+1 : i], true, true
		case c < 0x20:
			return nil, false, false
		}
	}
	return nil, false, false
}

// unquote leaves the rare string with escapes to encoding/json.
func (r *jsonReader) unquote(quoted []byte) any {
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		return r.fail()
	}
	return s
}

// number returns the number's text as a json.Number, as UseNumber does.
func (r *jsonReader) number() any {
	start := r.pos
	for r.pos < len(r.data) {
		switch c := r.data[r.pos]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			r.pos++
			continue
		}
		break
	}
	n := r.data[start:r.pos]
	if !json.Valid(n) {
		return r.fail()
	}
	return r.strs.number(n)
}

// Package encode turns rendered objects into canonical YAML: objects in a
// stable order, keys sorted, no status and no null timestamps, so the same
// agreement gives the same bytes on every run and machine.
package encode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tenancy-dev/tenancy/generator/render"
)

// Object is an encoded object.
type Object struct {
	render.Object
	Fields map[string]any
	YAML   []byte
}

// kindRank puts Namespaces first, then cluster-scoped kinds in the order
// they are referenced, then namespaced kinds, so a plain kubectl apply of the
// stream creates what each object needs before it.
var kindRank = map[string]int{
	"Namespace":             0,
	"PriorityClass":         1,
	"WorkloadPriorityClass": 1,
	"Topology":              2,
	"ResourceFlavor":        3,
	"Cohort":                4,
	"Queue":                 5,
	"ClusterQueue":          5,
	"LocalQueue":            6,
	"ResourceQuota":         7,
}

// Encode orders and encodes objects and returns them with the whole stream.
func Encode(objs []render.Object) ([]Object, []byte, error) {
	sorted := append([]render.Object(nil), objs...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if ra, rb := kindRank[a.Kind], kindRank[b.Kind]; ra != rb {
			return ra < rb
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		// KAI Queues keep the backend's order: parents before children.
		if a.Kind == "Queue" {
			return false
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})

	out := make([]Object, 0, len(sorted))
	var scratch bytes.Buffer // each object is written here, then copied once to its own slice
	size := 0
	seen := make(map[string]bool, len(sorted))
	strs := newInterner()
	for _, o := range sorted {
		id := o.APIVersion + "/" + o.Kind + "/" + o.Namespace + "/" + o.Name
		if seen[id] {
			return nil, nil, fmt.Errorf("two objects are both %s %s/%s", o.Kind, o.Namespace, o.Name)
		}
		seen[id] = true
		fields, err := toFields(o.Body, strs)
		if err != nil {
			return nil, nil, fmt.Errorf("encode %s %s: %w", o.Kind, o.Name, err)
		}
		if o.Adjust != nil {
			o.Adjust(fields)
		}
		scratch.Reset()
		writeMap(&scratch, fields, 0)
		yaml := bytes.Clone(scratch.Bytes())
		size += len(yaml)
		out = append(out, Object{Object: o, Fields: fields, YAML: yaml})
	}
	// The stream is allocated once at its exact size: growing a buffer of
	// many megabytes copies and faults in twice the memory.
	stream := make([]byte, 0, size+len("---\n")*max(len(out)-1, 0))
	for i, o := range out {
		if i > 0 {
			stream = append(stream, "---\n"...)
		}
		stream = append(stream, o.YAML...)
	}
	return out, stream, nil
}

// toFields converts a body to plain maps through JSON, as the API server
// sees it, then drops what a client must not send.
func toFields(body any, strs *interner) (map[string]any, error) {
	var fields map[string]any
	if m, ok := body.(map[string]any); ok {
		fields = normalize(m).(map[string]any)
	} else if f, ok := fromGo(body, strs); ok {
		fields = f
	} else {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		if fields, err = decodeObject(data, strs); err != nil {
			return nil, err
		}
	}
	delete(fields, "status")
	if meta, ok := fields["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	return fields, nil
}

// normalize turns Go-built maps into what a JSON decode would give, so both
// paths encode alike.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = e
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return out
	case int:
		return json.Number(strconv.Itoa(x))
	case int32:
		return json.Number(strconv.FormatInt(int64(x), 10))
	case int64:
		return json.Number(strconv.FormatInt(x, 10))
	}
	return v
}

func indent(b *bytes.Buffer, n int) {
	for i := 0; i < n; i++ {
		b.WriteString("  ")
	}
}

// writeMap writes a block mapping with sorted keys at the given depth.
func writeMap(b *bytes.Buffer, m map[string]any, depth int) {
	var small [16]string // most objects' maps fit: no allocation for the keys
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		// The caller has already placed the first key.
		if i > 0 {
			indent(b, depth)
		}
		writeScalarString(b, k)
		b.WriteByte(':')
		writeValue(b, m[k], depth)
	}
}

// writeValue writes what follows "key:" — inline for scalars and empty
// collections, on the next lines otherwise.
func writeValue(b *bytes.Buffer, v any, depth int) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			b.WriteString(" {}\n")
			return
		}
		b.WriteByte('\n')
		indent(b, depth+1)
		writeMap(b, x, depth+1)
	case []any:
		if len(x) == 0 {
			b.WriteString(" []\n")
			return
		}
		b.WriteByte('\n')
		// Sequences sit at their key's indentation, as kubectl writes them.
		writeSeq(b, x, depth)
	default:
		b.WriteByte(' ')
		writeScalar(b, v)
		b.WriteByte('\n')
	}
}

func writeSeq(b *bytes.Buffer, s []any, depth int) {
	for _, item := range s {
		indent(b, depth)
		b.WriteString("- ")
		switch x := item.(type) {
		case map[string]any:
			if len(x) == 0 {
				b.WriteString("{}\n")
				continue
			}
			writeMap(b, x, depth+1)
		case []any:
			if len(x) == 0 {
				b.WriteString("[]\n")
				continue
			}
			b.WriteString("\n")
			writeSeq(b, x, depth+1)
		default:
			writeScalar(b, item)
			b.WriteByte('\n')
		}
	}
}

// writeScalar writes scalar(v) without building the string first, for the
// values that are most of a stream.
func writeScalar(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case string:
		writeScalarString(b, x)
	case json.Number:
		b.WriteString(string(x))
	default:
		b.WriteString(scalar(v))
	}
}

func scalar(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return scalarString(x)
	}
	return scalarString(fmt.Sprint(v))
}

// ambiguous words a YAML 1.1 reader would not read as strings.
var ambiguous = map[string]bool{
	"true": true, "false": true, "yes": true, "no": true, "on": true, "off": true,
	"y": true, "n": true, "null": true, "~": true,
}

// scalarString writes a string plain when no YAML reader could take it for
// anything else, double-quoted otherwise.
func scalarString(s string) string {
	if plainSafe(s) && !isAmbiguous(s) {
		return s
	}
	return strconv.Quote(s)
}

// writeScalarString writes scalarString(s) without allocating.
func writeScalarString(b *bytes.Buffer, s string) {
	if plainSafe(s) && !isAmbiguous(s) {
		b.WriteString(s)
		return
	}
	b.Write(strconv.AppendQuote(b.AvailableBuffer(), s))
}

// isAmbiguous reports whether s is one of the ambiguous words, in any case.
// None is longer than five bytes, so longer strings skip the lowercasing.
func isAmbiguous(s string) bool {
	return len(s) <= len("false") && ambiguous[strings.ToLower(s)]
}

func plainSafe(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-' || c == '_' || c == '.' || c == '/':
		case c == ' ' || c == ',':
			// Plain in block context, but not at the end, where a reader
			// would trim it.
			if i == len(s)-1 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// Package encode turns rendered objects into canonical YAML: objects in a
// stable order, keys sorted, so the same agreement gives the same bytes on
// every run and machine.
//
// The YAML writer is the project's own: it writes only the values of
// unstructured content (maps, slices, strings, int64, float64, bool, nil),
// is about ten times faster than sigs.k8s.io/yaml on a rendering, and its
// output is read back by two YAML readers in the tests.
package encode

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tenancy-dev/tenancy/generator/render"
)

// kindRank orders the stream so that a plain kubectl apply creates what
// each object needs before it, in one pass: Namespaces first, then the
// cluster-scoped kinds in the order they are referenced, then what lives in
// the Namespaces (configuration, then the windows controller's identity and
// RBAC, then the Deployment that runs as it), and the admission policies
// last, so that everything a policy expects (LocalQueues, labelled
// Namespaces) exists before it starts refusing. Every kind a family renders
// has a rank (TestEveryRenderedKindIsRanked); a kind without one goes last
// (unranked), after everything it might refer to.
var kindRank = map[string]int{
	"Namespace":             0,
	"PriorityClass":         1,
	"WorkloadPriorityClass": 1,
	"Topology":              2,
	"ResourceFlavor":        3,
	// A fleet's manager (render/multikueue): the workers, the config
	// listing them, the AdmissionCheck naming the config, which the
	// ClusterQueues name.
	"MultiKueueCluster": 3,
	"MultiKueueConfig":  3,
	"AdmissionCheck":    4,
	"Cohort":            4,
	// A KAI node pool's shard, before the Queues carrying its label.
	"SchedulingShard": 4,
	"Queue":           5,
	"ClusterQueue":    5,
	"LocalQueue":      6,
	"ResourceQuota":   7,
	"NetworkPolicy":   7,
	// Monitoring (render/monitor) and the windows controller's agreement
	// (render/windowctl), in their namespaces.
	"ConfigMap":      7,
	"PrometheusRule": 7,
	// The windows controller (render/windowctl): its ServiceAccount, the
	// roles and the bindings naming both, then the Deployment whose pods
	// run as the ServiceAccount and mount the ConfigMap.
	"ServiceAccount":                   8,
	"ClusterRole":                      9,
	"Role":                             9,
	"ClusterRoleBinding":               10,
	"RoleBinding":                      10,
	"Deployment":                       11,
	"ValidatingAdmissionPolicy":        12,
	"ValidatingAdmissionPolicyBinding": 13,
}

// unranked is the rank of a kind kindRank does not name: after every kind
// it does.
const unranked = 14

// Rank returns a kind's place in the stream, and whether kindRank names
// the kind (false: it goes last, at unranked).
func Rank(kind string) (int, bool) {
	if r, ok := kindRank[kind]; ok {
		return r, true
	}
	return unranked, false
}

func rankOf(kind string) int {
	r, _ := Rank(kind)
	return r
}

// Duplicate is two rendered objects with one identity (apiVersion, kind,
// namespace and name): the API server holds one object per identity, so
// applying the stream would have the second overwrite the first.
type Duplicate struct {
	First, Second render.Object
}

func (d Duplicate) Error() string { return "two objects are both " + d.Identity() }

// Identity names the objects' kind, namespace and name, as in
// "LocalQueue ml/default" or "Namespace /tenancy-system".
func (d Duplicate) Identity() string {
	return d.Second.Kind() + " " + d.Second.Namespace() + "/" + d.Second.Name()
}

// Encode orders objects, writes each one's YAML, and returns them with the
// whole stream. Two objects with the same identity are an error (the first
// Duplicate). It is Order, then Write.
func Encode(objs []render.Object) ([]render.Object, []byte, error) {
	ordered, dups := Order(objs)
	if len(dups) > 0 {
		return nil, nil, dups[0]
	}
	return Write(ordered)
}

// Order returns objects in the stream's order (kindRank, then kind,
// namespace and name; KAI Queues in the backend's order), and every object
// whose identity an earlier one already has, each with that earlier one.
// It writes nothing, so a rendering with a Duplicate is refused before any
// YAML is written; Write then writes what Order ordered.
func Order(objs []render.Object) ([]render.Object, []Duplicate) {
	type keyed struct {
		render.Object
		rank                              int
		apiVersion, kind, namespace, name string
	}
	keys := make([]keyed, len(objs))
	// The sort moves pointers, not the keyed structs: sort.SliceStable's
	// reflective swaps of 50,000 of them were a tenth of a second.
	sorted := make([]*keyed, len(objs))
	for i, o := range objs {
		kind := o.Kind()
		keys[i] = keyed{o, rankOf(kind), o.APIVersion(), kind, o.Namespace(), o.Name()}
		sorted[i] = &keys[i]
	}
	slices.SortStableFunc(sorted, func(a, b *keyed) int {
		if a.rank != b.rank {
			return cmp.Compare(a.rank, b.rank)
		}
		if a.kind != b.kind {
			return strings.Compare(a.kind, b.kind)
		}
		// KAI Queues keep the backend's order: parents before children.
		if a.kind == "Queue" {
			return 0
		}
		if a.namespace != b.namespace {
			return strings.Compare(a.namespace, b.namespace)
		}
		return strings.Compare(a.name, b.name)
	})
	out := make([]render.Object, len(sorted))
	var dups []Duplicate
	seen := make(map[string]int, len(sorted)) // identity → index in out
	for i, o := range sorted {
		out[i] = o.Object
		id := o.apiVersion + "/" + o.kind + "/" + o.namespace + "/" + o.name
		if first, ok := seen[id]; ok {
			dups = append(dups, Duplicate{First: out[first], Second: o.Object})
			continue
		}
		seen[id] = i
	}
	return out, dups
}

// Write writes the YAML of objects Order has ordered (and found no
// Duplicate among): it sets each object's YAML in place and returns the
// objects and the stream.
func Write(ordered []render.Object) ([]render.Object, []byte, error) {
	out := ordered
	var scratch bytes.Buffer // each object is written here, then copied once to its own slice
	size := 0
	for i := range out {
		o := &out[i]
		y, err := write(&scratch, *o)
		if err != nil {
			return nil, nil, err
		}
		o.YAML = y
		size += len(o.YAML)
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

// YAML is one object's YAML as Write writes it in a stream, for a caller
// that shows a few objects of a rendering Check has accepted (diff): it
// fails where Write would fail on the object, with Write's error.
func YAML(o render.Object) ([]byte, error) {
	var scratch bytes.Buffer
	return write(&scratch, o)
}

// write writes o's YAML into scratch and returns a copy of it.
func write(scratch *bytes.Buffer, o render.Object) ([]byte, error) {
	scratch.Reset()
	w := writer{Buffer: scratch}
	w.writeMap(o.Fields, 0)
	if w.err != nil {
		return nil, fmt.Errorf("encode %s %s: %w", o.Kind(), o.Name(), w.err)
	}
	return bytes.Clone(scratch.Bytes()), nil
}

// Check is Write without the YAML, for a caller that keeps only the
// verdict (tenancy check, explain, diff): it returns the error Write
// returns for the same objects, the first value it cannot write in the
// order Write writes them. At 10,000 teams it saves writing (and
// collecting) about 30 MB.
//
// The objects are walked once in the maps' own order, no key sorted and
// short keys not written (writable); only a rendering that walk refuses is
// walked again in Write's order (checkMap), to name the refusal Write
// would meet first. Whether a value or key is refused does not depend on
// when it is visited, so the first walk refuses exactly when Write would.
func Check(ordered []render.Object) error {
	if all(ordered, writable) {
		return nil
	}
	var scratch bytes.Buffer
	for i := range ordered {
		o := &ordered[i]
		w := writer{Buffer: &scratch}
		w.checkMap(o.Fields)
		if w.err != nil {
			return fmt.Errorf("encode %s %s: %w", o.Kind(), o.Name(), w.err)
		}
	}
	return nil
}

// all reports whether ok holds for every object's fields.
func all(objs []render.Object, ok func(any) bool) bool {
	for i := range objs {
		if !ok(objs[i].Fields) {
			return false
		}
	}
	return true
}

// shortKey is the longest key that cannot exceed maxKey as written:
// writeString writes a key plain or as strconv.Quote does, which writes a
// byte as at most 4 (\xff), plus the two quotes.
const shortKey = (maxKey - 2) / 4

// writable reports whether checkValue accepts v: unstructured content
// only, every key at most maxKey bytes as written. A key of at most
// shortKey bytes is accepted without writing it.
func writable(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if len(k) > shortKey && keyTooLong(k) || !writable(e) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !writable(e) {
				return false
			}
		}
		return true
	case string, int64, bool, nil, float64:
		return true
	}
	return false
}

// keyTooLong reports whether k is longer than maxKey as writeString
// writes it.
func keyTooLong(k string) bool {
	var b bytes.Buffer
	w := writer{Buffer: &b}
	w.writeString(k)
	return b.Len() > maxKey
}

// checkMap is writeMap's checks: keys in writeMap's order, each measured
// as writeString writes it, and every value as writeValue would take it.
func (b *writer) checkMap(m map[string]any) {
	var small [16]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b.Reset()
		b.writeString(k)
		if b.Len() > maxKey && b.err == nil {
			b.err = fmt.Errorf("%w: a key of %d bytes", errKeyTooLong, b.Len())
		}
		b.checkValue(m[k])
	}
}

// checkValue is what writeValue, writeSeq and writeScalar refuse: a value
// that is not unstructured content.
func (b *writer) checkValue(v any) {
	switch x := v.(type) {
	case map[string]any:
		b.checkMap(x)
	case []any:
		for _, item := range x {
			b.checkValue(item)
		}
	case string, int64, bool, nil, float64:
	default:
		if b.err == nil {
			b.err = fmt.Errorf("%w: %T", errUnsupported, v)
		}
	}
}

// writer writes YAML into a buffer and remembers the first value it cannot
// write, so a renderer's mistake fails the rendering instead of printing
// something no reader expects.
type writer struct {
	*bytes.Buffer
	err error
}

// errUnsupported is wrapped when a value is not unstructured content.
var errUnsupported = errors.New("not a JSON value")

// maxKey is the longest key, as written, that every YAML reader takes for a
// key: YAML limits an implicit key to 1024 characters, and go-yaml refuses
// longer ones. Kubernetes keys are far shorter (a label key at most 317
// bytes, a ConfigMap key 253); a longer one is a renderer's mistake.
const maxKey = 1024

// errKeyTooLong is wrapped when a key is longer than maxKey.
var errKeyTooLong = errors.New("key too long for YAML")

func (b *writer) indent(n int) {
	for i := 0; i < n; i++ {
		b.WriteString("  ")
	}
}

// writeMap writes a block mapping with sorted keys at the given depth.
func (b *writer) writeMap(m map[string]any, depth int) {
	var small [16]string // most objects' maps fit: no allocation for the keys
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		// The caller has already placed the first key.
		if i > 0 {
			b.indent(depth)
		}
		start := b.Len()
		b.writeString(k)
		if b.Len()-start > maxKey && b.err == nil {
			b.err = fmt.Errorf("%w: a key of %d bytes", errKeyTooLong, b.Len()-start)
		}
		b.WriteByte(':')
		b.writeValue(m[k], depth)
	}
}

// writeValue writes what follows "key:" — inline for scalars and empty
// collections, on the next lines otherwise.
func (b *writer) writeValue(v any, depth int) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) > 0 {
			b.WriteByte('\n')
			b.indent(depth + 1)
			b.writeMap(x, depth+1)
			return
		}
	case []any:
		if len(x) > 0 {
			b.WriteByte('\n')
			// Sequences sit at their key's indentation, as kubectl writes them.
			b.writeSeq(x, depth)
			return
		}
	}
	b.WriteByte(' ')
	b.writeInline(v, depth+1)
}

// writeSeq writes a block sequence at the given depth: a mapping item starts
// on its "- " line, a sequence item on the next.
func (b *writer) writeSeq(s []any, depth int) {
	for _, item := range s {
		b.indent(depth)
		b.WriteString("- ")
		switch x := item.(type) {
		case map[string]any:
			if len(x) > 0 {
				b.writeMap(x, depth+1)
				continue
			}
		case []any:
			if len(x) > 0 {
				b.WriteByte('\n')
				b.writeSeq(x, depth+1)
				continue
			}
		}
		b.writeInline(item, depth+1)
	}
}

// writeInline writes what stands on the line it starts, after "key: " or
// "- ", and ends the line: a scalar, an empty collection (the only kind that
// reaches it), or a literal block whose lines sit at depth. Keys and items
// share it, so a value is written the same way in both places.
func (b *writer) writeInline(v any, depth int) {
	switch x := v.(type) {
	case map[string]any:
		b.WriteString("{}\n")
	case []any:
		b.WriteString("[]\n")
	case string:
		if literalSafe(x) {
			b.writeLiteral(x, depth)
			return
		}
		b.writeString(x)
		b.WriteByte('\n')
	default:
		b.writeScalar(v)
		b.WriteByte('\n')
	}
}

// writeLiteral writes s, which literalSafe accepts, as a literal block
// scalar whose lines sit at the given depth: "|" when s ends in a newline,
// "|-" when it does not. Empty lines are written without indentation, so the
// output has no trailing spaces; a literal block reads them as empty lines.
func (b *writer) writeLiteral(s string, depth int) {
	body, ok := strings.CutSuffix(s, "\n")
	if ok {
		b.WriteString("|\n")
	} else {
		b.WriteString("|-\n")
	}
	for line := range strings.SplitSeq(body, "\n") {
		if line != "" {
			b.indent(depth)
			b.WriteString(line)
		}
		b.WriteByte('\n')
	}
}

// literalSafe reports whether s is worth writing as a literal block (it holds
// a newline) and reads back from one as exactly s. Whatever a block scalar
// cannot carry faithfully is left to the double-quoted form:
//   - a first line that is empty or starts with a space, which would change
//     the indentation a reader detects;
//   - more than one trailing newline, which needs "|+" and its keep rules;
//   - a line that ends in a space (or holds only spaces), which editors and
//     diff tools strip and readers treat inconsistently;
//   - tabs, carriage returns and every other character that is not printable
//     (control characters, U+0085, U+2028, U+2029, a byte-order mark, invalid
//     UTF-8): YAML 1.1 readers take some of them for line breaks, and none
//     can be escaped inside a block.
func literalSafe(s string) bool {
	if strings.IndexByte(s, '\n') < 0 || s[0] == '\n' || s[0] == ' ' || strings.HasSuffix(s, "\n\n") {
		return false
	}
	prev := rune(0)
	for _, r := range s {
		switch {
		case r == '\n':
			if prev == ' ' {
				return false
			}
		case r < utf8.RuneSelf:
			if r < ' ' || r == 0x7f {
				return false
			}
		case r == utf8.RuneError || !unicode.IsPrint(r):
			// RuneError is also what invalid UTF-8 decodes to.
			return false
		}
		prev = r
	}
	return prev != ' '
}

// writeScalar writes a scalar of unstructured content.
func (b *writer) writeScalar(v any) {
	switch x := v.(type) {
	case string:
		b.writeString(x)
	case int64:
		b.Write(strconv.AppendInt(b.AvailableBuffer(), x, 10))
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case nil:
		b.WriteString("null")
	case float64:
		b.Write(strconv.AppendFloat(b.AvailableBuffer(), x, 'g', -1, 64))
	default:
		if b.err == nil {
			b.err = fmt.Errorf("%w: %T", errUnsupported, v)
		}
		b.WriteString("null")
	}
}

// ambiguous words a YAML 1.1 reader would not read as strings.
var ambiguous = map[string]bool{
	"true": true, "false": true, "yes": true, "no": true, "on": true, "off": true,
	"y": true, "n": true, "null": true, "~": true,
}

// writeString writes a string plain when no YAML reader could take it for
// anything else, double-quoted otherwise.
func (b *writer) writeString(s string) {
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

// plainSafe reports whether s may be written plain. The rule is kept simple
// rather than minimal: a string must start with a letter and hold only
// letters, digits and - _ . / (and inner spaces or commas). So strings that
// start with a digit are quoted, "100k" and "100Ti" among them, although no
// YAML reader would take those two for numbers; what matters is that every
// string the rule lets through plain is read back as the same string.
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

// Package load parses TOML into a tree of values that remembers where every
// key and value is, so later steps can point at the exact line and column of
// a problem. It reports every syntax and structure problem it can, but stops
// at the first syntax error: after one, the rest of the document cannot be
// trusted.
//
// go-toml's unstable parser gives the positions; go-toml's decoder has the
// last word on validity (judge.go). The loader's own structure checks exist for their
// messages ("defined twice (first at line 2)"), but a document the TOML
// decoder refuses is refused whatever the loader thought of it, so tenancy
// never accepts what the TOML specification rejects.
package load

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2/unstable"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
)

// Kind is the TOML type of a value.
type Kind int

// The TOML types.
const (
	String Kind = iota + 1
	Integer
	Float
	Bool
	DateTime
	Array
	Table
)

func (k Kind) String() string {
	switch k {
	case String:
		return "string"
	case Integer:
		return "integer"
	case Float:
		return "float"
	case Bool:
		return "boolean"
	case DateTime:
		return "date-time"
	case Array:
		return "array"
	case Table:
		return "table"
	}
	return "unknown"
}

// Pos is a 1-based line and column.
type Pos = diag.Pos

// Value is one TOML value and where it came from.
type Value struct {
	Kind   Kind
	KeyPos Pos // the key that names the value (the header for [tables])
	Pos    Pos // the value itself

	Str   string
	Int   int64
	Float float64
	Bool  bool
	Raw   string // the value's source text, for messages

	Items []*Value // Array
	Table *Fields  // Table

	// static marks arrays written as [ ... ]: TOML forbids appending to
	// them with [[headers]].
	static bool
}

// Fields is a TOML table: its keys in document order.
type Fields struct {
	Keys   []string
	Values map[string]*Value

	// header is true once a [header] defined the table; defining it again
	// is an error. sealed marks inline tables and values, which TOML
	// forbids extending.
	header bool
	sealed bool
}

// Get returns the value of a key, or nil.
func (f *Fields) Get(key string) *Value {
	if f == nil {
		return nil
	}
	return f.Values[key]
}

// SortedKeys returns the keys in byte order, for deterministic iteration.
func (f *Fields) SortedKeys() []string {
	keys := append([]string(nil), f.Keys...)
	sort.Strings(keys)
	return keys
}

// NewTable returns an empty table whose key and value are at pos: for a
// table that merging files creates, such as [teams] when only an included
// file has teams.
func NewTable(pos Pos) *Value { return newTable(pos) }

// Add sets key to v unless the table already has key; it reports whether
// it did. Merging included files into an agreement adds their tables so.
func (f *Fields) Add(key string, v *Value) bool {
	if f.Get(key) != nil {
		return false
	}
	f.set(key, v)
	return true
}

func newTable(pos Pos) *Value {
	return &Value{Kind: Table, KeyPos: pos, Pos: pos, Table: &Fields{Values: map[string]*Value{}}}
}

func (f *Fields) set(key string, v *Value) {
	f.Keys = append(f.Keys, key)
	f.Values[key] = v
}

// Parse parses a TOML document. file names it in diagnostics.
func Parse(file string, data []byte) (*Value, diag.List) {
	root, diags, judged := Start(file, data)
	if judged != nil {
		diags = judged()
	}
	return root, diags
}

// Start is Parse with go-toml's verdict (judge) left to come: it returns
// the loader's tree and diagnostics, and, when the loader found nothing
// wrong, judged, which waits for the decoder's verdict and returns it (nil
// or the one "invalid TOML" error). The decoder runs meanwhile on another
// goroutine, so a caller may go on with the tree, but must call judged
// before it says anything: a document the decoder refuses is refused with
// that error alone, whatever the tree gave. The verdict is linear (judge:
// go-toml's decoder is asked only about what the linear one does not
// accept), a few milliseconds at 10,000 teams where go-toml's decoder took
// a third of a second; it stays on its own goroutine all the same.
func Start(file string, data []byte) (_ *Value, _ diag.List, judged func() diag.List) {
	// Editors on Windows may start a UTF-8 file with a byte order mark,
	// which go-toml reports as an invalid key character. Editors do not
	// show it, so columns are counted after it.
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	l := &loader{file: file, data: data, lines: lineStarts(data)}
	root := newTable(Pos{Line: 1, Column: 1})
	l.root = root.Table
	l.current = root.Table

	var p unstable.Parser
	p.Reset(data)
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.KeyValue:
			l.keyValue(l.current, e, nil)
		case unstable.Table, unstable.ArrayTable:
			h, held, ok := l.header(e)
			switch {
			case !ok:
				// Reported; the header's keys are swallowed.
			case e.Kind == unstable.Table:
				l.tableHeader(h, held)
			default:
				l.arrayTableHeader(h, held)
			}
		}
	}
	if err := p.Error(); err != nil {
		l.syntaxError(err)
	}
	if len(l.diags) > 0 {
		return root, l.diags, nil
	}
	verdict := make(chan diag.List, 1)
	go func() { verdict <- l.judge() }()
	return root, nil, sync.OnceValue(func() diag.List { return <-verdict })
}

type loader struct {
	file    string
	data    []byte
	lines   []int // byte offset where each line starts
	root    *Fields
	current *Fields
	prefix  *field.Path // the current table's path, for messages
	diags   diag.List
}

func lineStarts(data []byte) []int {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// pos converts a byte offset to a line and column. Columns count bytes, as
// go-toml and most compilers do.
func (l *loader) pos(offset int) Pos {
	line := sort.Search(len(l.lines), func(i int) bool { return l.lines[i] > offset })
	return Pos{Line: line, Column: offset - l.lines[line-1] + 1}
}

func (l *loader) posOf(n *unstable.Node) Pos { return l.pos(int(n.Raw.Offset)) }

func (l *loader) errorf(typ field.ErrorType, pos Pos, path *field.Path, format string, args ...any) {
	l.diags = append(l.diags, diag.Diagnostic{
		Severity: diag.Error, Type: typ, File: l.file, Pos: pos,
		Path: path, Message: fmt.Sprintf(format, args...),
	})
}

func (l *loader) syntaxError(err error) {
	var perr *unstable.ParserError
	pos := Pos{}
	msg := err.Error()
	if errors.As(err, &perr) {
		msg = perr.Message
		if off, ok := offsetIn(l.data, perr.Highlight); ok {
			pos = l.pos(off)
		}
	}
	l.errorf(field.ErrorTypeInvalid, pos, nil, "TOML syntax error: %s", msg)
}

// offsetIn finds where sub (a subslice of data, as go-toml guarantees for
// highlights) starts in data.
func offsetIn(data, sub []byte) (int, bool) {
	if len(sub) == 0 && cap(sub) == 0 {
		return 0, false
	}
	off := cap(data) - cap(sub)
	if off < 0 || off > len(data) {
		return 0, false
	}
	return off, true
}

// keyParts returns a key's parts and the position of each.
func (l *loader) keyParts(it unstable.Iterator) ([]string, []Pos) {
	var parts []string
	var poss []Pos
	for it.Next() {
		n := it.Node()
		parts = append(parts, string(n.Data))
		poss = append(poss, l.posOf(n))
	}
	return parts, poss
}

// descend walks the dotted parts below t, creating implicit tables, and
// returns the table the last part names. ok is false after an error.
func (l *loader) descend(t *Fields, prefix *field.Path, parts []string, poss []Pos, viaDottedKey bool) (*Fields, *field.Path, bool) {
	for i, part := range parts {
		path := diag.Key(prefix, part)
		v := t.Get(part)
		switch {
		case v == nil:
			v = newTable(poss[i])
			t.set(part, v)
		case v.Kind == Array && !v.static && len(v.Items) > 0 && v.Items[len(v.Items)-1].Kind == Table && !viaDottedKey:
			// [a.b] after [[a]] extends the last element of the array of tables.
			v = v.Items[len(v.Items)-1]
		case v.Kind != Table:
			l.alreadyDefined(poss[i], path, part, v)
			return nil, nil, false
		case v.Table.sealed:
			l.errorf(field.ErrorTypeForbidden, poss[i], path, "cannot extend inline table %q defined at line %d", part, v.KeyPos.Line)
			return nil, nil, false
		}
		t = v.Table
		prefix = path
	}
	return t, prefix, true
}

// swallow sends the keys under a header that was reported as an error into
// a table nobody reads, rather than into the previous table or the clashing one.
func (l *loader) swallow() {
	l.current, l.prefix = &Fields{Values: map[string]*Value{}}, nil
}

// alreadyDefined reports a key that a header or a dotted key needs as a
// table, or an array of tables, while it already holds something else.
func (l *loader) alreadyDefined(pos Pos, path *field.Path, key string, v *Value) {
	l.errorf(field.ErrorTypeDuplicate, pos, path, "key %q is already defined as a %s at line %d", key, v.Kind, v.KeyPos.Line)
}

// headerKey is the last part of a [table] or [[array]] header's key: the
// table that holds it, its name, position and path.
type headerKey struct {
	parent *Fields
	name   string
	pos    Pos
	path   *field.Path
}

// header resolves the key of a [table] or [[array]] header, creating the
// implicit tables on the way, and returns what the key already holds (nil
// for nothing). ok is false after an error, the header's keys swallowed.
func (l *loader) header(e *unstable.Node) (h headerKey, held *Value, ok bool) {
	parts, poss := l.keyParts(e.Key())
	parent, prefix, ok := l.descend(l.root, nil, parts[:len(parts)-1], poss[:len(poss)-1], false)
	if !ok {
		l.swallow()
		return headerKey{}, nil, false
	}
	h = headerKey{parent: parent, name: parts[len(parts)-1], pos: poss[len(poss)-1]}
	h.path = diag.Key(prefix, h.name)
	return h, parent.Get(h.name), true
}

// tableHeader opens the table of a [table] header; v is what its key
// already holds.
func (l *loader) tableHeader(h headerKey, v *Value) {
	switch {
	case v == nil:
		v = newTable(h.pos)
		h.parent.set(h.name, v)
	case v.Kind != Table:
		l.alreadyDefined(h.pos, h.path, h.name, v)
		l.swallow()
		return
	case v.Table.header || v.Table.sealed:
		l.errorf(field.ErrorTypeDuplicate, h.pos, h.path, "table [%s] is defined twice (first at line %d)", h.path, v.KeyPos.Line)
		l.swallow()
		return
	default:
		// An implicit table created by a deeper header; its position
		// becomes the explicit header's.
		v.KeyPos, v.Pos = h.pos, h.pos
	}
	v.Table.header = true
	l.current, l.prefix = v.Table, h.path
}

// arrayTableHeader appends a table to the array of an [[array]] header and
// opens it; arr is what its key already holds.
func (l *loader) arrayTableHeader(h headerKey, arr *Value) {
	switch {
	case arr == nil:
		arr = &Value{Kind: Array, KeyPos: h.pos, Pos: h.pos}
		h.parent.set(h.name, arr)
	case arr.Kind != Array || arr.static:
		l.alreadyDefined(h.pos, h.path, h.name, arr)
		l.swallow()
		return
	}
	elem := newTable(h.pos)
	elem.Table.header = true
	arr.Items = append(arr.Items, elem)
	l.current = elem.Table
	l.prefix = h.path.Index(len(arr.Items) - 1)
}

func (l *loader) keyValue(t *Fields, e *unstable.Node, prefix *field.Path) {
	if prefix == nil {
		prefix = l.prefix
	}
	parts, poss := l.keyParts(e.Key())
	parent, path, ok := l.descend(t, prefix, parts[:len(parts)-1], poss[:len(poss)-1], true)
	if !ok {
		return
	}
	last, lastPos := parts[len(parts)-1], poss[len(poss)-1]
	path = diag.Key(path, last)
	if prev := parent.Get(last); prev != nil {
		l.errorf(field.ErrorTypeDuplicate, lastPos, path, "key %q is defined twice (first at line %d)", last, prev.KeyPos.Line)
		return
	}
	v := l.value(e.Value(), path, l.valueStart(e))
	if v == nil {
		return
	}
	v.KeyPos = lastPos
	parent.set(last, v)
}

// valueStart returns the byte offset of a key/value expression's value: the
// first non-blank byte after the "=" that follows the key.
func (l *loader) valueStart(e *unstable.Node) int {
	end := 0
	for it := e.Key(); it.Next(); {
		end = int(it.Node().Raw.Offset + it.Node().Raw.Length)
	}
	i := end
	for i < len(l.data) && (l.data[i] == ' ' || l.data[i] == '\t') {
		i++
	}
	if i < len(l.data) && l.data[i] == '=' {
		i++
	}
	for i < len(l.data) && (l.data[i] == ' ' || l.data[i] == '\t') {
		i++
	}
	return i
}

// skipSeparators returns the offset of the first byte at or after off that
// is not whitespace, a comma or a comment: the start of an array's next item.
func (l *loader) skipSeparators(off int) int {
	for off < len(l.data) {
		switch l.data[off] {
		case ' ', '\t', '\r', '\n', ',':
			off++
		case '#':
			for off < len(l.data) && l.data[off] != '\n' {
				off++
			}
		default:
			return off
		}
	}
	return off
}

// value converts a value node; nil after an error. start is where the value
// begins in the source: go-toml records no range for arrays, so without it
// every array would appear to sit at line 1, column 1. An array nested in an
// array is found after the item before it; when that item's end is unknown
// (it is itself an array or an inline table), the outer array's start is used.
func (l *loader) value(n *unstable.Node, path *field.Path, start int) *Value {
	v := &Value{Pos: l.posOf(n), Raw: string(l.data[n.Raw.Offset : n.Raw.Offset+n.Raw.Length])}
	if n.Kind == unstable.Array {
		v.Pos = l.pos(start)
	}
	switch n.Kind {
	case unstable.String:
		v.Kind, v.Str = String, string(n.Data)
	case unstable.Bool:
		v.Kind, v.Bool = Bool, string(n.Data) == "true"
	case unstable.Integer:
		i, err := parseInt(string(n.Data))
		if err != nil {
			l.errorf(field.ErrorTypeInvalid, v.Pos, path, "%v", err)
			return nil
		}
		v.Kind, v.Int = Integer, i
	case unstable.Float:
		f, err := parseFloat(string(n.Data))
		if err != nil {
			l.errorf(field.ErrorTypeInvalid, v.Pos, path, "%v", err)
			return nil
		}
		v.Kind, v.Float = Float, f
	case unstable.LocalDate, unstable.LocalTime, unstable.LocalDateTime, unstable.DateTime:
		v.Kind = DateTime
	case unstable.Array:
		v.Kind = Array
		i := 0
		next := start + 1 // just past this array's '['; -1 once unknown
		for it := n.Children(); it.Next(); i++ {
			child := it.Node()
			childStart := start
			if child.Kind == unstable.Array && next >= 0 {
				if off := l.skipSeparators(next); off < len(l.data) && l.data[off] == '[' {
					childStart = off
				}
			}
			item := l.value(child, path.Index(i), childStart)
			if item == nil {
				return nil
			}
			next = -1
			if child.Kind != unstable.Array && child.Kind != unstable.InlineTable {
				next = int(child.Raw.Offset + child.Raw.Length)
			}
			item.KeyPos = item.Pos
			v.Items = append(v.Items, item)
		}
		v.static = true
	case unstable.InlineTable:
		tv := newTable(v.Pos)
		for it := n.Children(); it.Next(); {
			l.keyValue(tv.Table, it.Node(), path)
		}
		tv.Table.sealed = true
		sealAll(tv.Table)
		tv.Raw = v.Raw
		return tv
	default:
		l.errorf(field.ErrorTypeNotSupported, v.Pos, path, "unsupported TOML value")
		return nil
	}
	return v
}

func sealAll(f *Fields) {
	f.sealed = true
	for _, v := range f.Values {
		if v.Kind == Table {
			sealAll(v.Table)
		}
	}
}

func parseInt(s string) (int64, error) {
	clean := strings.ReplaceAll(s, "_", "")
	base := 10
	digits := clean
	switch {
	case strings.HasPrefix(clean, "0x"):
		base, digits = 16, clean[2:]
	case strings.HasPrefix(clean, "0o"):
		base, digits = 8, clean[2:]
	case strings.HasPrefix(clean, "0b"):
		base, digits = 2, clean[2:]
	}
	i, err := strconv.ParseInt(digits, base, 64)
	if err != nil {
		var nerr *strconv.NumError
		if errors.As(err, &nerr) && nerr.Err == strconv.ErrRange {
			return 0, fmt.Errorf("integer %s is out of range", s)
		}
		return 0, fmt.Errorf("invalid integer %s", s)
	}
	return i, nil
}

func parseFloat(s string) (float64, error) {
	switch strings.TrimLeft(s, "+-") {
	case "inf":
		if strings.HasPrefix(s, "-") {
			return math.Inf(-1), nil
		}
		return math.Inf(1), nil
	case "nan":
		return math.NaN(), nil
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil {
		return 0, fmt.Errorf("invalid float %s", s)
	}
	return f, nil
}

package load

import (
	"bytes"
	"errors"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
)

// judge reports go-toml's decoder's refusal of the document: the loader
// builds a tree for what the parser accepts, but only a decoder that
// implements the specification's table rules can say a document is valid
// TOML. accepts answers "valid" in linear time for the documents go-toml's
// decoder accepts; anything else is decoded by go-toml itself, so a refusal
// and its message are always go-toml's.
func (l *loader) judge() diag.List {
	if accepts(l.data) {
		return nil
	}
	return decoderVerdict(l.file, l.data)
}

// decoderVerdict decodes the document with go-toml's decoder (toml.Unmarshal
// into a map, the decoder's generic path) and reports its refusal.
func decoderVerdict(file string, data []byte) diag.List {
	var doc map[string]any
	err := toml.Unmarshal(data, &doc)
	if err == nil {
		return nil
	}
	var derr *toml.DecodeError
	pos := Pos{}
	msg := err.Error()
	if errors.As(err, &derr) {
		line, col := derr.Position()
		pos = Pos{Line: line, Column: col}
		msg = strings.TrimPrefix(msg, "toml: ")
	}
	return diag.List{{
		Severity: diag.Error, Type: field.ErrorTypeInvalid, File: file, Pos: pos,
		Message: "invalid TOML: " + msg,
	}}
}

// accepts reports whether go-toml's decoder accepts data, in time linear in
// its size; false means "ask the decoder". toml.Unmarshal into a map (v2.4.3,
// decode_fused.go) refuses a document for three reasons only, and accepts
// checks each the decoder's way:
//   - syntax: the decoder's scanners are the unstable parser's, run in the
//     same order as Parser.NextExpression, which accepts reads the document
//     with;
//   - keys: the decoder's SeenTracker, which tracker replays rule for rule,
//     with a map where go-toml scans every key seen so far;
//   - scalars: an integer, float or date the decoder cannot convert (out of
//     range, February 30th), which go-toml itself judges (scalarsAccepted).
//
// Strings and booleans always convert, and nothing else can fail: building
// the maps after the tracker accepted has no error path. docs/decisions.md
// ("A linear verdict equal to go-toml's") gives the proof; the tests and
// FuzzJudgeEqualsGoTOML hold accepts to go-toml's verdict on every input.
func accepts(data []byte) bool {
	var p unstable.Parser
	p.Reset(data)
	t := newTracker()
	var s scalars
	for p.NextExpression() {
		e := p.Expression()
		var ok bool
		switch e.Kind {
		case unstable.KeyValue:
			ok = t.keyValue(t.current, e)
			s.collect(e.Value())
		case unstable.Table, unstable.ArrayTable:
			ok = t.table(e.Key(), e.Kind == unstable.ArrayTable)
		}
		if !ok {
			return false
		}
	}
	return p.Error() == nil && s.accepted()
}

// scalars are the distinct values of the kinds whose conversion can fail,
// each once: an agreement repeats the same few numbers thousands of times.
type scalars struct {
	seen map[unstable.Kind]map[string]bool
	list []scalar
}

type scalar struct {
	kind unstable.Kind
	data string
}

// collect records the scalars of a value, nested ones included.
func (s *scalars) collect(n *unstable.Node) {
	switch n.Kind {
	case unstable.Array:
		for it := n.Children(); it.Next(); {
			s.collect(it.Node())
		}
	case unstable.InlineTable:
		for it := n.Children(); it.Next(); {
			s.collect(it.Node().Value())
		}
	case unstable.Integer, unstable.Float, unstable.DateTime, unstable.LocalDate, unstable.LocalTime, unstable.LocalDateTime:
		if s.seen == nil {
			s.seen = map[unstable.Kind]map[string]bool{}
		}
		seen := s.seen[n.Kind]
		if seen == nil {
			seen = map[string]bool{}
			s.seen[n.Kind] = seen
		}
		if !seen[string(n.Data)] {
			d := string(n.Data)
			seen[d] = true
			s.list = append(s.list, scalar{kind: n.Kind, data: d})
		}
	}
}

// scalarBatch is how many scalars one document of scalarsAccepted holds:
// go-toml's tracker scans a table's earlier keys for each key, so a batch
// costs its size squared, and batches of 64 keep that to 32 steps a value.
const scalarBatch = 64

// accepted asks go-toml's decoder to convert every scalar collected.
func (s *scalars) accepted() bool {
	for len(s.list) > 0 {
		n := min(len(s.list), scalarBatch)
		if !scalarsAccepted(s.list[:n]) {
			return false
		}
		s.list = s.list[n:]
	}
	return true
}

// scalarsAccepted decodes "k0 = <scalar>" lines with toml.Unmarshal. The
// decoder converts a scalar by its kind and bytes alone (fusedScalar at the
// top level and decodeAny inside arrays and inline tables call the same
// functions), so one it converts here it converts in the document. The
// batch is first read back with the parser to hold each line's value to the
// same kind and bytes as the scalar it stands for.
func scalarsAccepted(list []scalar) bool {
	var b bytes.Buffer
	for i, sc := range list {
		b.WriteString("k")
		b.WriteString(strconv.Itoa(i))
		b.WriteString(" = ")
		b.WriteString(sc.data)
		b.WriteByte('\n')
	}
	doc := b.Bytes()
	var p unstable.Parser
	p.Reset(doc)
	i := 0
	for p.NextExpression() {
		e := p.Expression()
		if i == len(list) || e.Kind != unstable.KeyValue {
			return false
		}
		v := e.Value()
		if v.Kind != list[i].kind || string(v.Data) != list[i].data {
			return false
		}
		i++
	}
	if p.Error() != nil || i != len(list) {
		return false
	}
	var m map[string]any
	return toml.Unmarshal(doc, &m) == nil
}

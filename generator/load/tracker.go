package load

import "github.com/pelletier/go-toml/v2/unstable"

// tracker replays go-toml's SeenTracker (internal/tracker/seen.go, v2.4.3),
// the decoder's key rules, rule for rule, over a tree whose children are a
// map. go-toml keeps its entries in one list and finds a key by scanning
// every entry after its parent, which makes a document of n tables cost n²;
// here a lookup costs one map access.
//
// The two agree because go-toml's find returns the one entry with that
// parent and name that is not anonymous (every path creates an entry only
// after find found none), which is the child map's entry; its clear removes
// every descendant of an array of tables, which is dropping the children
// map; and its anonymous entries (an inline table or array inside an array)
// are never found by name, so each is a scope of its own, started empty.
type tracker struct {
	root    *seen
	current *seen // the table the next key-values go into
}

// seenKind is go-toml's keyKind (anonymous entries are never stored).
type seenKind uint8

const (
	valueSeen      seenKind = iota + 1 // a scalar, array or inline table
	dottedSeen                         // a table a dotted key created
	tableSeen                          // a table a header created or crossed
	arrayTableSeen                     // an array of tables
)

type seen struct {
	kind     seenKind
	explicit bool // a tableSeen its own [header] defined
	children map[string]*seen
}

func newTracker() *tracker {
	root := &seen{kind: tableSeen}
	return &tracker{root: root, current: root}
}

func (s *seen) child(name []byte) *seen { return s.children[string(name)] }

func (s *seen) add(name []byte, kind seenKind, explicit bool) *seen {
	if s.children == nil {
		s.children = map[string]*seen{}
	}
	c := &seen{kind: kind, explicit: explicit}
	s.children[string(name)] = c
	return c
}

// header walks a header's key, as go-toml's checkTable and checkArrayTable
// do: a missing part but the last becomes an implicit table; tables, arrays
// of tables and dotted-key tables may be crossed, a value may not. It
// returns the table the last part goes into, that part, and what it holds.
func (t *tracker) header(key unstable.Iterator) (parent *seen, name []byte, held *seen, ok bool) {
	parent = t.root
	for key.Next() {
		name = key.Node().Data
		c := parent.child(name)
		if key.IsLast() {
			return parent, name, c, true
		}
		switch {
		case c == nil:
			c = parent.add(name, tableSeen, false)
		case c.kind == valueSeen:
			return nil, nil, nil, false
		}
		parent = c
	}
	return nil, nil, nil, false
}

// table is go-toml's checkTable, or with array its checkArrayTable: a
// [header] defines a new table or makes an implicit one explicit, once; a
// [[header]] starts an array of tables or adds an element to one, whose
// keys are then new again.
func (t *tracker) table(key unstable.Iterator, array bool) bool {
	parent, name, c, ok := t.header(key)
	switch {
	case !ok:
		return false
	case c == nil && array:
		c = parent.add(name, arrayTableSeen, true)
	case c == nil:
		c = parent.add(name, tableSeen, true)
	case array && c.kind == arrayTableSeen:
		c.children = nil
	case !array && c.kind == tableSeen && !c.explicit:
		c.explicit = true
	default:
		return false
	}
	t.current = c
	return true
}

// keyValue is go-toml's checkKeyValue: a dotted key's parts create or cross
// dotted-key tables only, and its last part must be new; then its value.
func (t *tracker) keyValue(parent *seen, kv *unstable.Node) bool {
	key := kv.Key()
	for key.Next() {
		name := key.Node().Data
		c := parent.child(name)
		if key.IsLast() {
			if c != nil {
				return false
			}
			return t.value(parent.add(name, valueSeen, false), kv.Value())
		}
		switch {
		case c == nil:
			c = parent.add(name, dottedSeen, false)
		case c.kind != dottedSeen:
			return false
		}
		parent = c
	}
	return false
}

// value is go-toml's checkValue: an inline table's keys go under its entry;
// each inline table or array inside an array is a scope of its own.
func (t *tracker) value(id *seen, v *unstable.Node) bool {
	switch v.Kind {
	case unstable.InlineTable:
		for it := v.Children(); it.Next(); {
			if !t.keyValue(id, it.Node()) {
				return false
			}
		}
	case unstable.Array:
		for it := v.Children(); it.Next(); {
			elem := it.Node()
			if elem.Kind == unstable.InlineTable || elem.Kind == unstable.Array {
				if !t.value(&seen{}, elem) {
					return false
				}
			}
		}
	}
	return true
}

// Package diff compares two renderings of an agreement: what the change does
// to each team (from the plans) and to each rendered object (field by field,
// and as a unified YAML diff), so a reviewer can judge a quota change before
// it is merged. It renders nothing itself; callers render both sides with the
// same options and hand the results over.
package diff

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// Op says what happened to an object, a field, a team or a flavor.
type Op string

// The ops, as they appear in JSON.
const (
	Added     Op = "added"
	Removed   Op = "removed"
	Changed   Op = "changed"
	Unchanged Op = "unchanged"
)

// Side is one version of the agreement, rendered.
type Side struct {
	// Label names this side in the output: a file, or REV:file.
	Label string
	// Result is the rendering; nil when the file does not exist on this side,
	// so every object is added (old side) or removed (new side).
	Result *generator.Result
}

// Report is the whole comparison. Formatters print it; it holds no I/O.
type Report struct {
	Old     string         `json:"old"`
	New     string         `json:"new"`
	Changed bool           `json:"changed"`
	Summary Summary        `json:"summary"`
	Objects []ObjectChange `json:"objects"` // added, removed and changed objects only
	Counts  Counts         `json:"counts"`
}

// Counts tallies the objects by what happened to them.
type Counts struct {
	Added     int `json:"added"`
	Removed   int `json:"removed"`
	Changed   int `json:"changed"`
	Unchanged int `json:"unchanged"`
}

// ObjectKey identifies an object across renderings.
type ObjectKey struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

// String names the object the way kubectl does, with its API version:
// "ClusterQueue training (kueue.x-k8s.io/v1beta2)", "LocalQueue ml/training (...)".
func (k ObjectKey) String() string {
	return fmt.Sprintf("%s %s (%s)", k.Kind, k.qualifiedName(), k.APIVersion)
}

func (k ObjectKey) qualifiedName() string {
	if k.Namespace != "" {
		return k.Namespace + "/" + k.Name
	}
	return k.Name
}

// ObjectChange is one object that was added, removed or changed.
type ObjectChange struct {
	ObjectKey
	Op Op `json:"op"`
	// Fields lists changed leaves with readable paths; empty for added and
	// removed objects, whose unified diff says everything.
	Fields []FieldChange `json:"fields,omitempty"`
	// Unified is a unified diff of the object's YAML, 3 lines of context.
	Unified string `json:"unified"`
}

// textsOnly reports whether every change of o is a text diffed line by
// line: its YAML diff then shows the same lines again, indented, so the
// text and Markdown print the texts' diffs alone (JSON keeps both).
func (o ObjectChange) textsOnly() bool {
	for _, f := range o.Fields {
		if f.Lines == "" {
			return false
		}
	}
	return len(o.Fields) > 0
}

// FieldChange is one changed value inside an object.
type FieldChange struct {
	// Path names the field; keyed list elements by their key, e.g.
	// spec.resourceGroups[0].flavors[h100].resources[nvidia.com/gpu].nominalQuota.
	Path string `json:"path"`
	Op   Op     `json:"op"`
	Old  any    `json:"old,omitempty"`
	New  any    `json:"new,omitempty"`
	// Lines is, for a text of several lines on both sides (the agreement
	// the windows controller's ConfigMap carries), the hunks of a unified
	// diff of its lines, which the text and Markdown print in place of
	// the two escaped strings; "" otherwise.
	Lines string `json:"lines,omitempty"`
}

// String prints "path: old → new", with (unset) for a missing side; a text
// diffed line by line reads "path: 1 line(s) removed, 1 added:", and its
// printer follows it with Lines.
func (f FieldChange) String() string {
	if f.Lines != "" {
		var removed, added int
		for l := range strings.Lines(f.Lines) {
			switch l[0] {
			case '-':
				removed++
			case '+':
				added++
			}
		}
		return fmt.Sprintf("%s: %d line(s) removed, %d added:", f.Path, removed, added)
	}
	old, new := "(unset)", "(unset)"
	if f.Op != Added {
		old = formatValue(f.Old)
	}
	if f.Op != Removed {
		new = formatValue(f.New)
	}
	return fmt.Sprintf("%s: %s → %s", f.Path, old, new)
}

// orEmptyPlan is p, or an agreement with nothing in it for a side that is
// absent, as summarize compares one.
func orEmptyPlan(p *plan.Agreement) *plan.Agreement {
	if p == nil {
		return &plan.Agreement{}
	}
	return p
}

// Compare compares two renderings. Either side may have a nil Result (the
// file is absent there), not both.
func Compare(old, new Side) (*Report, error) {
	if old.Result == nil && new.Result == nil {
		return nil, fmt.Errorf("nothing to compare: the agreement exists on neither side")
	}
	// Empty lists, not nulls, in JSON: tools iterate without checking.
	r := &Report{Old: old.Label, New: new.Label, Objects: []ObjectChange{}}
	r.Summary = summarize(planOf(old.Result), planOf(new.Result), warningsOf(old.Result), warningsOf(new.Result))
	contention, err := compareContention(old.Result, new.Result)
	if err != nil {
		return nil, fmt.Errorf("contention: %w", err)
	}
	r.Summary.Contention = contention
	r.Summary.Pools = comparePools(orEmptyPlan(planOf(old.Result)), orEmptyPlan(planOf(new.Result)), backendOf(old.Result, new.Result))
	outcomeApprovals(orEmptyPlan(planOf(old.Result)), orEmptyPlan(planOf(new.Result)), &r.Summary)

	oldObjs, oldKeys, err := index(old.Result)
	if err != nil {
		return nil, fmt.Errorf("old side: %w", err)
	}
	newObjs, newKeys, err := index(new.Result)
	if err != nil {
		return nil, fmt.Errorf("new side: %w", err)
	}
	for _, k := range mergeOrder(oldKeys, newKeys) {
		a, inOld := oldObjs[k]
		b, inNew := newObjs[k]
		c := ObjectChange{ObjectKey: k}
		switch {
		case !inOld:
			if err := b.check(); err != nil {
				return nil, fmt.Errorf("new side: object %s: %w", k, err)
			}
			c.Op = Added
			c.Unified = unified(k, nil, b.yaml)
			r.Counts.Added++
		case !inNew:
			if err := a.check(); err != nil {
				return nil, fmt.Errorf("old side: object %s: %w", k, err)
			}
			c.Op = Removed
			c.Unified = unified(k, a.yaml, nil)
			r.Counts.Removed++
		case bytes.Equal(a.yaml, b.yaml) && sameFields(a.raw, b.raw):
			// Unchanged, without normalizing: most objects of a
			// change to one team are (10,000 teams: half a second).
			r.Counts.Unchanged++
			continue
		default:
			af, err := normalize(a.raw)
			if err != nil {
				return nil, fmt.Errorf("old side: object %s: %w", k, err)
			}
			bf, err := normalize(b.raw)
			if err != nil {
				return nil, fmt.Errorf("new side: object %s: %w", k, err)
			}
			c.Fields = compareFields(af, bf)
			if len(c.Fields) == 0 && bytes.Equal(a.yaml, b.yaml) {
				r.Counts.Unchanged++
				continue
			}
			c.Op = Changed
			c.Unified = unified(k, a.yaml, b.yaml)
			r.Counts.Changed++
		}
		r.Objects = append(r.Objects, c)
	}
	for _, o := range r.Objects {
		if o.Op == Removed && o.APIVersion == "v1" && o.Kind == "Namespace" {
			r.Summary.RemovedNamespaces = append(r.Summary.RemovedNamespaces, o.Name)
			// What Argo CD does with it is what the old side told it:
			// the guardrails' sync options on the Namespace.
			fields, _ := normalize(oldObjs[o.ObjectKey].raw) // checked above
			if opts := syncOptions(fields); opts != "" {
				if r.Summary.NamespaceSyncOptions == nil {
					r.Summary.NamespaceSyncOptions = map[string]string{}
				}
				r.Summary.NamespaceSyncOptions[o.Name] = opts
			}
		}
	}
	r.Changed = len(r.Objects) > 0 || r.Summary.changed()
	return r, nil
}

// indexed is one rendered object: its fields as rendered (normalize gives
// them as compared) and its YAML.
type indexed struct {
	raw  map[string]any
	yaml []byte
}

// check says whether the object's fields normalize: an added or removed
// object is shown by its YAML alone, but fields JSON cannot hold are an
// error on any object, as they were when every object was normalized.
func (x indexed) check() error {
	_, err := normalize(x.raw)
	return err
}

// sameFields reports whether a and b normalize to equal values, for
// content whose normalization is plain (normalized): false sends the pair
// to normalize and compareFields, which decide.
func sameFields(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || (x == nil) != (y == nil) || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !utf8.ValidString(k) || !sameFields(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || (x == nil) != (y == nil) || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameFields(x[i], y[i]) {
				return false
			}
		}
		return true
	case string:
		y, ok := b.(string)
		return ok && x == y && utf8.ValidString(x)
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	}
	return false
}

func keyOf(o generator.Object) ObjectKey {
	return ObjectKey{APIVersion: o.APIVersion(), Kind: o.Kind(), Namespace: o.Namespace(), Name: o.Name()}
}

// index returns a side's objects by identity, and the identities in the
// stream's order (read once: an identity is four map reads).
func index(r *generator.Result) (map[ObjectKey]indexed, []ObjectKey, error) {
	if r == nil {
		return map[ObjectKey]indexed{}, nil, nil
	}
	m := make(map[ObjectKey]indexed, len(r.Objects))
	ks := make([]ObjectKey, len(r.Objects))
	for i, o := range r.Objects {
		k := keyOf(o)
		if _, dup := m[k]; dup {
			return nil, nil, fmt.Errorf("object %s rendered twice", k)
		}
		m[k] = indexed{raw: o.Fields, yaml: o.YAML}
		ks[i] = k
	}
	return m, ks, nil
}

// normalize gives the fields as a round trip through JSON does, so that
// values built in Go (int64, typed slices, structs) and values decoded from
// YAML compare alike. Rendered fields hold unstructured content (the
// encoder writes nothing else), which is converted directly: the JSON
// round trip cost about a second and a half at 10,000 teams. Fields with
// anything else (a float, a string that is not UTF-8, which JSON would
// replace, another type) take the round trip, so the result is always
// encoding/json's.
func normalize(fields map[string]any) (any, error) {
	if v, ok := normalized(fields); ok {
		return v, nil
	}
	return roundTrip(fields)
}

// normalized is v as the JSON round trip gives it, when the conversion is
// plain: ok is false for what only encoding/json should judge.
func normalized(v any) (_ any, ok bool) {
	switch x := v.(type) {
	case nil:
		return nil, true
	case map[string]any:
		if x == nil {
			return nil, true // null
		}
		m := make(map[string]any, len(x))
		for k, e := range x {
			n, ok := normalized(e)
			if !ok || !utf8.ValidString(k) {
				return nil, false
			}
			m[k] = n
		}
		return m, true
	case []any:
		if x == nil {
			return nil, true // null
		}
		s := make([]any, len(x))
		for i, e := range x {
			n, ok := normalized(e)
			if !ok {
				return nil, false
			}
			s[i] = n
		}
		return s, true
	case string:
		return x, utf8.ValidString(x)
	case bool:
		return x, true
	case int64:
		return json.Number(strconv.FormatInt(x, 10)), true
	}
	return nil, false
}

// roundTrip is normalize through encoding/json.
func roundTrip(fields map[string]any) (any, error) {
	data, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// mergeOrder lists every key once: the new rendering's order, with each
// removed object placed after the object that preceded it in the old
// rendering, so removals appear beside their neighbours rather than at the end.
func mergeOrder(old, new []ObjectKey) []ObjectKey {
	inNew := map[ObjectKey]bool{}
	for _, k := range new {
		inNew[k] = true
	}
	after := map[ObjectKey][]ObjectKey{} // removed objects, by the surviving key before them
	var leading []ObjectKey              // removed objects with no surviving predecessor
	var prev *ObjectKey
	for _, k := range old {
		if inNew[k] {
			prev = &k
			continue
		}
		if prev == nil {
			leading = append(leading, k)
		} else {
			after[*prev] = append(after[*prev], k)
		}
	}
	out := slices.Clone(leading)
	seen := map[ObjectKey]bool{}
	for _, k := range new {
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, k)
		out = append(out, after[k]...)
	}
	return out
}

// backendOf is the backend a report was rendered for: the new side's, else
// the old side's.
func backendOf(old, new *generator.Result) generator.Backend {
	if new != nil {
		return new.Backend
	}
	return old.Backend
}

func planOf(r *generator.Result) *plan.Agreement {
	if r == nil {
		return nil
	}
	return r.Plan
}

func warningsOf(r *generator.Result) []generator.Diagnostic {
	if r == nil {
		return nil
	}
	return r.Warnings
}

// equal compares normalized values.
func equal(a, b any) bool { return reflect.DeepEqual(a, b) }

func sortedKeys[M ~map[string]V, V any](m M) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, cmp.Compare[string])
	return ks
}

// syncOptions returns an object's argocd.argoproj.io/sync-options
// annotation, or "".
func syncOptions(fields any) string {
	obj, _ := fields.(map[string]any)
	meta, _ := obj["metadata"].(map[string]any)
	annotations, _ := meta["annotations"].(map[string]any)
	s, _ := annotations["argocd.argoproj.io/sync-options"].(string)
	return s
}

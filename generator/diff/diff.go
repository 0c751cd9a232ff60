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
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/encode"
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
	// The summary reads the plans and the objects' comparison the objects,
	// so on two cores they run side by side; a failure of the summary is
	// reported first, as when it ran first.
	var summaryErr error
	var wg sync.WaitGroup
	wg.Go(func() { summaryErr = r.summarize(old.Result, new.Result) })
	oldObjs, objErr := r.compareObjects(old.Result, new.Result)
	wg.Wait()
	if summaryErr != nil {
		return nil, summaryErr
	}
	if objErr != nil {
		return nil, objErr
	}
	for _, o := range r.Objects {
		if o.Op == Removed && o.APIVersion == "v1" && o.Kind == "Namespace" {
			r.Summary.RemovedNamespaces = append(r.Summary.RemovedNamespaces, o.Name)
			// What Argo CD does with it is what the old side told it:
			// the guardrails' sync options on the Namespace.
			fields, _ := normalize(oldObjs[o.ObjectKey].Fields) // checked above
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

// summarize sets the report's summary: what the change does to each team,
// flavor and pool, under contention, and whose approval it needs.
func (r *Report) summarize(old, new *generator.Result) error {
	r.Summary = summarize(planOf(old), planOf(new), warningsOf(old), warningsOf(new))
	contention, err := compareContention(old, new)
	if err != nil {
		return fmt.Errorf("contention: %w", err)
	}
	r.Summary.Contention = contention
	r.Summary.Pools = comparePools(orEmptyPlan(planOf(old)), orEmptyPlan(planOf(new)), backendOf(old, new))
	outcomeApprovals(orEmptyPlan(planOf(old)), orEmptyPlan(planOf(new)), &r.Summary)
	return nil
}

// compareObjects sets the report's objects and counts: each object added,
// removed or changed, in mergeOrder. It returns the old side's objects by
// identity.
func (r *Report) compareObjects(old, new *generator.Result) (map[ObjectKey]indexed, error) {
	var oldObjs, newObjs map[ObjectKey]indexed
	var oldKeys, newKeys []ObjectKey
	var oldErr, newErr error
	bothSides(func() { oldObjs, oldKeys, oldErr = index(old) }, func() { newObjs, newKeys, newErr = index(new) })
	if oldErr != nil {
		return nil, fmt.Errorf("old side: %w", oldErr)
	}
	if newErr != nil {
		return nil, fmt.Errorf("new side: %w", newErr)
	}
	keys, pair := mergeOrder(oldKeys, newKeys), byKey(oldObjs, newObjs)
	if slices.Equal(oldKeys, newKeys) {
		// The same objects in the same order (most changes: the
		// identities are unique, index said, so mergeOrder gives them
		// as they are): paired by position, without looking each up.
		keys, pair = newKeys, byPosition(old, new)
	}
	unchanged := unchangedObjects(keys, pair)
	for i, k := range keys {
		a, inOld, b, inNew := pair(i, k)
		c := ObjectChange{ObjectKey: k}
		switch {
		case !inOld:
			by, err := b.shown()
			if err != nil {
				return nil, fmt.Errorf("new side: object %s: %w", k, err)
			}
			c.Op = Added
			c.Unified = unified(k, nil, by)
			r.Counts.Added++
		case !inNew:
			ay, err := a.shown()
			if err != nil {
				return nil, fmt.Errorf("old side: object %s: %w", k, err)
			}
			c.Op = Removed
			c.Unified = unified(k, ay, nil)
			r.Counts.Removed++
		case unchanged[i]:
			r.Counts.Unchanged++
			continue
		default:
			af, err := normalize(a.Fields)
			if err != nil {
				return nil, fmt.Errorf("old side: object %s: %w", k, err)
			}
			bf, err := normalize(b.Fields)
			if err != nil {
				return nil, fmt.Errorf("new side: object %s: %w", k, err)
			}
			ay, err := a.yaml()
			if err != nil {
				return nil, fmt.Errorf("old side: object %s: %w", k, err)
			}
			by, err := b.yaml()
			if err != nil {
				return nil, fmt.Errorf("new side: object %s: %w", k, err)
			}
			c.Fields = compareFields(af, bf)
			if len(c.Fields) == 0 && bytes.Equal(ay, by) {
				r.Counts.Unchanged++
				continue
			}
			c.Op = Changed
			c.Unified = unified(k, ay, by)
			r.Counts.Changed++
		}
		r.Objects = append(r.Objects, c)
	}
	return oldObjs, nil
}

// pairing returns the objects of the i-th key of the merged order, k, on
// each side, and whether each side has one.
type pairing func(i int, k ObjectKey) (old indexed, inOld bool, new indexed, inNew bool)

// byKey pairs the objects of two sides by identity.
func byKey(old, new map[ObjectKey]indexed) pairing {
	return func(_ int, k ObjectKey) (indexed, bool, indexed, bool) {
		a, inOld := old[k]
		b, inNew := new[k]
		return a, inOld, b, inNew
	}
}

// byPosition pairs the i-th objects of two renderings whose identities are
// the same, in the same order.
func byPosition(old, new *generator.Result) pairing {
	return func(i int, _ ObjectKey) (indexed, bool, indexed, bool) {
		return indexed{old.Objects[i]}, true, indexed{new.Objects[i]}, true
	}
}

// unchangedObjects says, for each key, whether the object is on both sides
// with the same plain fields (sameFields) and YAML (sameYAML): unchanged
// without normalizing or writing YAML, which most objects of a change to
// one team are (10,000 teams: half a second to normalize, a fifth to
// write). The keys are split among the cores: each answer reads the two
// sides' objects only.
func unchangedObjects(keys []ObjectKey, pair pairing) []bool {
	out := make([]bool, len(keys))
	chunks := min(runtime.GOMAXPROCS(0), len(keys)/minChunk+1)
	var wg sync.WaitGroup
	for c := range chunks {
		lo, hi := c*len(keys)/chunks, (c+1)*len(keys)/chunks
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				a, inOld, b, inNew := pair(i, keys[i])
				out[i] = inOld && inNew && sameFields(a.Fields, b.Fields) && a.sameYAML(b)
			}
		})
	}
	wg.Wait()
	return out
}

// minChunk is the fewest objects worth a goroutine of their own.
const minChunk = 1024

// bothSides runs the two sides' work at once.
func bothSides(old, new func()) {
	var wg sync.WaitGroup
	wg.Go(old)
	new()
	wg.Wait()
}

// indexed is one rendered object: its fields as rendered (normalize gives
// them as compared), and its YAML when the rendering wrote it.
type indexed struct{ generator.Object }

// yaml is the object's YAML: as the rendering wrote it (Render), else
// written now as Render would have (encode.YAML), for a rendering that
// checked its YAML without writing it (RenderFields) and whose objects
// diff shows only where they differ.
func (x indexed) yaml() ([]byte, error) {
	if x.YAML != nil {
		return x.YAML, nil
	}
	return encode.YAML(x.Object)
}

// shown is the YAML of an added or removed object, which its unified diff
// shows alone: fields JSON cannot hold are an error on any object, as
// they were when every object was normalized.
func (x indexed) shown() ([]byte, error) {
	if _, err := normalize(x.Fields); err != nil {
		return nil, err
	}
	return x.yaml()
}

// sameYAML reports whether two objects whose fields are the same plain
// content (sameFields) have the same YAML. Without a YAML written on
// either side it is true, not compared: encode writes an object's YAML
// from its fields alone (the keys sorted, each value by its dynamic
// type), and sameFields holds only for values of the same types and
// contents (a nil map or list only for a nil one), so both would write the
// same bytes. A rendering's objects all carry YAML (Render) or none
// (RenderFields); given on both sides, it is compared, as the rendering
// wrote it.
func (x indexed) sameYAML(y indexed) bool {
	if x.YAML == nil || y.YAML == nil {
		return true
	}
	return bytes.Equal(x.YAML, y.YAML)
}

// sameFields reports whether a and b are the same plain content: maps,
// lists, strings, int64s, bools and nils, of the same types and values.
// Such values normalize without error to one value and write one YAML, so
// the object is unchanged; a string need not be UTF-8 for that (JSON
// replaces what is not, the same way on both sides). False sends the pair
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
			if !ok || !sameFields(v, w) {
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
		return ok && x == y
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
		m[k] = indexed{o}
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

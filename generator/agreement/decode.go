package agreement

import (
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/load"
)

// Keys of each table. They are the file format's public interface.
var (
	rootKeys       = append([]string{"version", "name", "backend", "flavors", "priorities", "teams", "departments", "topology", "guardrails", "monitoring", "components", "clusters", "include", "kai"}, stewardshipKeys...)
	flavorKeys     = []string{"resource", "capacity", "node_labels", "tolerations", "gpus_per_node", "node_pool", "gpu_sharing"}
	tolerationKeys = []string{"key", "operator", "value", "effect"}
	quotaKeys      = []string{"guaranteed", "lendable", "borrow", "clusters"}
	teamKeys       = append(append([]string{"namespaces", "department", "reclaim", "weight", "vms", "retiring", "flavors", "windows"}, quotaKeys...), stewardshipKeys...)
	topologyKeys   = []string{"levels"}
)

// Decode turns a parsed document into an Agreement and applies the format's
// defaults (see defaults), so every later step reads the same values.
// Problems are returned as error diagnostics; decoding goes on past them so
// one run reports all.
func Decode(file string, root *load.Value) (*Agreement, diag.List) {
	d := &decoder{r: diag.Reporter{File: file}}
	a := &Agreement{File: file}
	t := root.Table
	d.unknown(t, nil, rootKeys)

	a.Version = d.int(t.Get("version"), field.NewPath("version"))
	a.Name = d.str(t.Get("name"), field.NewPath("name"))
	a.Backend = d.backend(t.Get("backend"), field.NewPath("backend"))
	a.Stewardship = d.stewardship(t, nil)

	if v := d.table(t.Get("flavors"), field.NewPath("flavors")); v != nil {
		for _, name := range v.Table.Keys {
			a.Flavors = append(a.Flavors, d.flavor(name, v.Table.Get(name)))
		}
	}
	priorities := field.NewPath("priorities")
	if v := d.table(t.Get("priorities"), priorities); v != nil {
		for _, name := range v.Table.Keys {
			a.Priorities = append(a.Priorities, d.priority(name, v.Table.Get(name), diag.Key(priorities, name)))
		}
	}
	if v := d.table(t.Get("teams"), field.NewPath("teams")); v != nil {
		for _, name := range v.Table.Keys {
			if team := d.team(name, v.Table.Get(name)); team != nil {
				a.Teams = append(a.Teams, team)
			}
		}
	}
	if v := d.table(t.Get("departments"), field.NewPath("departments")); v != nil {
		for _, name := range v.Table.Keys {
			if dept := d.department(name, v.Table.Get(name)); dept != nil {
				a.Departments = append(a.Departments, dept)
			}
		}
	}
	topology := field.NewPath("topology")
	if v := d.table(t.Get("topology"), topology); v != nil {
		a.Topology = &Topology{Pos: v.KeyPos, Path: topology}
		d.unknown(v.Table, topology, topologyKeys)
		a.Topology.Levels = d.strings(v.Table.Get("levels"), topology.Child("levels"))
	}
	a.Guardrails = d.guardrails(t.Get("guardrails"))
	a.Monitoring = d.monitoring(t.Get("monitoring"))
	a.Components = d.components(t.Get("components"))
	a.Clusters = d.clusters(t.Get("clusters"))
	a.KAI = d.kai(t.Get("kai"))
	if c := t.Get("clusters"); c != nil {
		a.ClustersPos = c.KeyPos
	}
	defaults(a)
	return a, d.r.List
}

type decoder struct {
	r diag.Reporter
}

// unknown reports keys that are not in known, suggesting the closest known
// key so a typo such as lendible is obvious.
func (d *decoder) unknown(t *load.Fields, path *field.Path, known []string) {
	for _, k := range t.Keys {
		if slices.Contains(known, k) {
			continue
		}
		msg := fmt.Sprintf("unknown key %q", k)
		if s := suggest(k, known); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		} else {
			sorted := slices.Sorted(slices.Values(known))
			msg += fmt.Sprintf(" (known keys: %s)", strings.Join(sorted, ", "))
		}
		d.r.Errorf(field.ErrorTypeNotSupported, t.Get(k).KeyPos, diag.Key(path, k), "%s", msg)
	}
}

func (d *decoder) typeError(v *load.Value, path *field.Path, want string) {
	got := v.Kind.String()
	if v.Kind != load.Table && v.Kind != load.Array {
		got += " " + v.Raw
	}
	d.r.Errorf(field.ErrorTypeTypeInvalid, v.Pos, path, "must be %s, got %s", want, got)
}

func (d *decoder) table(v *load.Value, path *field.Path) *load.Value {
	if v == nil {
		return nil
	}
	if v.Kind != load.Table {
		d.typeError(v, path, "a table")
		return nil
	}
	return v
}

func (d *decoder) int(v *load.Value, path *field.Path) Int {
	if v == nil {
		return Int{Path: path}
	}
	out := Int{Pos: v.Pos, Path: path, State: Invalid}
	switch {
	case v.Kind == load.Integer:
		out.Value, out.State = v.Int, Set
	case v.Kind == load.Float && v.Float == math.Trunc(v.Float) && math.Abs(v.Float) < 1<<53:
		d.r.Errorf(field.ErrorTypeTypeInvalid, v.Pos, path, "must be an integer, got float %s (write %d)", v.Raw, int64(v.Float))
	case v.Kind == load.Float:
		d.r.Errorf(field.ErrorTypeTypeInvalid, v.Pos, path, "must be a whole number, got %s", v.Raw)
	default:
		d.typeError(v, path, "an integer")
	}
	return out
}

func (d *decoder) bool(v *load.Value, path *field.Path) Bool {
	return scalar(d, v, path, load.Bool, "true or false", func(v *load.Value) bool { return v.Bool })
}

func (d *decoder) str(v *load.Value, path *field.Path) Str {
	return scalar(d, v, path, load.String, "a string", func(v *load.Value) string { return v.Str })
}

// scalar decodes a value that is right when it is of one kind, read by
// value; want says in a type error what it must be.
func scalar[T any](d *decoder, v *load.Value, path *field.Path, kind load.Kind, want string, value func(*load.Value) T) Scalar[T] {
	if v == nil {
		return Scalar[T]{Path: path}
	}
	if v.Kind != kind {
		d.typeError(v, path, want)
		return Scalar[T]{Pos: v.Pos, Path: path, State: Invalid}
	}
	return Scalar[T]{Value: value(v), State: Set, Pos: v.Pos, Path: path}
}

func (d *decoder) strings(v *load.Value, path *field.Path) []Str {
	if v == nil {
		return nil
	}
	if v.Kind != load.Array {
		d.typeError(v, path, "an array of strings")
		return []Str{} // written, so not nil: nil means absent
	}
	out := make([]Str, 0, len(v.Items))
	for i, item := range v.Items {
		s := d.str(item, path.Index(i))
		if s.IsSet() {
			out = append(out, s)
		}
	}
	return out
}

// backend decodes the backend key: one name (backend = "kueue") or a list
// (backend = ["kueue", "kai"]); either way a list of names, in the order
// written. Which names are known is validate's to say.
func (d *decoder) backend(v *load.Value, path *field.Path) Scalar[[]Str] {
	if v == nil {
		return Scalar[[]Str]{Path: path}
	}
	out := Scalar[[]Str]{Pos: v.Pos, Path: path, State: Set}
	switch v.Kind {
	case load.String:
		out.Value = []Str{{Value: v.Str, State: Set, Pos: v.Pos, Path: path}}
	case load.Array:
		out.Value = d.strings(v, path)
		if len(out.Value) < len(v.Items) {
			out.State = Invalid // an item that is not a string, reported
		}
	default:
		d.typeError(v, path, `a string ("kueue" or "kai") or an array of them`)
		out.State = Invalid
	}
	return out
}

// labels decodes a table of string values, such as node_labels; each
// label's position is its key's.
func (d *decoder) labels(v *load.Value, path *field.Path) []Label {
	tv := d.table(v, path)
	if tv == nil {
		return nil
	}
	var out []Label
	for _, k := range tv.Table.Keys {
		lv := tv.Table.Get(k)
		s := d.str(lv, diag.Key(path, k))
		s.Pos = lv.KeyPos
		out = append(out, Label{Key: k, Value: s})
	}
	return out
}

func (d *decoder) flavor(name string, v *load.Value) *Flavor {
	path := diag.Key(field.NewPath("flavors"), name)
	f := &Flavor{Name: name, Path: path, Pos: v.KeyPos}
	if d.table(v, path) == nil {
		return f
	}
	t := v.Table
	d.unknown(t, path, flavorKeys)
	f.Resource = d.str(t.Get("resource"), path.Child("resource"))
	f.Capacity = d.int(t.Get("capacity"), path.Child("capacity"))
	f.GPUsPerNode = d.int(t.Get("gpus_per_node"), path.Child("gpus_per_node"))
	f.NodeLabels = d.labels(t.Get("node_labels"), path.Child("node_labels"))
	f.NodePool = d.str(t.Get("node_pool"), path.Child("node_pool"))
	f.GPUSharing = d.str(t.Get("gpu_sharing"), path.Child("gpu_sharing"))
	if tv := t.Get("tolerations"); tv != nil {
		tpath := path.Child("tolerations")
		if tv.Kind != load.Array {
			d.typeError(tv, tpath, "an array of tables")
		} else {
			for i, item := range tv.Items {
				ipath := tpath.Index(i)
				if d.table(item, ipath) == nil {
					continue
				}
				d.unknown(item.Table, ipath, tolerationKeys)
				f.Tolerations = append(f.Tolerations, &Toleration{
					Pos:      item.Pos,
					Path:     ipath,
					Key:      d.str(item.Table.Get("key"), ipath.Child("key")),
					Operator: d.str(item.Table.Get("operator"), ipath.Child("operator")),
					Value:    d.str(item.Table.Get("value"), ipath.Child("value")),
					Effect:   d.str(item.Table.Get("effect"), ipath.Child("effect")),
				})
			}
		}
	}
	return f
}

func (d *decoder) team(name string, v *load.Value) *Team {
	path := diag.Key(field.NewPath("teams"), name)
	if d.table(v, path) == nil {
		return nil
	}
	t := v.Table
	team := &Team{Name: name, Pos: v.KeyPos, Path: path}
	d.unknown(t, path, teamKeys)
	if ns := t.Get("namespaces"); ns != nil {
		team.Namespaces = d.strings(ns, path.Child("namespaces"))
		if ns.Kind == load.Array && len(ns.Items) == 0 {
			d.r.Errorf(field.ErrorTypeRequired, ns.Pos, path.Child("namespaces"), "must list at least one namespace (leave it out for the team's own, %s)", name)
			d.r.Suggest("namespaces = [" + diag.TOMLString(name) + "]")
		}
	}
	team.Department = d.str(t.Get("department"), path.Child("department"))
	team.Reclaim = d.str(t.Get("reclaim"), path.Child("reclaim"))
	team.Weight = d.int(t.Get("weight"), path.Child("weight"))
	team.VMs = d.int(t.Get("vms"), path.Child("vms"))
	team.Retiring = d.bool(t.Get("retiring"), path.Child("retiring"))
	team.Stewardship = d.stewardship(t, path)

	team.Shorthand, team.Flavors = d.quotas(v, path)
	team.Windows = d.windows(t.Get("windows"), path.Child("windows"))
	return team
}

// quotas decodes the quota keys written on a team's or a department's table
// (the one-flavor shorthand; nil when none is written) and its
// [NAME.flavors.FLAVOR] tables.
func (d *decoder) quotas(v *load.Value, path *field.Path) (shorthand *Quota, flavors []*Quota) {
	t := v.Table
	for _, k := range quotaKeys {
		if t.Get(k) != nil {
			shorthand = d.quota("", v, path)
			break
		}
	}
	if shorthand != nil {
		shorthand.Clusters = d.clusterShares(t.Get("clusters"), path.Child("clusters"))
	}
	for f := range d.flavorTables(t.Get("flavors"), path.Child("flavors")) {
		d.unknown(f.Value.Table, f.Path, quotaKeys)
		q := d.quota(f.Name, f.Value, f.Path)
		q.Clusters = d.clusterShares(f.Value.Table.Get("clusters"), f.Path.Child("clusters"))
		flavors = append(flavors, q)
	}
	return shorthand, flavors
}

// flavorTable is one [NAME.flavors.FLAVOR] table.
type flavorTable struct {
	Name  string
	Value *load.Value
	Path  *field.Path
}

// flavorTables yields the tables under a flavors table (v, at path), in the
// file's order; what is not a table is reported and skipped. Teams,
// departments and windows check these tables against different key lists,
// so each caller names its own list at its own d.unknown call: that is
// where TestTableKeysCoverEveryDecodedTable reads which keys each table
// may hold.
func (d *decoder) flavorTables(v *load.Value, path *field.Path) iter.Seq[flavorTable] {
	return func(yield func(flavorTable) bool) {
		if d.table(v, path) == nil {
			return
		}
		for _, name := range v.Table.Keys {
			f := flavorTable{Name: name, Value: v.Table.Get(name), Path: diag.Key(path, name)}
			if d.table(f.Value, f.Path) == nil {
				continue
			}
			if !yield(f) {
				return
			}
		}
	}
}

func (d *decoder) quota(flavor string, v *load.Value, path *field.Path) *Quota {
	t := v.Table
	return &Quota{
		Flavor:     flavor,
		Pos:        v.KeyPos,
		Path:       path,
		Guaranteed: d.int(t.Get("guaranteed"), path.Child("guaranteed")),
		Lendable:   d.int(t.Get("lendable"), path.Child("lendable")),
		Borrow:     d.int(t.Get("borrow"), path.Child("borrow")),
	}
}

// Suggest returns the known name closest to k when it is close enough to be
// a likely typo; empty otherwise. Validation uses it for names that refer to
// other tables, such as a team's department.
func Suggest(k string, known []string) string { return suggest(k, known) }

// suggest returns the known key closest to k when it is close enough to be
// a likely typo.
func suggest(k string, known []string) string {
	best, bestDist := "", 3
	for _, c := range known {
		if dist := levenshtein(strings.ToLower(k), c); dist < bestDist {
			best, bestDist = c, dist
		}
	}
	return best
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

package agreement

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/load"
)

// Keys of each table. They are the file format's public interface.
var (
	rootKeys       = []string{"version", "name", "flavors", "priorities", "teams", "topology"}
	flavorKeys     = []string{"resource", "capacity", "node_labels", "tolerations"}
	tolerationKeys = []string{"key", "operator", "value", "effect"}
	quotaKeys      = []string{"guaranteed", "lendable", "borrow"}
	teamKeys       = append([]string{"namespaces", "reclaim", "weight", "vms", "flavors"}, quotaKeys...)
	topologyKeys   = []string{"levels"}
)

// Decode turns a parsed document into an Agreement. Problems are returned as
// error diagnostics; decoding goes on past them so one run reports all.
func Decode(file string, root *load.Value) (*Agreement, diag.List) {
	d := &decoder{file: file}
	a := &Agreement{File: file}
	t := root.Table
	d.unknown(t, "", rootKeys)

	a.Version = d.int(t.Get("version"), "version")
	a.Name = d.str(t.Get("name"), "name")

	if v := d.table(t.Get("flavors"), "flavors"); v != nil {
		for _, name := range v.Table.Keys {
			a.Flavors = append(a.Flavors, d.flavor(name, v.Table.Get(name)))
		}
	}
	if v := d.table(t.Get("priorities"), "priorities"); v != nil {
		for _, name := range v.Table.Keys {
			a.Priorities = append(a.Priorities, &Priority{Name: name, Value: d.int(v.Table.Get(name), "priorities."+quote(name))})
		}
	}
	if v := d.table(t.Get("teams"), "teams"); v != nil {
		for _, name := range v.Table.Keys {
			if team := d.team(name, v.Table.Get(name)); team != nil {
				a.Teams = append(a.Teams, team)
			}
		}
	}
	if v := d.table(t.Get("topology"), "topology"); v != nil {
		a.Topology = &Topology{Pos: v.KeyPos, Path: "topology"}
		d.unknown(v.Table, "topology", topologyKeys)
		a.Topology.Levels = d.strings(v.Table.Get("levels"), "topology.levels")
	}
	return a, d.diags
}

type decoder struct {
	file  string
	diags diag.List
}

func (d *decoder) errorf(pos Pos, path, format string, args ...any) {
	d.diags = append(d.diags, diag.Diagnostic{
		Severity: diag.Error, File: d.file, Line: pos.Line, Column: pos.Column,
		Field: path, Message: fmt.Sprintf(format, args...),
	})
}

// quote returns a TOML key as it appears in a field path: bare when it can
// be, quoted otherwise (a flavor or team name with a dot in it).
func quote(key string) string {
	for _, r := range key {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Sprintf("%q", key)
		}
	}
	if key == "" {
		return `""`
	}
	return key
}

func join(path, key string) string {
	if path == "" {
		return quote(key)
	}
	return path + "." + quote(key)
}

// unknown reports keys that are not in known, suggesting the closest known
// key so a typo such as lendible is obvious.
func (d *decoder) unknown(t *load.Fields, path string, known []string) {
	for _, k := range t.Keys {
		if contains(known, k) {
			continue
		}
		msg := fmt.Sprintf("unknown key %q", k)
		if s := suggest(k, known); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		} else {
			sorted := append([]string(nil), known...)
			sort.Strings(sorted)
			msg += fmt.Sprintf(" (known keys: %s)", strings.Join(sorted, ", "))
		}
		d.errorf(t.Get(k).KeyPos, join(path, k), "%s", msg)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (d *decoder) typeError(v *load.Value, path, want string) {
	got := v.Kind.String()
	if v.Kind != load.Table && v.Kind != load.Array {
		got += " " + v.Raw
	}
	d.errorf(v.Pos, path, "must be %s, got %s", want, got)
}

func (d *decoder) table(v *load.Value, path string) *load.Value {
	if v == nil {
		return nil
	}
	if v.Kind != load.Table {
		d.typeError(v, path, "a table")
		return nil
	}
	return v
}

func (d *decoder) int(v *load.Value, path string) Int {
	if v == nil {
		return Int{Path: path}
	}
	out := Int{Pos: v.Pos, Path: path}
	switch {
	case v.Kind == load.Integer:
		out.Value, out.Set = v.Int, true
	case v.Kind == load.Float && v.Float == math.Trunc(v.Float) && math.Abs(v.Float) < 1<<53:
		d.errorf(v.Pos, path, "must be an integer, got float %s (write %d)", v.Raw, int64(v.Float))
	case v.Kind == load.Float:
		d.errorf(v.Pos, path, "must be a whole number, got %s", v.Raw)
	default:
		d.typeError(v, path, "an integer")
	}
	return out
}

func (d *decoder) str(v *load.Value, path string) Str {
	if v == nil {
		return Str{Path: path}
	}
	if v.Kind != load.String {
		d.typeError(v, path, "a string")
		return Str{Pos: v.Pos, Path: path}
	}
	return Str{Value: v.Str, Set: true, Pos: v.Pos, Path: path}
}

func (d *decoder) strings(v *load.Value, path string) []Str {
	if v == nil {
		return nil
	}
	if v.Kind != load.Array {
		d.typeError(v, path, "an array of strings")
		return nil
	}
	out := make([]Str, 0, len(v.Items))
	for i, item := range v.Items {
		s := d.str(item, fmt.Sprintf("%s[%d]", path, i))
		if s.Set {
			out = append(out, s)
		}
	}
	return out
}

func (d *decoder) flavor(name string, v *load.Value) *Flavor {
	path := join("flavors", name)
	f := &Flavor{Name: name, Path: path, Pos: v.KeyPos}
	if d.table(v, path) == nil {
		return f
	}
	t := v.Table
	d.unknown(t, path, flavorKeys)
	f.Resource = d.str(t.Get("resource"), path+".resource")
	f.Capacity = d.int(t.Get("capacity"), path+".capacity")
	f.Capacity.Pos = keyOr(t.Get("capacity"), f.Pos)
	if labels := d.table(t.Get("node_labels"), path+".node_labels"); labels != nil {
		for _, k := range labels.Table.Keys {
			lv := labels.Table.Get(k)
			s := d.str(lv, join(path+".node_labels", k))
			s.Pos = lv.KeyPos
			f.NodeLabels = append(f.NodeLabels, Label{Key: k, Value: s})
		}
	}
	if tv := t.Get("tolerations"); tv != nil {
		tpath := path + ".tolerations"
		if tv.Kind != load.Array {
			d.typeError(tv, tpath, "an array of tables")
		} else {
			for i, item := range tv.Items {
				ipath := fmt.Sprintf("%s[%d]", tpath, i)
				if d.table(item, ipath) == nil {
					continue
				}
				d.unknown(item.Table, ipath, tolerationKeys)
				f.Tolerations = append(f.Tolerations, &Toleration{
					Pos:      item.Pos,
					Path:     ipath,
					Key:      d.str(item.Table.Get("key"), ipath+".key"),
					Operator: d.str(item.Table.Get("operator"), ipath+".operator"),
					Value:    d.str(item.Table.Get("value"), ipath+".value"),
					Effect:   d.str(item.Table.Get("effect"), ipath+".effect"),
				})
			}
		}
	}
	return f
}

// keyOr points a field at its key when it has one, else at the table.
func keyOr(v *load.Value, fallback Pos) Pos {
	if v == nil {
		return fallback
	}
	return v.Pos
}

func (d *decoder) team(name string, v *load.Value) *Team {
	path := join("teams", name)
	if d.table(v, path) == nil {
		return nil
	}
	t := v.Table
	team := &Team{Name: name, Pos: v.KeyPos, Path: path}
	d.unknown(t, path, teamKeys)
	if ns := t.Get("namespaces"); ns != nil {
		team.NamespacesField = Str{Set: true, Pos: ns.KeyPos, Path: path + ".namespaces"}
		team.Namespaces = d.strings(ns, path+".namespaces")
		if ns.Kind == load.Array && len(ns.Items) == 0 {
			d.errorf(ns.Pos, path+".namespaces", "must list at least one namespace (leave it out to use [%q])", name)
		}
	}
	team.Reclaim = d.str(t.Get("reclaim"), path+".reclaim")
	team.Weight = d.int(t.Get("weight"), path+".weight")
	team.VMs = d.int(t.Get("vms"), path+".vms")

	for _, k := range quotaKeys {
		if t.Get(k) != nil {
			team.Shorthand = d.quota("", v, path)
			break
		}
	}
	if fv := d.table(t.Get("flavors"), path+".flavors"); fv != nil {
		for _, fname := range fv.Table.Keys {
			qv := fv.Table.Get(fname)
			qpath := join(path+".flavors", fname)
			if d.table(qv, qpath) == nil {
				continue
			}
			d.unknown(qv.Table, qpath, quotaKeys)
			q := d.quota(fname, qv, qpath)
			q.Pos = qv.KeyPos
			team.Flavors = append(team.Flavors, q)
		}
	}
	return team
}

func (d *decoder) quota(flavor string, v *load.Value, path string) *Quota {
	t := v.Table
	return &Quota{
		Flavor:     flavor,
		Pos:        v.KeyPos,
		Path:       path,
		Guaranteed: d.int(t.Get("guaranteed"), path+".guaranteed"),
		Lendable:   d.int(t.Get("lendable"), path+".lendable"),
		Borrow:     d.int(t.Get("borrow"), path+".borrow"),
	}
}

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

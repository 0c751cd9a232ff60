package agreement

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/load"
)

// Keys of a [[teams.NAME.windows]] table and of its flavor tables: when it
// opens, and what of the team's quota changes while it is open.
var (
	windowKeys      = []string{"days", "from", "to", "timezone", "lendable", "borrow", "flavors"}
	windowQuotaKeys = []string{"lendable", "borrow"}
)

// Window is one [[teams.NAME.windows]] table: a weekly interval of local
// time inside which the team lends and borrows other amounts than outside.
type Window struct {
	Pos  Pos
	Path *field.Path // teams.NAME.windows[i]
	// Days the window opens; nil when the key is absent (every day).
	Days     []Str
	DaysPos  Pos // the days key's value; zero when absent
	From, To Str
	// Timezone is Defaulted to "UTC".
	Timezone Str
	// Shorthand holds lendable and borrow written on the window itself,
	// allowed when the agreement has one flavor; nil when none were written.
	Shorthand *Quota
	// Flavors holds [teams.NAME.windows.flavors.FLAVOR] tables.
	Flavors []*Quota
	// ByFlavor resolves the shorthand per known flavor, as for a team.
	ByFlavor map[string]*Quota
}

// windows decodes a team's windows key: an array of tables.
func (d *decoder) windows(v *load.Value, path *field.Path) []*Window {
	if v == nil {
		return nil
	}
	if v.Kind != load.Array {
		d.typeError(v, path, "an array of tables ([[teams.NAME.windows]])")
		return nil
	}
	var out []*Window
	for i, item := range v.Items {
		ipath := path.Index(i)
		if d.table(item, ipath) == nil {
			continue
		}
		t := item.Table
		d.unknown(t, ipath, windowKeys)
		w := &Window{Pos: item.KeyPos, Path: ipath}
		if w.Pos.IsZero() {
			w.Pos = item.Pos
		}
		if dv := t.Get("days"); dv != nil {
			w.Days = d.strings(dv, ipath.Child("days"))
			w.DaysPos = dv.Pos
		}
		w.From = d.str(t.Get("from"), ipath.Child("from"))
		w.To = d.str(t.Get("to"), ipath.Child("to"))
		w.Timezone = d.str(t.Get("timezone"), ipath.Child("timezone"))
		if t.Get("lendable") != nil || t.Get("borrow") != nil {
			w.Shorthand = d.quota("", item, ipath)
		}
		for f := range d.flavorTables(t.Get("flavors"), ipath.Child("flavors")) {
			d.unknown(f.Value.Table, f.Path, windowQuotaKeys)
			w.Flavors = append(w.Flavors, d.quota(f.Name, f.Value, f.Path))
		}
		out = append(out, w)
	}
	return out
}

// defaultWindows fills a window's zone and resolves its quotas per flavor.
func defaultWindows(a *Agreement, t *Team) {
	for _, w := range t.Windows {
		if w.Timezone.State == Unset {
			w.Timezone = Str{Value: "UTC", State: Defaulted, Pos: w.Pos, Path: w.Timezone.Path}
		}
		w.ByFlavor = byFlavor(a, w.Shorthand, w.Flavors)
	}
}

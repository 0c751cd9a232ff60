package validate

import (
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/agreement"
	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/windows"
)

// windows checks each team's [[teams.NAME.windows]]: days, times and zone
// that parse, values that keep the agreement inside the window (the team's
// own rules, lendable within its guarantee), and windows of one team that
// never overlap. Windows of one team must share a zone: overlap is then
// decided exactly on wall-clock minutes of a week (see windows.Overlap),
// where across zones it would depend on the year's clock changes.
func (v *validator) windows() {
	for _, t := range v.a.Teams {
		var specs []windows.Spec
		var valid []*agreement.Window
		for _, w := range t.Windows {
			spec, ok := v.window(t, w)
			if ok {
				specs = append(specs, spec)
				valid = append(valid, w)
			}
		}
		for j := range valid {
			for i := range j {
				a, b := valid[i], valid[j]
				if specs[i].Zone != specs[j].Zone {
					v.errorf(field.ErrorTypeInvalid, b.Timezone.Pos, b.Timezone.Path, "timezone %q differs from %q of the team's window at line %d: windows of one team share one timezone, so whether they overlap does not depend on the year's clock changes", specs[j].Zone, specs[i].Zone, a.Pos.Line)
					continue
				}
				if day, over := windows.Overlap(specs[i], specs[j]); over {
					v.errorf(field.ErrorTypeDuplicate, b.From.Pos, b.Path, "overlaps the team's window at line %d (%s) on %s: windows of one team must not overlap, which values would apply?", a.Pos.Line, specs[i].Describe(), windows.DayName(day))
				}
			}
		}
	}
}

// window checks one window and returns its schedule when it is valid.
func (v *validator) window(t *agreement.Team, w *agreement.Window) (windows.Spec, bool) {
	ok := true
	spec := windows.Spec{Zone: w.Timezone.Value}
	if w.Days == nil {
		spec.Days = windows.EveryDay
	} else {
		if len(w.Days) == 0 && !w.DaysPos.IsZero() {
			v.errorf(field.ErrorTypeRequired, w.DaysPos, w.Path.Child("days"), "must list at least one day (leave it out for every day)")
			ok = false
		}
		seen := map[time.Weekday]bool{}
		first := map[time.Weekday]string{} // each day as first written
		for _, s := range w.Days {
			d, known := windows.ParseDay(s.Value)
			switch {
			case !known:
				v.errorf(field.ErrorTypeNotSupported, s.Pos, s.Path, "unknown day %q: write Mon, Tue, Wed, Thu, Fri, Sat or Sun (in any case)", s.Value)
				ok = false
			case seen[d] && first[d] == s.Value:
				v.errorf(field.ErrorTypeDuplicate, s.Pos, s.Path, "day %q is listed twice", s.Value)
			case seen[d]:
				v.errorf(field.ErrorTypeDuplicate, s.Pos, s.Path, "day %q is listed twice (as %q too): day names are read in any case", s.Value, first[d])
			default:
				seen[d], first[d] = true, s.Value
			}
		}
		spec.Days = windows.SortDays(seen)
	}
	clock := func(s agreement.Str, which string) windows.Clock {
		switch s.State {
		case agreement.Unset:
			v.errorf(field.ErrorTypeRequired, w.Pos, s.Path, "is required: when the window %s, local time HH:MM", map[string]string{"from": "opens", "to": "closes"}[which])
			v.suggest("%s = %s", which, map[string]string{"from": `"20:00"`, "to": `"06:00"`}[which])
			ok = false
		case agreement.Set:
			c, err := windows.ParseClock(s.Value)
			if err != nil {
				v.errorf(field.ErrorTypeInvalid, s.Pos, s.Path, "%v", err)
				ok = false
			}
			return c
		default:
			ok = false
		}
		return 0
	}
	spec.From = clock(w.From, "from")
	spec.To = clock(w.To, "to")
	if ok && spec.From == spec.To {
		v.errorf(field.ErrorTypeInvalid, w.To.Pos, w.To.Path, "equals from (%s): the window would be empty or a whole day; for a whole day write the team's lendable and borrow instead", spec.From)
		ok = false
	}
	if w.Timezone.IsSet() {
		if _, err := windows.LoadZone(w.Timezone.Value); err != nil {
			v.errorf(field.ErrorTypeNotFound, w.Timezone.Pos, w.Timezone.Path, "%v", err)
			ok = false
		}
	} else if w.Timezone.State == agreement.Invalid {
		ok = false
	}
	v.windowQuotas(t, w)
	return spec, ok
}

// windowQuotas checks a window's lendable and borrow as the team's own:
// the one-flavor shorthand, known flavors, counts, and lendable within the
// team's guarantee of the flavor.
func (v *validator) windowQuotas(t *agreement.Team, w *agreement.Window) {
	if w.Shorthand != nil {
		switch {
		case len(v.a.Flavors) > 1:
			first := firstSet(w.Shorthand)
			v.errorf(field.ErrorTypeForbidden, first.Pos, first.Path, "the agreement has several flavors (%s): give lendable and borrow per flavor, in this [[teams.%s.windows]] entry (line %d)", v.flavorNames(), diag.TOMLKey(t.Name), w.Pos.Line)
			if keys := quotaKeys(w.Shorthand, ", "); keys != "" {
				v.suggest("flavors.%s = { %s }", diag.TOMLKey(v.teamFlavor(t)), keys)
			}
		case len(w.Flavors) > 0:
			v.errorf(field.ErrorTypeForbidden, w.Flavors[0].Pos, w.Flavors[0].Path, "lendable and borrow are given both on the window and under flavors: use one form")
		}
	}
	for _, q := range w.Flavors {
		if v.a.Flavor(q.Flavor) == nil {
			v.errorf(field.ErrorTypeNotFound, q.Pos, q.Path, "unknown flavor %q (flavors: %s)", q.Flavor, v.flavorNames())
		}
	}
	quotas := append([]*agreement.Quota{}, w.Flavors...)
	if w.Shorthand != nil {
		quotas = append(quotas, w.Shorthand)
	}
	changes := false
	for _, q := range quotas {
		for _, n := range []agreement.Int{q.Lendable, q.Borrow} {
			if n.State != agreement.Unset {
				changes = true
			}
			if n.IsSet() && n.Value < 0 {
				v.errorf(field.ErrorTypeInvalid, n.Pos, n.Path, "must not be negative, got %d", n.Value)
			}
			v.count(n)
		}
	}
	for flavor, q := range w.ByFlavor {
		if !q.Lendable.IsSet() {
			continue
		}
		var guaranteed int64
		if tq := t.ByFlavor[flavor]; tq != nil {
			guaranteed = tq.Guaranteed.Value
		}
		if q.Lendable.Value > guaranteed && guaranteed >= 0 {
			v.errorf(field.ErrorTypeInvalid, q.Lendable.Pos, q.Lendable.Path, "lendable (%d) exceeds the team's guaranteed %d of flavor %s: inside a window, too, a team can only lend GPUs it is guaranteed", q.Lendable.Value, guaranteed, flavor)
		}
	}
	if !changes && len(w.Flavors) == 0 {
		v.warnf(field.ErrorTypeRequired, w.Pos, w.Path, "changes nothing: give the window a lendable or a borrow")
	}
}

// lendAtMost is the most of flavor the team lends at any time: its
// lendable, or a window's when larger, so a borrow that only a window can
// fill is not reported as one nobody can fill.
func (v *validator) lendAtMost(t *agreement.Team, flavor string) int64 {
	var most int64
	if q := t.ByFlavor[flavor]; q != nil {
		most = max(q.Lendable.Value, 0)
	}
	for _, w := range t.Windows {
		if q := w.ByFlavor[flavor]; q != nil && q.Lendable.IsSet() {
			most = max(most, q.Lendable.Value)
		}
	}
	return most
}

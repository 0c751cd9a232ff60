package plan

import (
	"time"

	"github.com/tenancy-dev/tenancy/generator/agreement"
	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/windows"
)

// Window is one lending window of a team: its weekly schedule and the
// team's quota while it is open.
type Window struct {
	Schedule windows.Spec
	// Quotas is the team's quota inside the window, one per flavor in
	// flavor order: Guaranteed as outside, Lendable and Borrow the window's
	// where it writes them, the team's otherwise.
	Quotas []Quota
	Origin diag.Origin // the [[teams.NAME.windows]] table
}

// Quota returns the team's quota for a flavor inside the window.
func (w *Window) Quota(flavor string) Quota {
	for _, q := range w.Quotas {
		if q.Flavor == flavor {
			return q
		}
	}
	return Quota{Flavor: flavor}
}

// HasWindows reports whether any team has a lending window: the render then
// adds the controller that applies them.
func (a *Agreement) HasWindows() bool {
	for i := range a.Teams {
		if len(a.Teams[i].Windows) > 0 {
			return true
		}
	}
	return false
}

// buildWindows plans a team's windows from its planned quotas. Days and
// times that fail to parse (reported by validation) are left at zero.
func buildWindows(t *agreement.Team, quotas []Quota) []Window {
	var out []Window
	for _, w := range t.Windows {
		s := windows.Spec{Zone: w.Timezone.Value}
		if w.Days == nil {
			s.Days = windows.EveryDay
		} else {
			seen := map[time.Weekday]bool{}
			for _, d := range w.Days {
				if day, ok := windows.ParseDay(d.Value); ok {
					seen[day] = true
				}
			}
			s.Days = windows.SortDays(seen)
		}
		s.From, _ = windows.ParseClock(w.From.Value)
		s.To, _ = windows.ParseClock(w.To.Value)
		pw := Window{Schedule: s, Origin: origin(w.Pos, w.Path)}
		for _, q := range quotas {
			if wq := w.ByFlavor[q.Flavor]; wq != nil {
				if wq.Lendable.IsSet() {
					q.Lendable, q.Origin.Lendable = wq.Lendable.Value, origin(wq.Lendable.Pos, wq.Lendable.Path)
				}
				if wq.Borrow.IsSet() {
					q.Borrow, q.Origin.Borrow = wq.Borrow.Value, origin(wq.Borrow.Pos, wq.Borrow.Path)
				}
			}
			pw.Quotas = append(pw.Quotas, q)
		}
		out = append(out, pw)
	}
	return out
}

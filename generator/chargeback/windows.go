package chargeback

import (
	"strconv"
	"time"

	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/schedule"
)

// windowModels returns, for an agreement with lending windows, the model of
// the agreement at an instant (the quotas the windows give then), so a
// step inside a window attributes lending by the window's lendable. Models
// are cached per set of open windows: a month of steps has few.
func windowModels(p *plan.Agreement, b gpu.Backend) func(time.Time) *Model {
	cache := map[string]*Model{}
	return func(at time.Time) *Model {
		s, err := schedule.At(p, at)
		if err != nil || len(s.Open) == 0 {
			return nil
		}
		var key string
		for _, o := range s.Open {
			key += o.Team + "/" + strconv.Itoa(o.Index) + ","
		}
		if m, ok := cache[key]; ok {
			return m
		}
		q := schedule.Apply(p, s)
		for i := range q.Teams {
			q.Teams[i].Windows = nil // the copy has the instant's quotas and no windows
		}
		m, err := NewModel(q, b)
		if err != nil {
			return nil
		}
		cache[key] = m
		return m
	}
}

// lendable is what team t lends at most of flavor at the instant: its
// window's lendable while one is open, its own otherwise.
func (m *Model) lendable(t Team, flavor string, at time.Time) float64 {
	if m.at != nil {
		if wm := m.at(at); wm != nil {
			if wt := wm.Team(t.Name); wt != nil {
				return float64(wt.Quotas[flavor].Lendable)
			}
		}
	}
	return float64(t.Quotas[flavor].Lendable)
}

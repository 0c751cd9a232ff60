package plan

import "github.com/tenancy-dev/tenancy/generator/agreement"

// Monitoring is the [monitoring] table, defaults applied: what the
// PrometheusRule, the dashboard and tenancy report need beyond the quotas.
type Monitoring struct {
	// Enabled: render the PrometheusRule and the dashboard. The prices
	// serve tenancy report either way.
	Enabled    bool
	Namespace  string
	RuleLabels map[string]string // nil when none
	Currency   string
	// Prices is the price of a GPU-hour by flavor; a flavor left out costs 0.
	Prices               map[string]float64
	OwnerWaitingMinutes  int64
	SquattingUtilization int64 // percent
	SquattingHours       int64
}

// Price returns a flavor's price per GPU-hour, 0 when the agreement gives none.
func (m *Monitoring) Price(flavor string) float64 { return m.Prices[flavor] }

// buildMonitoring returns the plan's monitoring, nil without the table.
func buildMonitoring(m *agreement.Monitoring) *Monitoring {
	if m == nil {
		return nil
	}
	out := &Monitoring{
		Enabled:              m.Enabled.Value,
		Namespace:            m.Namespace.Value,
		Currency:             m.Currency.Value,
		Prices:               map[string]float64{},
		OwnerWaitingMinutes:  m.OwnerWaitingMinutes.Value,
		SquattingUtilization: m.SquattingUtilization.Value,
		SquattingHours:       m.SquattingHours.Value,
	}
	for _, l := range m.RuleLabels {
		if out.RuleLabels == nil {
			out.RuleLabels = map[string]string{}
		}
		out.RuleLabels[l.Key] = l.Value.Value
	}
	for _, p := range m.Prices {
		out.Prices[p.Flavor] = p.Value.Value
	}
	return out
}

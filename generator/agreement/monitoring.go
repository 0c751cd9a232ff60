package agreement

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/load"
)

// monitoringKeys are the keys of the [monitoring] table.
var monitoringKeys = []string{
	"enabled", "namespace", "rule_labels", "currency", "prices",
	"owner_waiting_minutes", "squatting_utilization", "squatting_hours",
}

// Defaults of the [monitoring] table. The thresholds are where a team lead
// would start to ask questions: a quarter of an hour of waiting for GPUs the
// team owns, and two hours of allocated GPUs at under 10% utilisation.
const (
	DefaultMonitoringNamespace  = "monitoring"
	DefaultCurrency             = "USD"
	DefaultOwnerWaitingMinutes  = 15
	DefaultSquattingUtilization = 10 // percent
	DefaultSquattingHours       = 2
)

// Float is a number field (a TOML integer or float): its value, its state,
// and where it is.
type Float struct {
	Value float64
	State State
	Pos   Pos
	Path  *field.Path
}

// IsSet reports whether the file gives the value.
func (f Float) IsSet() bool { return f.State == Set }

// Monitoring is the optional [monitoring] table: the PrometheusRule, the
// Grafana dashboard and the prices tenancy report charges with. It renders
// only when Enabled is true; absent keys hold their defaults.
type Monitoring struct {
	Pos     Pos
	Path    *field.Path
	Enabled Bool // Defaulted false
	// Namespace holds the PrometheusRule and the dashboard ConfigMap.
	Namespace Str
	// RuleLabels go on the PrometheusRule, for a Prometheus ruleSelector
	// (kube-prometheus-stack selects release: <its release name>).
	RuleLabels []Label
	Currency   Str
	// Prices is the price of one GPU-hour per flavor ([monitoring.prices]).
	Prices []Price
	// Alert thresholds.
	OwnerWaitingMinutes  Int
	SquattingUtilization Int // percent of the allocated GPUs' mean utilisation
	SquattingHours       Int
}

// Price is one [monitoring.prices] entry: a flavor's price per GPU-hour.
type Price struct {
	Flavor string
	Value  Float // Pos is the value; the key is at KeyPos
	KeyPos Pos
}

func (d *decoder) float(v *load.Value, path *field.Path) Float {
	if v == nil {
		return Float{Path: path}
	}
	switch v.Kind {
	case load.Integer:
		return Float{Value: float64(v.Int), State: Set, Pos: v.Pos, Path: path}
	case load.Float:
		return Float{Value: v.Float, State: Set, Pos: v.Pos, Path: path}
	}
	d.typeError(v, path, "a number")
	return Float{Pos: v.Pos, Path: path, State: Invalid}
}

// monitoring decodes the [monitoring] table; nil when absent.
func (d *decoder) monitoring(v *load.Value) *Monitoring {
	path := field.NewPath("monitoring")
	tv := d.table(v, path)
	if tv == nil {
		return nil
	}
	t := tv.Table
	m := &Monitoring{Pos: tv.KeyPos, Path: path}
	d.unknown(t, path, monitoringKeys)
	m.Enabled = d.bool(t.Get("enabled"), path.Child("enabled"))
	m.Namespace = d.str(t.Get("namespace"), path.Child("namespace"))
	m.Currency = d.str(t.Get("currency"), path.Child("currency"))
	m.OwnerWaitingMinutes = d.int(t.Get("owner_waiting_minutes"), path.Child("owner_waiting_minutes"))
	m.SquattingUtilization = d.int(t.Get("squatting_utilization"), path.Child("squatting_utilization"))
	m.SquattingHours = d.int(t.Get("squatting_hours"), path.Child("squatting_hours"))
	m.RuleLabels = d.labels(t.Get("rule_labels"), path.Child("rule_labels"))
	prices := path.Child("prices")
	if pv := d.table(t.Get("prices"), prices); pv != nil {
		for _, k := range pv.Table.Keys {
			kv := pv.Table.Get(k)
			m.Prices = append(m.Prices, Price{Flavor: k, Value: d.float(kv, diag.Key(prices, k)), KeyPos: kv.KeyPos})
		}
	}
	return m
}

// defaultMonitoring fills the absent keys of a written [monitoring] table.
func defaultMonitoring(m *Monitoring) {
	if m == nil {
		return
	}
	if m.Enabled.State == Unset {
		m.Enabled = Bool{Value: false, State: Defaulted, Pos: m.Pos, Path: m.Enabled.Path}
	}
	str := func(s *Str, value string) {
		if s.State == Unset {
			*s = Str{Value: value, State: Defaulted, Pos: m.Pos, Path: s.Path}
		}
	}
	str(&m.Namespace, DefaultMonitoringNamespace)
	str(&m.Currency, DefaultCurrency)
	num := func(i *Int, value int64) {
		if i.State == Unset {
			*i = Int{Value: value, State: Defaulted, Pos: m.Pos, Path: i.Path}
		}
	}
	num(&m.OwnerWaitingMinutes, DefaultOwnerWaitingMinutes)
	num(&m.SquattingUtilization, DefaultSquattingUtilization)
	num(&m.SquattingHours, DefaultSquattingHours)
}

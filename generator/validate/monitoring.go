package validate

import (
	"math"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/agreement"
)

// maxOwnerWaitingMinutes bounds the owner-waiting alert's delay to a week:
// beyond it the alert would never fire within Prometheus' usual retention.
const maxOwnerWaitingMinutes = 7 * 24 * 60

// maxSquattingHours bounds the squatting alert's window to a week, for the
// same reason.
const maxSquattingHours = 7 * 24

// monitoring checks the [monitoring] table: prices name flavors of the
// agreement and are not negative, thresholds are in range, names and labels
// are what Kubernetes accepts.
func (v *validator) monitoring() {
	m := v.a.Monitoring
	if m == nil {
		return
	}
	if m.Namespace.IsSet() {
		v.dnsLabel(m.Namespace.Pos, m.Namespace.Path, m.Namespace.Value)
	}
	if m.Currency.IsSet() && m.Currency.Value == "" {
		v.errorf(field.ErrorTypeRequired, m.Currency.Pos, m.Currency.Path, "must not be empty: the ISO 4217 code the prices are in")
		v.suggest(`currency = "USD"`)
	}
	v.between(m.OwnerWaitingMinutes, 1, maxOwnerWaitingMinutes, "minutes")
	v.between(m.SquattingUtilization, 0, 100, "percent")
	v.between(m.SquattingHours, 1, maxSquattingHours, "hours")
	v.labels(m.RuleLabels, "label")
	priced := map[string]bool{}
	for _, p := range m.Prices {
		if v.a.Flavor(p.Flavor) == nil {
			v.errorf(field.ErrorTypeNotFound, p.KeyPos, p.Value.Path, "flavor %q is not in [flavors] (known: %s)", p.Flavor, v.flavorNames())
			continue
		}
		priced[p.Flavor] = true
		if p.Value.IsSet() && (p.Value.Value < 0 || math.IsNaN(p.Value.Value) || math.IsInf(p.Value.Value, 0)) {
			v.errorf(field.ErrorTypeInvalid, p.Value.Pos, p.Value.Path, "must be a price per GPU-hour of 0 or more, got %v", p.Value.Value)
		}
	}
	// A price list that leaves a flavor out charges nothing for it: likely
	// an oversight, but a free flavor is a choice someone may make.
	if len(m.Prices) > 0 {
		for _, f := range v.a.Flavors {
			if !priced[f.Name] {
				v.warnf(field.ErrorTypeRequired, m.Pos, m.Path.Child("prices"), "flavor %q has no price: its GPU-hours cost 0", f.Name)
			}
		}
	}
}

// between reports a written integer outside [lo, hi].
func (v *validator) between(n agreement.Int, lo, hi int64, unit string) {
	if n.IsSet() && (n.Value < lo || n.Value > hi) {
		v.errorf(field.ErrorTypeInvalid, n.Pos, n.Path, "must be between %d and %d %s, got %d", lo, hi, unit, n.Value)
	}
}

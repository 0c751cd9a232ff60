// Package monitor renders the agreement's visibility objects: a
// PrometheusRule (prometheus-operator's monitoring.coreos.com/v1) with
// recording rules per team and flavor and the alerts that say whether the
// agreement is kept, and a Grafana dashboard in a ConfigMap the Grafana
// sidecar loads. It renders nothing unless [monitoring] enabled = true.
//
// The numbers come from the schedulers' own metrics, read through the
// chargeback model of package chargeback, so the rules and tenancy report
// count the same GPUs.
package monitor

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/chargeback"
	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render"
)

// Renderer renders the monitoring objects for one backend's metrics.
type Renderer struct {
	Backend gpu.Backend
}

// DashboardLabel is the label the Grafana sidecar (kube-prometheus-stack's
// grafana.sidecar.dashboards.label) loads dashboards from, with the value
// DashboardLabelValue.
const (
	DashboardLabel      = "grafana_dashboard"
	DashboardLabelValue = "1"
)

// RuleName names the PrometheusRule of a pool.
func RuleName(pool string) string { return "tenancy-" + pool }

// DashboardName names the dashboard ConfigMap of a pool.
func DashboardName(pool string) string { return "tenancy-" + pool + "-dashboard" }

// DashboardKey is the ConfigMap key holding the dashboard JSON.
func DashboardKey(pool string) string { return "tenancy-" + pool + ".json" }

// Render returns the PrometheusRule and the dashboard ConfigMap.
func (r Renderer) Render(p *plan.Agreement) ([]render.Object, diag.List) {
	if p.Monitoring == nil || !p.Monitoring.Enabled {
		return nil, nil
	}
	fail := func(err error) ([]render.Object, diag.List) {
		return nil, diag.List{{Severity: diag.Error, Type: field.ErrorTypeInternal, File: p.File, Message: "monitor: " + err.Error()}}
	}
	m, err := chargeback.NewModel(p, r.Backend)
	if err != nil {
		return fail(err)
	}
	rule := Rule(p, m)
	dash, err := DashboardJSON(p, m)
	if err != nil {
		return fail(fmt.Errorf("dashboard: %w", err))
	}
	cm := &corev1.ConfigMap{
		TypeMeta:   typeMetaConfigMap,
		ObjectMeta: render.Meta(p.Name, "", DashboardName(p.Name), p.Monitoring.Namespace),
		Data:       map[string]string{DashboardKey(p.Name): string(dash)},
	}
	cm.Labels[DashboardLabel] = DashboardLabelValue
	objs, err := render.Objects([]any{rule, cm})
	if err != nil {
		return fail(err)
	}
	return objs, nil
}

// Check reports nothing: [monitoring]'s rules are the agreement's own
// (package validate), the same for every backend.
func (Renderer) Check(*plan.Agreement) diag.List { return nil }

package monitor

//lint:file-ignore SA1019 the classic dashboard JSON model (the SDK's dashboard package) is what the dashboard sidecar and Grafana 10/11 load; dashboardv2 is Grafana 12's v2 resource schema and changes the rendered output (docs/decisions.md, "staticcheck")

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"github.com/tenancy-dev/tenancy/generator/chargeback"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

// datasource is the dashboard's Prometheus, chosen with the ${datasource}
// variable.
var datasource = func() common.DataSourceRef {
	t, uid := "prometheus", "${datasource}"
	return common.DataSourceRef{Type: &t, Uid: &uid}
}()

// teamSel selects the teams chosen in the ${team} variable.
const teamSel = `{team=~"$team"}`

func query(expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().Datasource(datasource).Expr(expr).LegendFormat(legend)
}

func instant(expr, legend string) *prometheus.DataqueryBuilder {
	return query(expr, legend).Instant().Format(prometheus.PromQueryFormatTable)
}

// overTime is a time series panel of a team's GPUs.
func overTime(title, desc string, targets ...cog.Builder[variants.Dataquery]) *timeseries.PanelBuilder {
	return timeseries.NewPanelBuilder().Title(title).Description(desc).Datasource(datasource).
		Targets(targets).Unit("short").Min(0).Height(8).Span(12)
}

// Dashboard builds the dashboard a team lead opens: per team, guaranteed,
// allocated, borrowed and lent GPUs over time; the range's GPU-hours and
// cost; the guarantee left idle; utilisation; and the alerts' state.
func Dashboard(p *plan.Agreement, m *chargeback.Model) (dashboard.Dashboard, error) {
	var teams []string
	for _, t := range m.Teams {
		teams = append(teams, t.Name)
	}
	teamsCSV := strings.Join(teams, ",")
	hours := func(series string) string {
		// GPU-hours over the dashboard's range: the mean over the range
		// times its length in hours.
		return fmt.Sprintf("sum by (team, flavor) (avg_over_time(%s%s[$__range])) * ($__range_s / 3600)", series, teamSel)
	}
	cost := fmt.Sprintf("sum by (team) ((%s + %s) * on (flavor) group_left () %s)",
		hours(Guaranteed), hours(Borrowed), Price)

	b := dashboard.NewDashboardBuilder("GPU agreement: "+p.Name).
		Uid("tenancy-"+p.Name).
		Tags([]string{"tenancy", "gpu", string(m.Backend)}).
		Description("What the agreement "+p.Name+" guarantees each team, what each uses, borrows and lends, and what it costs ("+m.Currency+" per GPU-hour). Rendered by tenancy from the agreement.").
		Readonly().
		Time("now-7d", "now").
		Refresh("5m").
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").Label("Prometheus").Type("prometheus")).
		WithVariable(dashboard.NewCustomVariableBuilder("team").Label("Team").
			Values(dashboard.StringOrMap{String: &teamsCSV}).Multi(true).IncludeAll(true).AllValue(".+")).
		WithRow(dashboard.NewRowBuilder("Is the agreement kept?")).
		WithPanel(overTime("Guaranteed vs allocated",
			"Per team and flavor: the guarantee the scheduler enforces, and the GPUs it has admitted. Allocated above the line is borrowed; below, the guarantee is idle (and lendable).",
			query(Guaranteed+teamSel, "{{team}} {{flavor}} guaranteed"),
			query(Allocated+teamSel, "{{team}} {{flavor}} allocated"))).
		WithPanel(overTime("Borrowed and lent",
			"Borrowed: allocated above the guarantee. Lent: the team's idle lendable GPUs others are using, attributed in proportion to each lender's idle lendable GPUs after the unassigned capacity (see tenancy report).",
			query(Borrowed+teamSel, "{{team}} {{flavor}} borrowed"),
			query(Lent+teamSel, "{{team}} {{flavor}} lent"))).
		WithPanel(overTime("Idle guarantee",
			"Guaranteed GPUs the team does not use right now: paid for, and lendable up to the team's lendable.",
			query(IdleGuarantee+teamSel, "{{team}} {{flavor}} idle"))).
		WithPanel(overTime("Utilisation of allocated GPUs",
			"Mean utilisation (dcgm-exporter) of the GPUs in the team's namespaces. Allocated and idle is squatting.",
			query(Utilization+teamSel, "{{team}} {{flavor}}")).Unit("percentunit").Max(1)).
		WithRow(dashboard.NewRowBuilder("The range's statement")).
		WithPanel(table.NewPanelBuilder().Title("GPU-hours over the range").
			Description("Per team and flavor over the selected range. tenancy report computes the same from the raw series, for invoices.").
			Datasource(datasource).Height(8).Span(16).
			// The footer totals each column over the teams.
			Footer(common.NewTableFooterOptionsBuilder().Show(true).Reducer([]string{"sum"})).
			Targets([]cog.Builder[variants.Dataquery]{
				instant(hours(Guaranteed), "guaranteed").RefId("guaranteed"),
				instant(hours(Allocated), "allocated").RefId("allocated"),
				instant(hours(Borrowed), "borrowed").RefId("borrowed"),
				instant(hours(IdleGuarantee), "idle").RefId("idle"),
				instant(hours(Lent), "lent").RefId("lent"),
			})).
		WithPanel(stat.NewPanelBuilder().Title("Cost over the range (" + m.Currency + ")").
			Description("Guaranteed plus borrowed GPU-hours at each flavor's price.").
			Datasource(datasource).Height(8).Span(8).Decimals(2).
			Targets([]cog.Builder[variants.Dataquery]{instant(cost, "{{team}}")})).
		WithRow(dashboard.NewRowBuilder("Alerts")).
		WithPanel(table.NewPanelBuilder().Title("Alerts firing or pending").
			Description("The agreement's alerts: owner waiting (reclaim not working), squatting (allocated, idle), over the agreement (something bypassed the scheduler).").
			Datasource(datasource).Height(6).Span(24).
			Footer(common.NewTableFooterOptionsBuilder().Show(false).Reducer([]string{})).
			Targets([]cog.Builder[variants.Dataquery]{
				instant(fmt.Sprintf(`ALERTS{alertname=~"%s|%s|%s", pool=%q}`, AlertOwnerWaiting, AlertSquatting, AlertOverAgreement, p.Name), "{{alertname}} {{team}}"),
			}))
	return withDepartments(b, p).Build()
}

// DashboardJSON returns the dashboard as the sidecar loads it.
func DashboardJSON(p *plan.Agreement, m *chargeback.Model) ([]byte, error) {
	d, err := Dashboard(p, m)
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(d, "", "  ")
}

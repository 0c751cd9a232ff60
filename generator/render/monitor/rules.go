package monitor

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/tenancy-dev/tenancy/generator/chargeback"
	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render"
)

var typeMetaConfigMap = metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}

// The recording rules' series, each labelled team and flavor (the agreement's
// names), in the flavor's units (see chargeback.Flavor).
const (
	Guaranteed    = "tenancy:gpu_guaranteed:sum"
	Allocated     = "tenancy:gpu_allocated:sum"
	Borrowed      = "tenancy:gpu_borrowed:sum"
	IdleGuarantee = "tenancy:gpu_idle_guarantee:sum"
	IdleLendable  = "tenancy:gpu_idle_lendable:sum"
	Lent          = "tenancy:gpu_lent:sum"
	Utilization   = "tenancy:gpu_utilization:avg" // 0 to 1
	InUse         = "tenancy:gpu_in_use:count"    // devices dcgm-exporter sees in the team's namespaces
	Pending       = "tenancy:workloads_pending:sum"
	// From the agreement, as constants: what the team may lend and use.
	Lendable = "tenancy:agreement_gpu_lendable:max"
	Limit    = "tenancy:agreement_gpu_limit:max" // guaranteed + borrow
	// Per flavor: capacity no team is guaranteed, and the price of a GPU-hour.
	Unassigned = "tenancy:agreement_gpu_unassigned:max"
	Price      = "tenancy:agreement_gpu_price:max"
)

// The alerts.
const (
	AlertOwnerWaiting  = "TenancyOwnerWaiting"
	AlertSquatting     = "TenancySquatting"
	AlertOverAgreement = "TenancyOverAgreement"
)

// Interval is how often the rules are evaluated.
const Interval = "1m"

func rec(name, expr string, labels map[string]string) monitoringv1.Rule {
	return monitoringv1.Rule{Record: name, Expr: intstr.FromString(expr), Labels: labels}
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func dur(d time.Duration) *monitoringv1.Duration {
	s := monitoringv1.Duration(model(d))
	return &s
}

// model writes a duration as Prometheus does (1h30m, 15m, 2h).
func model(d time.Duration) string {
	s := strings.TrimSuffix(d.String(), "0s")
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Rule returns the PrometheusRule of the agreement for the model's backend.
func Rule(p *plan.Agreement, m *chargeback.Model) *monitoringv1.PrometheusRule {
	mon := p.Monitoring
	meta := render.Meta(p.Name, "", RuleName(p.Name), mon.Namespace)
	for k, v := range mon.RuleLabels {
		meta.Labels[k] = v
	}
	tf := func(team, flavor string) map[string]string { return map[string]string{"team": team, "flavor": flavor} }

	// Scheduler series, renamed to team and flavor.
	var sched []monitoringv1.Rule
	for _, q := range m.Sources() {
		var name string
		switch q.Kind {
		case chargeback.Allocated:
			name = Allocated
		case chargeback.Guaranteed:
			name = Guaranteed
		default:
			continue
		}
		expr := fmt.Sprintf(`label_replace(%s, "team", "$1", %q, "(.+)")`, q.Expr, q.TeamLabel)
		expr = fmt.Sprintf("sum by (team, flavor) (%s)", expr)
		var labels map[string]string
		if q.FlavorLabel == "" {
			labels = map[string]string{"flavor": q.Flavor}
		}
		sched = append(sched, rec(name, expr, labels))
	}
	for _, t := range m.Teams {
		ns := gpu.Alternation(t.Namespaces)
		var expr string
		switch m.Backend {
		case gpu.Kueue:
			expr = fmt.Sprintf("sum(kueue_pending_workloads{cluster_queue=%q, %s})", t.Name, chargeback.Replica)
		case gpu.KAI:
			// KAI's queue controller exports no pending count per queue:
			// kube-state-metrics' pods pending in the team's namespaces.
			expr = fmt.Sprintf("sum(kube_pod_status_phase{phase=\"Pending\", namespace=~`%s`})", ns)
		}
		sched = append(sched, rec(Pending, expr, map[string]string{"team": t.Name}))
		for _, f := range m.Flavors {
			if util := m.Utilization(f, ns); util != "" {
				sched = append(sched,
					rec(Utilization, "avg("+util+")", tf(t.Name, f.Name)),
					rec(InUse, "count("+util+")", tf(t.Name, f.Name)))
			}
		}
	}

	var agreed []monitoringv1.Rule
	for _, f := range m.Flavors {
		fl := map[string]string{"flavor": f.Name}
		agreed = append(agreed,
			rec(Unassigned, fmt.Sprintf("vector(%d)", f.Unassigned), fl),
			rec(Price, fmt.Sprintf("vector(%s)", num(f.Price)), fl))
		for _, t := range m.Teams {
			q := t.Quotas[f.Name]
			agreed = append(agreed,
				rec(Lendable, fmt.Sprintf("vector(%d)", q.Lendable), tf(t.Name, f.Name)),
				rec(Limit, fmt.Sprintf("vector(%d)", q.Guaranteed+q.Borrow), tf(t.Name, f.Name)))
		}
	}

	derived := []monitoringv1.Rule{
		rec(Borrowed, fmt.Sprintf("clamp_min(%s - %s, 0)", Allocated, Guaranteed), nil),
		rec(IdleGuarantee, fmt.Sprintf("clamp_min(%s - %s, 0)", Guaranteed, Allocated), nil),
		// min(idle guarantee, lendable), per team and flavor.
		rec(IdleLendable, fmt.Sprintf("(%[1]s <= on (team, flavor) %[2]s) or on (team, flavor) (%[2]s and on (team, flavor) %[1]s)", IdleGuarantee, Lendable), nil),
		// The attribution rule (chargeback.Model.Compute): borrowers use the
		// unassigned capacity first, then the lenders' idle lendable GPUs in
		// proportion to them.
		rec(Lent, fmt.Sprintf(
			"(%[1]s * on (flavor) group_left () clamp_max(clamp_min(sum by (flavor) (%[2]s) - on (flavor) %[3]s, 0) / on (flavor) (sum by (flavor) (%[1]s) > 0), 1))"+
				" or on (team, flavor) (%[1]s * 0)", IdleLendable, Borrowed, Unassigned), nil),
	}

	waiting := time.Duration(mon.OwnerWaitingMinutes) * time.Minute
	squat := time.Duration(mon.SquattingHours) * time.Hour
	threshold := float64(mon.SquattingUtilization) / 100
	alerts := []monitoringv1.Rule{
		{
			Alert: AlertOwnerWaiting,
			Expr: intstr.FromString(fmt.Sprintf("(%s < on (team, flavor) %s) and on (team) (%s > 0)",
				Allocated, Guaranteed, Pending)),
			For:    dur(waiting),
			Labels: map[string]string{"severity": "warning", "pool": p.Name},
			Annotations: map[string]string{
				"summary":     fmt.Sprintf("Team {{ $labels.team }} waits below its guarantee of %s", "{{ $labels.flavor }}"),
				"description": fmt.Sprintf("Team {{ $labels.team }} has workloads pending for %s while it holds fewer %s GPUs than it is guaranteed: reclaiming its lent GPUs is not working.", model(waiting), "{{ $labels.flavor }}"),
				"runbook": "1. Check the team's workloads: kubectl get workloads -n <namespace> (Kueue) or its pods' events (KAI); a workload that asks for more than the guarantee, or for a flavor it has no quota of, waits by design. " +
					"2. Check the borrowers: preemption reclaims lent GPUs only when the owner's reclaim policy is preempt (reclaim = \"wait\" waits for borrowers to finish). " +
					"3. Check the scheduler's logs for preemption failures (PodDisruptionBudgets, non-preemptible priorities).",
			},
		},
		{
			Alert: AlertSquatting,
			Expr: intstr.FromString(fmt.Sprintf("(%s < %s) and on (team, flavor) (%s > 0)",
				Utilization, num(threshold), Allocated)),
			For:    dur(squat),
			Labels: map[string]string{"severity": "info", "pool": p.Name},
			Annotations: map[string]string{
				"summary":     "Team {{ $labels.team }} holds {{ $labels.flavor }} GPUs it barely uses",
				"description": fmt.Sprintf("The %s GPUs allocated to team {{ $labels.team }} have been below %d%% utilisation for %s.", "{{ $labels.flavor }}", mon.SquattingUtilization, model(squat)),
				"runbook": "1. Find the idle pods: DCGM_FI_DEV_GPU_UTIL by pod in the team's namespaces. " +
					"2. Ask the owners: a notebook left open or a job waiting on data holds GPUs others could borrow. " +
					"3. The team's GPU-hours are charged whether used or not (tenancy report).",
			},
		},
		{
			Alert: AlertOverAgreement,
			Expr: intstr.FromString(fmt.Sprintf("(%s > on (team, flavor) %s) or (%s > on (team, flavor) %s)",
				InUse, Limit, Allocated, Limit)),
			For:    dur(10 * time.Minute),
			Labels: map[string]string{"severity": "critical", "pool": p.Name},
			Annotations: map[string]string{
				"summary":     "Team {{ $labels.team }} uses more {{ $labels.flavor }} GPUs than guaranteed + borrow",
				"description": "Team {{ $labels.team }} uses {{ $value }} {{ $labels.flavor }} GPUs, more than the agreement allows: something bypassed the scheduler.",
				"runbook": "1. List GPU pods in the team's namespaces that the scheduler did not admit (no " + gpu.Describe(gpu.Kueue).QueueLabel + " label, or schedulerName not kai-scheduler). " +
					"2. Check that tenancy's admission policies are installed ([guardrails] queue_admission). " +
					"3. Check the rendered quotas match the agreement (tenancy diff).",
			},
		},
	}

	interval := monitoringv1.Duration(Interval)
	return &monitoringv1.PrometheusRule{
		TypeMeta:   metav1.TypeMeta{APIVersion: monitoringv1.SchemeGroupVersion.String(), Kind: monitoringv1.PrometheusRuleKind},
		ObjectMeta: meta,
		Spec: monitoringv1.PrometheusRuleSpec{Groups: []monitoringv1.RuleGroup{
			// One group, in order: a group's rules see the series recorded
			// before them in the same evaluation, so accounts never lag.
			{Name: "tenancy-" + p.Name + ".accounts", Interval: &interval, Rules: slices.Concat(sched, agreed, derived)},
			{Name: "tenancy-" + p.Name + ".alerts", Interval: &interval, Rules: alerts},
		}},
	}
}

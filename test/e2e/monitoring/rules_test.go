package monitoring_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// series is one promtool input series: a selector and its values in
// promtool's expanding notation (24x200: 24, 201 times).
type series struct{ name, values string }

// schedulerSeries returns the scheduler's raw series of the rules test for
// a backend: training holds 24 GPUs (12 borrowed), research 4 of its 12 with
// workloads pending, inference its 4; plus what the rules must ignore (a
// Kueue follower's stale gauges, KAI's parent queues).
func schedulerSeries(backend string) []series {
	const n = "x200"
	switch backend {
	case "kueue":
		cq := func(metric, team string, v int, role string) series {
			return series{fmt.Sprintf(`%s{cohort="gpu-pool",cluster_queue=%q,flavor="h100",resource="nvidia.com/gpu",replica_role=%q}`, metric, team, role), fmt.Sprintf("%d%s", v, n)}
		}
		return []series{
			cq("kueue_cluster_queue_resource_usage", "training", 24, "leader"),
			cq("kueue_cluster_queue_resource_usage", "research", 4, "leader"),
			cq("kueue_cluster_queue_resource_usage", "inference", 4, "leader"),
			cq("kueue_cluster_queue_resource_usage", "training", 99, "follower"),
			cq("kueue_cluster_queue_nominal_quota", "training", 12, "leader"),
			cq("kueue_cluster_queue_nominal_quota", "research", 12, "leader"),
			cq("kueue_cluster_queue_nominal_quota", "inference", 4, "leader"),
			{`kueue_pending_workloads{cluster_queue="research",status="active",replica_role="leader"}`, "2" + n},
			{`kueue_pending_workloads{cluster_queue="training",status="active",replica_role="leader"}`, "0" + n},
		}
	default:
		q := func(metric, queue string, v int) series {
			return series{fmt.Sprintf(`%s{queue_name=%q}`, metric, queue), fmt.Sprintf("%d%s", v, n)}
		}
		return []series{
			q("kai_queue_allocated_gpus", "training", 24),
			q("kai_queue_allocated_gpus", "research", 4),
			q("kai_queue_allocated_gpus", "inference", 4),
			q("kai_queue_allocated_gpus", "gpu-pool", 32),
			q("kai_queue_deserved_gpus", "training", 12),
			q("kai_queue_deserved_gpus", "research", 12),
			q("kai_queue_deserved_gpus", "inference", 4),
			q("kai_queue_deserved_gpus", "gpu-pool", 28),
			{`kube_pod_status_phase{namespace="research-notebooks",pod="nb-0",phase="Pending"}`, "1" + n},
			{`kube_pod_status_phase{namespace="training",pod="t-0",phase="Pending"}`, "0" + n},
		}
	}
}

// dcgmSeries: training's namespace shows 25 GPUs busy at 90% (one more than
// guaranteed + borrow: a pod bypassed the scheduler), research's 4 at 50%,
// inference's 4 at 5% (squatting).
func dcgmSeries() []series {
	var out []series
	dev := func(ns string, count, util int) {
		for i := range count {
			out = append(out, series{fmt.Sprintf(`DCGM_FI_DEV_GPU_UTIL{gpu="%d",UUID="GPU-%s-%d",Hostname="node-%s",namespace=%q,pod="%s-%d",container="main"}`, i%8, ns, i, ns, ns, ns, i), fmt.Sprintf("%dx200", util)})
		}
	}
	dev("training", 25, 90)
	dev("research", 4, 50)
	dev("inference", 4, 5)
	// A GPU in no team's namespace counts for nobody.
	dev("kube-system", 1, 0)
	return out
}

func sample(name, labels string, v float64) string {
	return fmt.Sprintf("      - labels: '%s{%s}'\n        value: %v\n", name, labels, v)
}

// exprTest is one promql_expr_test.
func exprTest(expr, at string, samples ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  - expr: '%s'\n    eval_time: %s\n    exp_samples:\n", expr, at)
	if len(samples) == 0 {
		b.Reset()
		fmt.Fprintf(&b, "  - expr: '%s'\n    eval_time: %s\n    exp_samples: []\n", expr, at)
	}
	for _, s := range samples {
		b.WriteString(s)
	}
	return b.String()
}

func alert(name, team, severity string) string {
	return sample("ALERTS", fmt.Sprintf(`alertname="%s",alertstate="firing",flavor="h100",pool="gpu-pool",severity="%s",team="%s"`, name, severity, team), 1)
}

// TestRules runs promtool check rules and promtool test rules on the
// rendered PrometheusRule of each backend: exact recording-rule values for
// the known usage above, and each alert firing when it should and not
// before.
func TestRules(t *testing.T) {
	for _, backend := range []string{"kueue", "kai"} {
		t.Run(backend, func(t *testing.T) {
			rules := ruleFile(t, backend)
			out := run(t, tools.promtool, "check", "rules", rules)
			if !strings.Contains(out, "SUCCESS") {
				t.Fatalf("promtool check rules: %s", out)
			}

			var b strings.Builder
			fmt.Fprintf(&b, "rule_files: [%s]\nevaluation_interval: 1m\ntests:\n- interval: 1m\n  input_series:\n", filepath.Base(rules))
			for _, s := range append(schedulerSeries(backend), dcgmSeries()...) {
				fmt.Fprintf(&b, "  - series: '%s'\n    values: '%s'\n", s.name, s.values)
			}
			tf := func(team string) string { return fmt.Sprintf(`flavor="h100",team="%s"`, team) }
			b.WriteString("  promql_expr_test:\n")
			for _, e := range []string{
				exprTest("tenancy:gpu_allocated:sum", "10m",
					sample("tenancy:gpu_allocated:sum", tf("inference"), 4), sample("tenancy:gpu_allocated:sum", tf("research"), 4), sample("tenancy:gpu_allocated:sum", tf("training"), 24)),
				exprTest("tenancy:gpu_guaranteed:sum", "10m",
					sample("tenancy:gpu_guaranteed:sum", tf("inference"), 4), sample("tenancy:gpu_guaranteed:sum", tf("research"), 12), sample("tenancy:gpu_guaranteed:sum", tf("training"), 12)),
				exprTest("tenancy:gpu_borrowed:sum > 0", "10m", sample("tenancy:gpu_borrowed:sum", tf("training"), 12)),
				exprTest("tenancy:gpu_idle_guarantee:sum > 0", "10m", sample("tenancy:gpu_idle_guarantee:sum", tf("research"), 8)),
				// 12 borrowed: 4 from the unassigned capacity, 8 lent by
				// research, the only team with idle lendable GPUs.
				exprTest("tenancy:gpu_lent:sum", "10m",
					sample("tenancy:gpu_lent:sum", tf("inference"), 0), sample("tenancy:gpu_lent:sum", tf("research"), 8), sample("tenancy:gpu_lent:sum", tf("training"), 0)),
				exprTest("tenancy:gpu_utilization:avg", "10m",
					sample("tenancy:gpu_utilization:avg", tf("inference"), 0.05), sample("tenancy:gpu_utilization:avg", tf("research"), 0.5), sample("tenancy:gpu_utilization:avg", tf("training"), 0.9)),
				exprTest("tenancy:gpu_in_use:count", "10m",
					sample("tenancy:gpu_in_use:count", tf("inference"), 4), sample("tenancy:gpu_in_use:count", tf("research"), 4), sample("tenancy:gpu_in_use:count", tf("training"), 25)),
				// Owner waiting: research is below its guarantee with work
				// pending; it fires after owner_waiting_minutes (15).
				exprTest(`ALERTS{alertname="TenancyOwnerWaiting",alertstate="firing"}`, "14m"),
				exprTest(`ALERTS{alertname="TenancyOwnerWaiting",alertstate="firing"}`, "16m", alert("TenancyOwnerWaiting", "research", "warning")),
				// Over the agreement: 25 GPUs in use by training, 24 allowed.
				exprTest(`ALERTS{alertname="TenancyOverAgreement",alertstate="firing"}`, "9m"),
				exprTest(`ALERTS{alertname="TenancyOverAgreement",alertstate="firing"}`, "11m", alert("TenancyOverAgreement", "training", "critical")),
				// Squatting: inference's 4 GPUs at 5% for squatting_hours (2).
				exprTest(`ALERTS{alertname="TenancySquatting",alertstate="firing"}`, "119m"),
				exprTest(`ALERTS{alertname="TenancySquatting",alertstate="firing"}`, "121m", alert("TenancySquatting", "inference", "info")),
			} {
				b.WriteString(e)
			}
			test := filepath.Join(filepath.Dir(rules), "test.yaml")
			if err := os.WriteFile(test, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			out = run(t, tools.promtool, "test", "rules", test)
			if !strings.Contains(out, "SUCCESS") {
				t.Fatalf("promtool test rules: %s", out)
			}
		})
	}
}

package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/chargeback"
)

func runReport(e *env, args []string) int {
	fs := newFlagSet(e, "report", "report [FILE] --prometheus URL --from TIME --to TIME", `
Print the chargeback statement of the agreement in FILE (default
./tenancy.toml) over a range: per team and flavor, guaranteed_gpu_hours,
allocated_gpu_hours, borrowed_gpu_hours (allocated above the guarantee),
idle_gpu_hours (guaranteed but unused), lent_gpu_hours, utilization (mean,
where dcgm-exporter series exist) and cost, plus totals.

It reads the schedulers' raw series from Prometheus (no recording rules
needed): Kueue's kueue_cluster_queue_resource_usage and
kueue_cluster_queue_nominal_quota (metrics.enableClusterQueueResources:
true), or KAI's kai_queue_allocated_gpus and kai_queue_deserved_gpus, and
dcgm-exporter's utilisation. A step with no sample is a gap and is charged
nothing; the statement says how much of the range was covered. Borrowed GPUs
come first from capacity no team is guaranteed, then from the lenders' idle
lendable GPUs in proportion to them. A team pays for its guarantee and what
it borrowed, at the prices of [monitoring.prices].

A fleet agreement (one with [clusters]) is charged per worker cluster, each
from its part of the agreement (its shares of every team), then summed; the
manager runs no workloads and is not charged. Give one --prometheus URL
whose series carry the cluster's name in --cluster-label (Thanos, Mimir, or
Prometheus with external labels), or --prometheus CLUSTER=URL once per
worker cluster. CSV then starts each line with the cluster, * on the
fleet's summed lines. --cluster NAME charges that worker alone, printed as
a single cluster's statement.

TIME is RFC 3339 (2026-11-01T00:00:00Z) or relative to now: -30d, -12h, now.

Examples:
  tenancy report --prometheus http://localhost:9090 --from -30d --to now
  tenancy report --backend kai --prometheus $PROM --from 2026-11-01T00:00:00Z --to 2026-12-01T00:00:00Z --output csv
  tenancy report examples/fleet/tenancy.toml --prometheus east=http://prom.east:9090 --prometheus west=http://prom.west:9090 --from -30d`)
	var b backendFlags
	b.register(fs)
	prom := fs.StringArray("prometheus", nil, "Prometheus base `URL`, e.g. http://prometheus.monitoring:9090 (required); for a fleet, one URL holding every worker's series, or CLUSTER=URL once per worker cluster")
	fs.Lookup("prometheus").DefValue = "" // not "[]" in the help
	cluster := fs.String("cluster", "", "charge only this worker cluster of a fleet agreement (one with [clusters]); its statement is printed as a single cluster's")
	clusterLabel := fs.String("cluster-label", "cluster", "for a fleet with one --prometheus URL: the label whose value names each series' cluster")
	fromFlag := fs.String("from", "", "start of the range: RFC 3339 or relative (-30d) (required)")
	toFlag := fs.String("to", "now", "end of the range: RFC 3339 or relative")
	stepFlag := model.Duration(time.Minute)
	fs.Var(promDuration{&stepFlag}, "step", "integration step, a Prometheus duration (30s, 1m, 1h): one value per step, held for the step")
	output := fs.String("output", "table", "table, csv, json or markdown")
	positional, code, ok := parseArgs(e, fs, args)
	if !ok {
		return code
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(e.stderr, "tenancy report: "+format+"\n", a...)
		return exitUsage
	}
	if len(*prom) == 0 {
		return usage("--prometheus is required")
	}
	switch *output {
	case "table", "csv", "json", "markdown":
	default:
		return usage("--output %q: want table, csv, json or markdown", *output)
	}
	now := time.Now().UTC()
	from, err := parseTime(*fromFlag, now)
	if err != nil {
		return usage("--from: %v", err)
	}
	to, err := parseTime(*toFlag, now)
	if err != nil {
		return usage("--to: %v", err)
	}
	if !to.After(from) {
		return usage("--to (%s) must be after --from (%s)", to.Format(time.RFC3339), from.Format(time.RFC3339))
	}
	if time.Duration(stepFlag) < time.Second {
		return usage("--step %s: want at least 1s", stepFlag)
	}
	opts, err := b.options()
	if err != nil {
		return usage("%v", err)
	}
	proms, err := parsePrometheus(*prom)
	if err != nil {
		return usage("%v", err)
	}
	if !labelName.MatchString(*clusterLabel) {
		return usage("--cluster-label %q: not a Prometheus label name", *clusterLabel)
	}
	path, ok := agreementPath(e, "report", positional)
	if !ok {
		return exitUsage
	}
	// Align the range to the step, so that reruns give the same numbers.
	step := time.Duration(stepFlag)
	from, to = from.Truncate(step), to.Truncate(step)
	if !to.After(from) {
		return usage("the range is shorter than one --step (%s)", stepFlag)
	}
	src, err := readAgreement(e, path)
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy: %v\n", err)
		return exitFailure
	}
	parts, err := generator.Parts(src)
	if err != nil {
		return reportError(e, err)
	}
	r := statementRange{from: from, to: to, step: step}
	if parts != nil {
		return reportFleet(e, src, parts, proms, *clusterLabel, *cluster, opts, r, *output)
	}
	if *cluster != "" {
		return usage("--cluster %q: %s has no [clusters]; charge it without --cluster", *cluster, path)
	}
	if proms.perCluster != nil {
		return usage("--prometheus %s=...: %s has no [clusters]; give one URL", proms.order[0], path)
	}
	p, _, err := generator.Check(src, opts)
	if err != nil {
		return reportError(e, err)
	}
	opts = opts.Resolve(p)
	m, err := chargeback.NewModel(p, opts.Backend)
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy report: %v\n", err)
		return exitFailure
	}
	progress := r.progress(e, len(m.Sources()))
	st, err := r.statement(proms.clients[""], m, progress)
	if err != nil {
		if errors.Is(err, chargeback.ErrNoSeries) {
			fmt.Fprintf(e.stderr, "tenancy report: %s: %v from %s to %s for pool %q (is %s scraped? Kueue needs metrics.enableClusterQueueResources: true)\n",
				proms.urls[""], err, from.Format(time.RFC3339), to.Format(time.RFC3339), p.Name, opts.Backend)
		} else {
			fmt.Fprintf(e.stderr, "tenancy report: %v\n", err)
		}
		return exitFailure
	}
	return writeReport(e, func(w io.Writer) error { return writeStatement(w, st, *output) })
}

// writeReport builds the statement, then writes it at once: an error
// building it leaves stdout empty.
func writeReport(e *env, write func(io.Writer) error) int {
	var out bytes.Buffer
	if err := write(&out); err != nil {
		fmt.Fprintf(e.stderr, "tenancy report: %v\n", err)
		return exitFailure
	}
	if _, err := e.stdout.Write(out.Bytes()); err != nil {
		fmt.Fprintf(e.stderr, "tenancy report: write output: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// promDuration is a Prometheus duration (30s, 5m, 1d) as a flag value.
type promDuration struct{ *model.Duration }

func (promDuration) Type() string { return "duration" }

// Columns are the statement's CSV columns, in order.
var Columns = []string{"team", "flavor", "guaranteed_gpu_hours", "allocated_gpu_hours", "borrowed_gpu_hours",
	"idle_gpu_hours", "lent_gpu_hours", "utilization", "cost"}

func cells(r chargeback.Row) []string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	u := ""
	if r.Utilization != nil {
		u = strconv.FormatFloat(*r.Utilization, 'f', 3, 64)
	}
	return []string{r.Team, r.Flavor, f(r.Guaranteed), f(r.Allocated), f(r.Borrowed), f(r.Idle), f(r.Lent), u, f(r.Cost)}
}

func writeStatement(w io.Writer, st *chargeback.Statement, format string) error {
	rows := statementRows(st.Rows, st.Departments, st.Total)
	columns, cells := Columns, cells
	if st.HasDepartments() {
		columns, cells = departmentColumns(cells)
	}
	switch format {
	case "json":
		return encodeJSON(w, st)
	case "csv":
		var lines [][]string
		for _, r := range rows {
			lines = append(lines, cells(r))
		}
		return writeCSV(w, columns, lines)
	case "markdown":
		fmt.Fprintf(w, "GPU statement of %s (%s), %s to %s, cost in %s, %.1f%% of the range covered\n\n",
			st.Pool, st.Backend, st.From.Format(time.RFC3339), st.To.Format(time.RFC3339), st.Currency, st.Coverage*100)
	default:
		fmt.Fprintf(w, "GPU statement of %s (%s), %s to %s, cost in %s, %.1f%% of the range covered\n",
			st.Pool, st.Backend, st.From.Format(time.RFC3339), st.To.Format(time.RFC3339), st.Currency, st.Coverage*100)
	}
	return writeRows(w, columns, cells, rows, format)
}

// writeRows writes a statement's lines as a Markdown table or, for any
// other format, an aligned text table.
func writeRows(w io.Writer, columns []string, cells func(chargeback.Row) []string, rows []chargeback.Row, format string) error {
	if format == "markdown" {
		fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(columns, " | "), strings.Repeat("---|", len(columns)))
		for _, r := range rows {
			fmt.Fprintf(w, "| %s |\n", strings.Join(cells(r), " | "))
		}
		return nil
	}
	tw := tableWriter(w)
	fmt.Fprintln(tw, strings.Join(columns, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(cells(r), "\t"))
	}
	return tw.Flush()
}

// encodeJSON writes v as indented JSON.
func encodeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeCSV writes the header and the lines as CSV.
func writeCSV(w io.Writer, header []string, lines [][]string) error {
	cw := csv.NewWriter(w)
	cw.Write(header)
	cw.WriteAll(lines) // flushes
	return cw.Error()
}

package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"golang.org/x/term"

	"github.com/tenancy-dev/tenancy/cmd/tenancy/internal/promrange"
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

TIME is RFC 3339 (2026-11-01T00:00:00Z) or relative to now: -30d, -12h, now.

Examples:
  tenancy report --prometheus http://localhost:9090 --from -30d --to now
  tenancy report --backend kai --prometheus $PROM --from 2026-11-01T00:00:00Z --to 2026-12-01T00:00:00Z --output csv`)
	var b backendFlags
	b.register(fs)
	prom := fs.String("prometheus", "", "Prometheus base URL, e.g. http://prometheus.monitoring:9090 (required)")
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
	if *prom == "" {
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
	client, err := promrange.New(*prom)
	if err != nil {
		return usage("%v", err)
	}
	path, ok := agreementPath(e, "report", positional)
	if !ok {
		return exitUsage
	}
	p, _, code := checkFile(e, path, opts, generator.Check)
	if p == nil {
		return code
	}
	opts = opts.Resolve(p)
	m, err := chargeback.NewModel(p, opts.Backend)
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy report: %v\n", err)
		return exitFailure
	}
	// Align the range to the step, so that reruns give the same numbers.
	step := time.Duration(stepFlag)
	from, to = from.Truncate(step), to.Truncate(step)
	if !to.After(from) {
		return usage("the range is shorter than one --step (%s)", stepFlag)
	}

	queries := m.Sources()
	chunks := (int(to.Sub(from)/step) + promrange.MaxPoints - 1) / promrange.MaxPoints * len(queries)
	done := 0
	progress := func() {}
	if f, ok := e.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) && chunks > len(queries) {
		progress = func() {
			done++
			fmt.Fprintf(e.stderr, "\rtenancy report: %d/%d queries", done, chunks)
			if done == chunks {
				fmt.Fprintln(e.stderr)
			}
		}
	}
	ctx := context.Background()
	var results []chargeback.Result
	for _, q := range queries {
		series, err := client.QueryRange(ctx, q, from, to, step, progress)
		if err != nil {
			fmt.Fprintf(e.stderr, "tenancy report: %v\n", err)
			return exitFailure
		}
		results = append(results, chargeback.Result{Query: q, Series: series})
	}
	st, err := m.Compute(results, from, to, step)
	if err != nil {
		if errors.Is(err, chargeback.ErrNoSeries) {
			fmt.Fprintf(e.stderr, "tenancy report: %s: %v from %s to %s for pool %q (is %s scraped? Kueue needs metrics.enableClusterQueueResources: true)\n",
				*prom, err, from.Format(time.RFC3339), to.Format(time.RFC3339), p.Name, opts.Backend)
		} else {
			fmt.Fprintf(e.stderr, "tenancy report: %v\n", err)
		}
		return exitFailure
	}
	var out bytes.Buffer
	if err := writeStatement(&out, st, *output); err != nil {
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
	rows := append(append(append([]chargeback.Row{}, st.Rows...), st.Departments...), st.Total)
	columns, cells := Columns, cells
	if st.HasDepartments() {
		columns, cells = departmentColumns(cells)
	}
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	case "csv":
		cw := csv.NewWriter(w)
		cw.Write(columns)
		for _, r := range rows {
			cw.Write(cells(r))
		}
		cw.Flush()
		return cw.Error()
	case "markdown":
		fmt.Fprintf(w, "GPU statement of %s (%s), %s to %s, cost in %s, %.1f%% of the range covered\n\n",
			st.Pool, st.Backend, st.From.Format(time.RFC3339), st.To.Format(time.RFC3339), st.Currency, st.Coverage*100)
		fmt.Fprintf(w, "| %s |\n|%s\n", strings.Join(columns, " | "), strings.Repeat("---|", len(columns)))
		for _, r := range rows {
			fmt.Fprintf(w, "| %s |\n", strings.Join(cells(r), " | "))
		}
		return nil
	default:
		fmt.Fprintf(w, "GPU statement of %s (%s), %s to %s, cost in %s, %.1f%% of the range covered\n",
			st.Pool, st.Backend, st.From.Format(time.RFC3339), st.To.Format(time.RFC3339), st.Currency, st.Coverage*100)
		tw := tableWriter(w)
		fmt.Fprintln(tw, strings.Join(columns, "\t"))
		for _, r := range rows {
			fmt.Fprintln(tw, strings.Join(cells(r), "\t"))
		}
		return tw.Flush()
	}
}

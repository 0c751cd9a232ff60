package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/tenancy-dev/tenancy/cmd/tenancy/internal/promrange"
	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/chargeback"
)

// labelName is what Prometheus accepts as a label name.
var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// prometheuses is what --prometheus gives: one Prometheus (key "") or one
// per worker cluster of a fleet (CLUSTER=URL), in the order given.
type prometheuses struct {
	clients    map[string]*promrange.Client
	urls       map[string]string
	perCluster map[string]bool // nil for one Prometheus
	order      []string
}

// parsePrometheus reads the --prometheus values: one URL, or CLUSTER=URL
// once per cluster. A value that starts with http:// or https:// is a URL,
// so a URL's own "=" (in a query string) never reads as a cluster's name.
func parsePrometheus(values []string) (prometheuses, error) {
	ps := prometheuses{clients: map[string]*promrange.Client{}, urls: map[string]string{}}
	for _, v := range values {
		name, raw := "", v
		if n, u, named := strings.Cut(v, "="); named && !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
			if n == "" {
				return ps, fmt.Errorf("--prometheus %q: want CLUSTER=URL, with the cluster's name before =", v)
			}
			name, raw = n, u
		}
		switch _, dup := ps.urls[name]; {
		case dup && name != "":
			return ps, fmt.Errorf("--prometheus %s=...: cluster %s is given twice", name, name)
		case len(ps.order) > 0 && (name == "" || ps.perCluster == nil):
			return ps, errors.New("--prometheus: give one URL, or CLUSTER=URL once per worker cluster; not two URLs, nor both")
		}
		c, err := promrange.New(raw)
		if err != nil {
			return ps, err
		}
		if name != "" {
			if ps.perCluster == nil {
				ps.perCluster = map[string]bool{}
			}
			ps.perCluster[name] = true
		}
		ps.clients[name], ps.urls[name] = c, raw
		ps.order = append(ps.order, name)
	}
	return ps, nil
}

// statementRange is the range a statement covers, aligned to its step.
type statementRange struct {
	from, to time.Time
	step     time.Duration
}

// progress returns what to call after each chunk of queries queries: on a
// terminal, when the range takes more than one chunk per query, a counter
// on stderr; else nothing.
func (r statementRange) progress(e *env, queries int) func() {
	chunks := (int(r.to.Sub(r.from)/r.step) + promrange.MaxPoints - 1) / promrange.MaxPoints * queries
	f, ok := e.stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) || chunks <= queries {
		return func() {}
	}
	done := 0
	return func() {
		done++
		fmt.Fprintf(e.stderr, "\rtenancy report: %d/%d queries", done, chunks)
		if done == chunks {
			fmt.Fprintln(e.stderr)
		}
	}
}

// statement runs the model's queries against client and computes the
// statement from their series.
func (r statementRange) statement(client *promrange.Client, m *chargeback.Model, progress func()) (*chargeback.Statement, error) {
	ctx := context.Background()
	var results []chargeback.Result
	for _, q := range m.Sources() {
		series, err := client.QueryRange(ctx, q, r.from, r.to, r.step, progress)
		if err != nil {
			return nil, err
		}
		results = append(results, chargeback.Result{Query: q, Series: series})
	}
	return m.Compute(results, r.from, r.to, r.step)
}

// reportFleet charges a fleet agreement: each worker cluster's part (its
// shares of every team) against that cluster's series, then the sum. The
// manager is not charged: it has no GPUs, and its admissions are the
// workers' workloads. Series come from the cluster's own --prometheus
// CLUSTER=URL, or from the one --prometheus, selected by the cluster label.
// A non-empty only (--cluster) charges that worker alone, and prints its
// statement as a single cluster's.
func reportFleet(e *env, src generator.Source, parts []string, proms prometheuses, label, only string, opts generator.Options, r statementRange, output string) int {
	manager, workers := parts[0], parts[1:]
	switch {
	case only == manager:
		fmt.Fprintf(e.stderr, "tenancy report: --cluster %s: %s is the fleet's manager, which runs no workloads; charge a worker: %s\n", only, only, strings.Join(workers, ", "))
		return exitUsage
	case only != "" && !slices.Contains(workers, only):
		fmt.Fprintf(e.stderr, "tenancy report: --cluster %s: the fleet has no worker cluster %s; its workers are %s\n", only, only, strings.Join(workers, ", "))
		return exitUsage
	}
	charged := workers
	if only != "" {
		charged = []string{only}
	}
	if proms.perCluster != nil {
		for _, name := range proms.order {
			switch {
			case name == manager:
				fmt.Fprintf(e.stderr, "tenancy report: --prometheus %s=...: %s is the fleet's manager, which runs no workloads; give each worker cluster's Prometheus: %s\n", name, name, strings.Join(workers, ", "))
				return exitUsage
			case !slices.Contains(workers, name):
				fmt.Fprintf(e.stderr, "tenancy report: --prometheus %s=...: the fleet has no worker cluster %s; its workers are %s\n", name, name, strings.Join(workers, ", "))
				return exitUsage
			}
		}
		for _, w := range charged {
			if !proms.perCluster[w] {
				fmt.Fprintf(e.stderr, "tenancy report: --prometheus: no %s=URL; give each worker cluster's Prometheus (%s), or one URL holding them all\n", w, strings.Join(workers, ", "))
				return exitUsage
			}
		}
	}
	models := make([]*chargeback.Model, len(charged))
	queries := 0
	for i, w := range charged {
		o := opts
		o.Cluster, o.ClusterFrom = w, "the cluster report charges"
		p, _, err := generator.Check(src, o)
		if err != nil {
			return reportError(e, err)
		}
		m, err := chargeback.NewModel(p, o.Resolve(p).Backend)
		if err != nil {
			fmt.Fprintf(e.stderr, "tenancy report: cluster %s: %v\n", w, err)
			return exitFailure
		}
		if proms.perCluster == nil {
			m.Scope = fmt.Sprintf("%s=%q", label, w)
		}
		models[i] = m
		queries += len(m.Sources())
	}
	progress := r.progress(e, queries)
	var clusters []chargeback.ClusterStatement
	for i, w := range charged {
		key, where := w, fmt.Sprintf("cluster %s", w)
		if proms.perCluster == nil {
			key, where = "", fmt.Sprintf("cluster %s (series with %s)", w, models[i].Scope)
		}
		st, err := r.statement(proms.clients[key], models[i], progress)
		if err != nil {
			if errors.Is(err, chargeback.ErrNoSeries) {
				fmt.Fprintf(e.stderr, "tenancy report: %s: %s: %v from %s to %s for pool %q (is %s scraped there? Kueue needs metrics.enableClusterQueueResources: true)\n",
					proms.urls[key], where, err, r.from.Format(time.RFC3339), r.to.Format(time.RFC3339), models[i].Pool, models[i].Backend)
			} else {
				fmt.Fprintf(e.stderr, "tenancy report: %s: %v\n", where, err)
			}
			return exitFailure
		}
		clusters = append(clusters, chargeback.ClusterStatement{Cluster: w, Statement: st})
	}
	if only != "" {
		return writeReport(e, func(w io.Writer) error { return writeStatement(w, clusters[0].Statement, output) })
	}
	fleet, err := chargeback.SumFleet(clusters)
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy report: %v\n", err)
		return exitFailure
	}
	return writeReport(e, func(w io.Writer) error { return writeFleetStatement(w, fleet, output) })
}

// writeFleetStatement writes each cluster's lines and the fleet's. CSV
// starts every line with the cluster, "*" on the fleet's (summed, as
// "*" stands for summed teams on a department's line); the table and
// Markdown give each cluster a section of its own, the fleet's last.
func writeFleetStatement(w io.Writer, fs *chargeback.FleetStatement, format string) error {
	columns, cells := Columns, cells
	if fs.HasDepartments() {
		columns, cells = departmentColumns(cells)
	}
	type section struct {
		name     string
		coverage float64
		rows     []chargeback.Row
	}
	sections := make([]section, 0, len(fs.Clusters)+1)
	var names []string
	for _, c := range fs.Clusters {
		sections = append(sections, section{c.Cluster, c.Coverage, statementRows(c.Rows, c.Departments, c.Total)})
		names = append(names, c.Cluster)
	}
	sections = append(sections, section{"*", fs.Coverage, statementRows(fs.Rows, fs.Departments, fs.Total)})
	switch format {
	case "json":
		return encodeJSON(w, fs)
	case "csv":
		var lines [][]string
		for _, s := range sections {
			for _, r := range s.rows {
				lines = append(lines, append([]string{s.name}, cells(r)...))
			}
		}
		return writeCSV(w, append([]string{"cluster"}, columns...), lines)
	}
	fmt.Fprintf(w, "GPU statement of %s (%s), a fleet of %d worker clusters (%s), %s to %s, cost in %s, %.1f%% of the range covered\n",
		fs.Pool, fs.Backend, len(fs.Clusters), strings.Join(names, ", "), fs.From.Format(time.RFC3339), fs.To.Format(time.RFC3339), fs.Currency, fs.Coverage*100)
	for _, s := range sections {
		title := fmt.Sprintf("Cluster %s, %.1f%% of the range covered", s.name, s.coverage*100)
		if s.name == "*" {
			title = fmt.Sprintf("Fleet, the %d clusters summed", len(fs.Clusters))
		}
		if format == "markdown" {
			fmt.Fprintf(w, "\n#### %s\n\n", title)
		} else {
			fmt.Fprintf(w, "\n%s\n", title)
		}
		if err := writeRows(w, columns, cells, s.rows, format); err != nil {
			return err
		}
	}
	return nil
}

// statementRows is a statement's lines in order: the teams', the
// departments', the total.
func statementRows(rows, departments []chargeback.Row, total chargeback.Row) []chargeback.Row {
	return append(append(append([]chargeback.Row{}, rows...), departments...), total)
}

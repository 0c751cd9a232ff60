package main

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render/kai"
)

func runExplain(e *env, args []string) int {
	fs := newFlagSet(e, "explain", "explain [--backend kueue|kai] [--cluster NAME] [--contention [--busy TEAM,...] [--output text|json]] [FILE]", `
Print the agreement in FILE (default ./tenancy.toml; - reads it from stdin)
as tables a person reads: the GPU pool, each flavor's capacity and how much
of it is guaranteed, each team's namespaces, reclaim policy, fair-sharing
weight and VM limit, the tree of departments (when the agreement has them),
and per flavor what every team is guaranteed, lends, never lends, may borrow
and may use at most; then the priorities, the topology and the warnings.

The tables come from the same validated plan render uses, with every default
applied, so they say what the manifests will do. The warnings say what the
backend cannot hold exactly (KAI: lendable below guaranteed, reclaim "wait",
a department's lendable, several flavors): those of every backend the
agreement's backend key names, Kueue's without the key, or --backend's. On
any error the exit status is 1, the problems are on stderr and nothing is
written to stdout.

--contention prints instead what each team runs when teams compete, per
flavor: its guarantee, what it runs alone (every other team idle), with
every team busy, and with --busy's teams busy (a department's name stands for
its teams), on each backend the warnings are for. A range such as 16-24 is
the least and the most a team gets as the order in which work arrives
decides (Kueue without fair sharing; a tie in KAI's rounding); the rules
each backend follows are printed below the tables. --output json writes the
same as JSON for tools (docs in README, "Contention").

Examples:
  tenancy explain                                  # ./tenancy.toml
  tenancy explain --contention                     # alone and all busy
  tenancy explain --contention --busy training,research --output json
  tenancy explain --backend kai                    # what KAI cannot hold of it
  git show main:tenancy.toml | tenancy explain -   # the agreement on main
  tenancy explain --at 2026-12-07T21:00:00+01:00   # lending windows at an instant
  tenancy explain --at -12h                        # lending windows 12 hours ago
  tenancy explain --cluster east examples/fleet/tenancy.toml   # one cluster's share

An agreement with [clusters] is a fleet: explain shows each cluster and each
team's share in it, with the largest gang each team's guarantee admits (a
job runs in one cluster); --cluster explains one part as that cluster holds
it.`)
	backend := fs.String("backend", "", backendUsage("explain for"))
	cluster := fs.String("cluster", "", clusterUsage)
	withContention := fs.Bool("contention", false, "print what each team runs alone, with every team busy and with --busy's teams busy, instead of the agreement's tables")
	busyFlag := fs.String("busy", "", "with --contention: the teams (or departments) busy in the scenario, comma-separated")
	output := fs.StringP("output", "o", "text", "with --contention: text or json")
	atFlag := fs.String("at", "now", "the instant lending windows are shown at, as report's --from and --to: RFC 3339 (2026-12-07T21:00:00+01:00) or relative (-12h, -1d, now); shown in UTC")
	positional, code, ok := parseArgs(e, fs, args)
	if !ok {
		return code
	}
	path, ok := agreementPath(e, "explain", positional)
	if !ok {
		return exitUsage
	}
	at, err := parseTime(*atFlag, time.Now().UTC())
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy explain: --at: %v\n", err)
		return exitUsage
	}
	opts, err := backendOptions(*backend, "")
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy explain: %v\n", err)
		return exitUsage
	}
	opts = withCluster(opts, *cluster)
	var busy []string
	if fs.Changed("busy") {
		busy = strings.Split(*busyFlag, ",")
	}
	if msg := contentionUsage(*withContention, fs.Changed("busy"), busy, *output); msg != "" {
		fmt.Fprintf(e.stderr, "tenancy explain: %s\nRun 'tenancy explain --help' for usage.\n", msg)
		return exitUsage
	}
	p, warnings, code := checkFile(e, path, opts, generator.CheckAll)
	if p == nil {
		return code
	}
	// Built whole, then written once: an error never leaves half a table.
	var out bytes.Buffer
	if *withContention {
		if code := explainContention(e, &out, agreementName(path), p, opts, busy, at, *output); code != exitOK {
			return code
		}
	} else {
		writeExplanation(&out, agreementName(path), p, opts, warnings, at)
	}
	if _, err := e.stdout.Write(out.Bytes()); err != nil {
		fmt.Fprintf(e.stderr, "tenancy explain: write output: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// writeExplanation writes the plan as text. It reads the plan only, never
// the TOML, so what it says is what the backends render.
func writeExplanation(w io.Writer, file string, p *plan.Agreement, opts generator.Options, warnings []generator.Diagnostic, at time.Time) {
	fmt.Fprintf(w, "%s: the GPU pool %q, shared by %s\n", file, p.Name, teamsAndDepartments(p))
	explainFlavors(w, p)
	explainPools(w, p, opts)
	explainFleet(w, p)
	explainTeams(w, p)
	explainDepartments(w, p)
	explainWindows(w, p, at)
	for _, f := range p.Flavors {
		explainQuotas(w, p, f)
	}
	explainPriorities(w, p)
	explainTopology(w, p)
	explainGuardrails(w, p)
	explainReviews(w, p, at)
	explainColumns(w)
	explainBackends(w, p, opts)
	explainWarnings(w, warnings)
}

// explainBackends says which backends the warnings below are for, and why
// those: the flag, the agreement's backend key, or render's default.
func explainBackends(w io.Writer, p *plan.Agreement, opts generator.Options) {
	backends := opts.Backends(p)
	names := make([]string, len(backends))
	for i, b := range backends {
		names[i] = string(b)
	}
	title := "Backend"
	if len(names) > 1 {
		title = "Backends"
	}
	var why string
	switch {
	case opts.Backend != "":
		why = "--backend"
	case p.Backend == nil:
		why = "the agreement has no backend key: render's default"
	case len(names) > 1:
		why = fmt.Sprintf("the agreement's backend key; render uses %s unless told otherwise", names[0])
	default:
		why = "the agreement's backend key"
	}
	fmt.Fprintf(w, "\n%s: %s (%s)\n", title, strings.Join(names, ", "), why)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// tableWriter returns a tabwriter with the layout every table uses: two
// spaces between columns; tableRow indents by two.
func tableWriter(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

func tableRow(tw io.Writer, cells ...string) {
	fmt.Fprintf(tw, "  %s\n", strings.Join(cells, "\t"))
}

func formatInt(n int64) string { return strconv.FormatInt(n, 10) }

func explainFlavors(w io.Writer, p *plan.Agreement) {
	title := "Flavors"
	if len(p.Flavors) > 1 {
		title += " (Kueue tries them in this order)"
	}
	fmt.Fprintf(w, "\n%s\n", title)
	tw := tableWriter(w)
	tableRow(tw, "FLAVOR", "RESOURCE", "CAPACITY", "GUARANTEED", "LENDABLE", "UNASSIGNED")
	unassigned := false
	for _, f := range p.Flavors {
		sum := gpu.FlavorSum(p, gpu.Raw, gpu.Flavor(f.Name))
		guaranteed := gpu.Committed(p, gpu.Raw, gpu.Flavor(f.Name))
		free := f.Capacity - guaranteed
		unassigned = unassigned || free > 0
		tableRow(tw, f.Name, f.Resource, formatInt(f.Capacity), formatInt(guaranteed), formatInt(sum.Lendable), formatInt(free))
	}
	tw.Flush()
	for _, f := range p.Flavors {
		if where := flavorPlacement(f); where != "" {
			fmt.Fprintf(w, "  %s: %s\n", f.Name, where)
		}
	}
	if unassigned {
		// Kueue's cohort holds only what its ClusterQueues lend; KAI's
		// parent queue is limited by capacity, so teams reach the rest
		// over quota.
		fmt.Fprintln(w, "  Unassigned GPUs are in no team's guarantee: with Kueue no team can use them;")
		fmt.Fprintln(w, "  with KAI teams may use them over quota, up to their MAX USABLE.")
	}
}

// flavorPlacement says where a flavor's workloads run, from its node labels and
// tolerations; empty when it has neither.
func flavorPlacement(f plan.Flavor) string {
	var parts []string
	if len(f.NodeLabels) > 0 {
		keys := make([]string, 0, len(f.NodeLabels))
		for k := range f.NodeLabels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		labels := make([]string, len(keys))
		for i, k := range keys {
			labels[i] = k + "=" + f.NodeLabels[k]
		}
		parts = append(parts, "nodes labelled "+strings.Join(labels, ", "))
	}
	if len(f.Tolerations) > 0 {
		tols := make([]string, len(f.Tolerations))
		for i, t := range f.Tolerations {
			tols[i] = tolerationText(t)
		}
		parts = append(parts, "tolerates "+strings.Join(tols, ", "))
	}
	return strings.Join(parts, "; ")
}

// tolerationText writes a toleration the way kubectl writes taints,
// key=value:effect, saying in words what Exists matches.
func tolerationText(t plan.Toleration) string {
	if t.Key == "" {
		// validate allows an empty key with Exists only: every taint.
		if t.Effect != "" {
			return "every " + t.Effect + " taint"
		}
		return "every taint"
	}
	s := t.Key
	if t.Operator != "Exists" && t.Value != "" {
		s += "=" + t.Value
	}
	if t.Effect != "" {
		s += ":" + t.Effect
	}
	if t.Operator == "Exists" {
		s += " (any value)"
	}
	return s
}

func explainTeams(w io.Writer, p *plan.Agreement) {
	fmt.Fprintln(w, "\nTeams")
	tw := tableWriter(w)
	tableRow(tw, "TEAM", "NAMESPACES", "RECLAIM", "WEIGHT", "VM LIMIT")
	for _, t := range p.Teams {
		vms := "no limit"
		switch {
		case t.VMs == nil:
		case *t.VMs == 0:
			vms = "0: no VMs"
		default:
			vms = formatInt(*t.VMs) + " per namespace"
		}
		tableRow(tw, t.Name, strings.Join(t.Namespaces, ", "), reclaimInWords(t.Reclaim), formatInt(t.Weight), vms)
	}
	tw.Flush()
}

// reclaimInWords puts a reclaim policy in words next to its keyword.
func reclaimInWords(r plan.ReclaimPolicy) string {
	switch r {
	case plan.ReclaimPreempt:
		return "preempt: borrowers are stopped at once"
	case plan.ReclaimWait:
		return "wait: borrowers finish first"
	}
	return string(r)
}

func explainQuotas(w io.Writer, p *plan.Agreement, f plan.Flavor) {
	fmt.Fprintf(w, "\n%s (%s, capacity %d): what each team gets\n", f.Name, f.Resource, f.Capacity)
	tw := tableWriter(w)
	tableRow(tw, "TEAM", "GUARANTEED", "LENDABLE", "NEVER LENT", "MAY BORROW", "MAX USABLE")
	var guaranteed, lendable, kept int64
	var without []string
	for _, t := range p.Teams {
		q := t.Quota(f.Name)
		if q.Guaranteed == 0 && q.Borrow == 0 {
			without = append(without, t.Name)
			continue
		}
		guaranteed += q.Guaranteed
		lendable += q.Lendable
		kept += q.Guaranteed - q.Lendable
		tableRow(tw, t.Name, formatInt(q.Guaranteed), formatInt(q.Lendable), formatInt(q.Guaranteed-q.Lendable), formatInt(q.Borrow), formatInt(q.Guaranteed+q.Borrow))
	}
	// The total row has no MAY BORROW or MAX USABLE: those are per-team
	// ceilings, and their sum means nothing.
	tableRow(tw, "(all teams)", formatInt(guaranteed), formatInt(lendable), formatInt(kept))
	tw.Flush()
	if len(without) > 0 {
		fmt.Fprintf(w, "  No share of %s: %s.\n", f.Name, strings.Join(without, ", "))
	}
}

func explainPriorities(w io.Writer, p *plan.Agreement) {
	if len(p.Priorities) == 0 {
		fmt.Fprintln(w, "\nPriorities: none; every workload has the same priority.")
		return
	}
	fmt.Fprintln(w, "\nPriorities (highest first; within a team a higher priority may preempt a lower one)")
	// Which priorities may borrow differs by backend: Kueue lets any
	// workload borrow, KAI only preemptible work (kai.ClassValues).
	kaiValues := kai.ClassValues(p.Priorities)
	yes := map[bool]string{true: "yes", false: "no"}
	tw := tableWriter(w)
	tableRow(tw, "NAME", "VALUE", "PREEMPTIBLE", "MAY BORROW (KUEUE)", "MAY BORROW (KAI)", "KAI PRIORITYCLASS")
	anyFixed := false
	for _, pr := range p.Priorities {
		anyFixed = anyFixed || !pr.Preemptible
		tableRow(tw, pr.Name, strconv.FormatInt(int64(pr.Value), 10), yes[pr.Preemptible], "yes", yes[pr.Preemptible],
			strconv.FormatInt(kaiValues[pr.Name], 10))
	}
	tw.Flush()
	fmt.Fprintf(w, "  KAI: only preemptible work (PriorityClass below %d) borrows idle GPUs and is preempted; non-preemptible work\n", kai.NonPreemptibleFrom)
	fmt.Fprintln(w, "  runs within its team's guarantee only and is never preempted. Workloads name their queue with the")
	fmt.Fprintf(w, "  %s label and use schedulerName kai-scheduler.\n", gpu.Describe(gpu.KAI).QueueLabel)
	if anyFixed {
		fmt.Fprintln(w, "  Kueue: no priority is non-preemptible; preemptible = false is not expressed, and such work may borrow.")
	}
}

func explainTopology(w io.Writer, p *plan.Agreement) {
	if p.Topology == nil || len(p.Topology.Levels) == 0 {
		fmt.Fprintln(w, "\nTopology: none; pods of a workload may land on any nodes of its flavor.")
		return
	}
	fmt.Fprintf(w, "\nTopology %q, coarse to fine: %s\n", p.Topology.Name, strings.Join(p.Topology.Levels, " > "))
	fmt.Fprintln(w, "  Kueue places a workload's pods as close together as these levels allow.")
}

func explainColumns(w io.Writer) {
	fmt.Fprintln(w, "\nWhat the columns mean")
	tw := tableWriter(w)
	for _, c := range [][2]string{
		{"guaranteed", "GPUs the team always gets, taken back from borrowers when it needs them"},
		{"lendable", "of those, how many other teams may use while the team leaves them idle"},
		{"never lent", "guaranteed - lendable: kept for the team even when idle"},
		{"may borrow", "most GPUs the team may use beyond its guarantee, from what others lend"},
		{"max usable", "guaranteed + may borrow"},
		{"unassigned", "capacity - guaranteed: GPUs in no team's guarantee"},
		{"reclaim", "what happens to borrowers when the team wants its lent GPUs back"},
		{"weight", "the team's share of idle GPUs when several teams borrow (2 gets twice what 1 gets)"},
		{"VM limit", "KubeVirt VirtualMachines allowed in each of the team's namespaces"},
	} {
		tableRow(tw, c[0], c[1])
	}
	tw.Flush()
}

func explainWarnings(w io.Writer, warnings []generator.Diagnostic) {
	if len(warnings) == 0 {
		fmt.Fprintln(w, "\nWarnings: none")
		return
	}
	fmt.Fprintf(w, "\nWarnings (%d)\n", len(warnings))
	for _, d := range warnings {
		fmt.Fprintf(w, "  %s\n", d.String())
	}
}

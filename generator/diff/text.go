package diff

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
)

// ANSI SGR sequences; used only when the caller says the output is a terminal.
const (
	sgrReset  = "\x1b[0m"
	sgrBold   = "\x1b[1m"
	sgrRed    = "\x1b[31m"
	sgrGreen  = "\x1b[32m"
	sgrYellow = "\x1b[33m"
	sgrCyan   = "\x1b[36m"
)

// Text renders the report for a terminal. With color, added lines are green,
// removed red, changed yellow, as in git diff.
func Text(r *Report, color bool) []byte {
	p := textPrinter{color: color}
	p.line(sgrBold, fmt.Sprintf("tenancy diff %s → %s", r.Old, r.New))
	p.report(r)
	return []byte(p.b.String())
}

// report prints everything of r below its title: the summary, then the
// objects; a fleet's text prints one per cluster.
func (p *textPrinter) report(r *Report) {
	if !r.Changed {
		p.line("", "")
		p.line("", fmt.Sprintf("No changes: both sides render the same %d objects.", r.Counts.Unchanged))
		p.attention(r.Summary)
		return
	}

	p.line("", "")
	p.line(sgrBold, "Agreement "+r.Summary.poolName())
	p.line("", "")
	p.line(sgrBold, "Pool")
	p.table([]string{"", "FLAVOR", "RESOURCE", "CAPACITY", "GUARANTEED", "SHARE"}, flavorRows(r.Summary))
	p.line("", "")
	p.line(sgrBold, "Teams")
	p.table(upper(teamColumns(r.Summary)), teamRows(r.Summary))
	if lines := departmentLines(r.Summary); len(lines) > 0 {
		p.line("", "")
		p.line(sgrBold, "Departments")
		for _, l := range lines {
			p.line("", "  "+l)
		}
	}
	if len(r.Summary.Windows) > 0 {
		p.line("", "")
		p.line(sgrBold, "Lending windows")
		for _, l := range r.Summary.Windows {
			p.line("", "  "+l)
		}
	}
	if len(r.Summary.Pools) > 0 {
		p.line("", "")
		p.line(sgrBold, "KAI node pools")
		for _, l := range r.Summary.Pools {
			p.line("", "  "+l)
		}
	}
	if header, rows := contentionTable(r.Summary); len(rows) > 0 {
		p.line("", "")
		p.line(sgrBold, "Contention (what each team runs alone and with every team busy; a range: first come)")
		p.table(header, rows)
	}
	if len(r.Summary.Priorities) > 0 {
		p.line("", "")
		p.line(sgrBold, "Priorities")
		p.table([]string{"", "PRIORITY", "VALUE", "PREEMPTIBLE", "MAY BORROW (KUEUE)", "MAY BORROW (KAI)", "KAI PRIORITYCLASS"}, priorityRows(r.Summary))
	}
	p.attention(r.Summary)
	if len(r.Summary.Approvals) > 0 {
		p.line("", "")
		p.line(sgrBold, "Approvals needed")
		for _, a := range r.Summary.Approvals {
			p.line(sgrCyan, "  "+a.String())
		}
	}

	p.line("", "")
	p.line(sgrBold, "Objects: "+r.Counts.String())
	for _, o := range r.Objects {
		p.line("", "")
		p.line(opColor(o.Op)+sgrBold, marker(o.Op)+" "+o.ObjectKey.String())
		for _, f := range o.Fields {
			p.line("", "    "+f.String())
			for l := range strings.Lines(f.Lines) {
				l = strings.TrimSuffix(l, "\n")
				p.line(diffLineColor(l), "      "+l)
			}
		}
		if o.textsOnly() {
			continue
		}
		for _, l := range strings.Split(strings.TrimSuffix(o.Unified, "\n"), "\n") {
			p.line(diffLineColor(l), "  "+l)
		}
	}
}

type textPrinter struct {
	b     strings.Builder
	color bool
}

func (p *textPrinter) line(sgr, s string) {
	if p.color && sgr != "" && s != "" {
		s = sgr + s + sgrReset
	}
	p.b.WriteString(s)
	p.b.WriteByte('\n')
}

// row is one table line and the op that colours it.
type row struct {
	op    Op
	cells []string
}

// table aligns the cells first and colours whole lines after, so escape
// sequences never count towards a column's width.
func (p *textPrinter) table(header []string, rows []row) {
	var sb strings.Builder
	tw := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r.cells, "\t"))
	}
	tw.Flush()
	lines := strings.Split(strings.TrimSuffix(sb.String(), "\n"), "\n")
	p.line("", "  "+strings.TrimRight(lines[0], " "))
	for i, l := range lines[1:] {
		p.line(opColor(rows[i].op), "  "+strings.TrimRight(l, " "))
	}
}

func (p *textPrinter) attention(s Summary) {
	if !s.needsAttention() {
		return
	}
	p.line("", "")
	p.line(sgrBold, "Attention")
	for _, l := range s.Losses {
		p.line(sgrRed, "  ! "+l.String())
	}
	for _, ns := range s.RemovedNamespaces {
		p.line(sgrRed, "  ! "+namespaceRemoval(ns, s.NamespaceSyncOptions[ns]))
	}
	for _, w := range s.NewWarnings {
		p.line(sgrYellow, "  ! new warning: "+w.Text())
	}
	for _, w := range s.ChangedWarnings {
		p.line(sgrYellow, "  ! changed warning: "+w.Text())
	}
	for _, r := range s.ReviewsDue {
		p.line(sgrYellow, "  ! review overdue: "+r)
	}
}

func flavorRows(s Summary) []row {
	var rows []row
	for _, f := range s.Flavors {
		rows = append(rows, row{f.Op, []string{marker(f.Op), f.Name,
			cellValue(f.Resource, f.Op), cellValue(f.Capacity, f.Op), cellValue(f.Guaranteed, f.Op), cellValue(share(f), f.Op)}})
	}
	return rows
}

// teamColumns names the teams table's columns, the marker's first ("");
// the department and its surplus only when either side has departments.
func teamColumns(s Summary) []string {
	if s.hasDepartments() {
		return []string{"", "Team", "Department", "Flavor", "Guaranteed", "Lendable", "Borrow", "Dept surplus", "Weight", "Reclaim"}
	}
	return []string{"", "Team", "Flavor", "Guaranteed", "Lendable", "Borrow", "Weight", "Reclaim"}
}

// teamNameColumns is how many columns after the marker name the row (team,
// department, flavor) rather than number it: Markdown emphasises the others.
func teamNameColumns(s Summary) int {
	if s.hasDepartments() {
		return 3
	}
	return 2
}

func upper(cols []string) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = strings.ToUpper(c)
	}
	return out
}

func teamRows(s Summary) []row {
	var rows []row
	for _, t := range s.Teams {
		for _, q := range t.ShownQuotas() {
			op := q.Op
			switch {
			case t.Op == Added || t.Op == Removed:
				op = t.Op
			case op == Unchanged && (t.Weight.Changed() || t.Reclaim.Changed() || t.Department.Changed()):
				op = Changed
			}
			cells := []string{marker(op), t.Name, q.Flavor,
				cellValue(q.Guaranteed, op), cellValue(q.Lendable, op), cellValue(q.Borrow, op),
				cellValue(t.Weight, op), cellValue(t.Reclaim, op)}
			if s.hasDepartments() {
				cells = slices.Insert(cells, 6, cellValue(q.DepartmentSurplus, op))
				cells = slices.Insert(cells, 2, cellValue(t.Department, op))
			}
			rows = append(rows, row{op, cells})
		}
	}
	return rows
}

// cellValue prints a table cell: the row's marker already says a row is
// added or removed, so those show the one side that exists rather than a
// column of "– → 16".
func cellValue[T comparable](v Value[T], op Op) string {
	switch op {
	case Added:
		return show(v.New)
	case Removed:
		return show(v.Old)
	}
	return v.String()
}

// share is how much of a flavor's capacity is guaranteed to teams.
func share(f FlavorChange) Value[string] {
	pct := func(g, c *int64) *string {
		if g == nil || c == nil {
			return nil
		}
		s := "–"
		if *c > 0 {
			s = fmt.Sprintf("%d%%", (*g*100+*c/2) / *c)
		}
		return &s
	}
	return pair(pct(f.Guaranteed.Old, f.Capacity.Old), pct(f.Guaranteed.New, f.Capacity.New))
}

// String tallies the counts: "1 added, 0 removed, 2 changed, 9 unchanged".
func (c Counts) String() string {
	return fmt.Sprintf("%d added, %d removed, %d changed, %d unchanged", c.Added, c.Removed, c.Changed, c.Unchanged)
}

func marker(op Op) string {
	switch op {
	case Added:
		return "+"
	case Removed:
		return "-"
	case Changed:
		return "~"
	}
	return " "
}

func opColor(op Op) string {
	switch op {
	case Added:
		return sgrGreen
	case Removed:
		return sgrRed
	case Changed:
		return sgrYellow
	}
	return ""
}

func diffLineColor(l string) string {
	switch {
	case strings.HasPrefix(l, "---"), strings.HasPrefix(l, "+++"):
		return sgrBold
	case strings.HasPrefix(l, "@@"):
		return sgrCyan
	case strings.HasPrefix(l, "+"):
		return sgrGreen
	case strings.HasPrefix(l, "-"):
		return sgrRed
	}
	return ""
}

func (s Summary) needsAttention() bool {
	return len(s.Losses)+len(s.NewWarnings)+len(s.ChangedWarnings)+len(s.RemovedNamespaces)+len(s.ReviewsDue) > 0
}

// namespaceRemoval says what Argo CD will do with a Namespace the agreement
// no longer renders, given the sync options it carried.
func namespaceRemoval(ns, syncOptions string) string {
	opts := map[string]bool{}
	for _, o := range strings.Split(syncOptions, ",") {
		opts[strings.TrimSpace(o)] = true
	}
	switch {
	case opts["Prune=false"]:
		return fmt.Sprintf("Namespace %s is no longer rendered: Argo CD keeps it (Prune=false) with every PVC, Secret and Job in it, and shows the application OutOfSync until someone deletes it; its queues and quotas are pruned", ns)
	case opts["Prune=confirm"]:
		return fmt.Sprintf("Namespace %s is no longer rendered: Argo CD deletes it, and every PVC, Secret and Job in it, once someone confirms the prune (Prune=confirm)", ns)
	}
	return fmt.Sprintf("Namespace %s is no longer rendered: with pruning on, Argo CD deletes it and every workload in it", ns)
}

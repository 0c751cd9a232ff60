package diff

import (
	"cmp"
	"fmt"
	"html"
	"slices"
	"strings"
)

// GitHubCommentLimit is the most characters GitHub accepts in a pull
// request comment.
const GitHubCommentLimit = 65536

// MarkdownLimit is the size Markdown keeps its output under, in bytes (a
// character is at least one byte, so this is also a bound on characters). It
// leaves room below GitHubCommentLimit for a workflow that wraps the output.
const MarkdownLimit = GitHubCommentLimit - 4096

// MarkdownMarker opens every Markdown report, so a CI job can find the
// comment it posted earlier and update it instead of adding another.
const MarkdownMarker = "<!-- tenancy-diff -->"

// Markdown renders the report for a pull request comment: the summary
// tables, a Mermaid chart of guaranteed GPUs per team before and after, and
// each object's diff in a collapsed block. Output that would exceed limit
// bytes (MarkdownLimit when limit <= 0) is cut at a block boundary with a
// note saying what was left out.
func Markdown(r *Report, limit int) []byte {
	if limit <= 0 {
		limit = MarkdownLimit
	}
	blocks := []string{fmt.Sprintf("%s\n### tenancy diff: %s → %s\n\n", MarkdownMarker, code(r.Old), code(r.New))}
	blocks = append(blocks, markdownSummary(r)...)
	if !r.Changed {
		return fit(blocks, limit, 0)
	}
	blocks = append(blocks, fmt.Sprintf("#### Manifests\n\n%s\n\n", r.Counts.String()))
	objects := markdownObjects(r)
	return fit(append(blocks, objects...), limit, len(objects))
}

// markdownSummary is r's summary in blocks: what the change does to the
// pool, its teams and departments, and what needs attention. A fleet's
// comment holds one per cluster.
func markdownSummary(r *Report) []string {
	var blocks []string
	add := func(format string, args ...any) { blocks = append(blocks, fmt.Sprintf(format, args...)) }
	if !r.Changed {
		add("No changes: both sides render the same %d objects.\n", r.Counts.Unchanged)
		return append(blocks, attentionMarkdown(r.Summary))
	}
	add("**Teams:** %s · **Objects:** %s\n\n", teamCounts(r.Summary), r.Counts.String())
	blocks = append(blocks, attentionMarkdown(r.Summary))

	cols, names := teamColumns(r.Summary), teamNameColumns(r.Summary)
	align := []string{":-:"}
	for i := range cols[1:] {
		switch {
		case i < names || i == len(cols)-2: // the names, and reclaim (a word)
			align = append(align, "---")
		default:
			align = append(align, "--:")
		}
	}
	add("#### Teams\n\n| %s |\n|%s|\n", strings.Join(cols, " | ")[1:], strings.Join(align, "|"))
	for _, rw := range teamRows(r.Summary) {
		cells := []string{opWord(rw.op)}
		for i, c := range rw.cells[1:] {
			if i < names {
				cells = append(cells, cell(c))
			} else {
				cells = append(cells, emph(rw.op, c))
			}
		}
		add("| %s |\n", strings.Join(cells, " | "))
	}
	if lines := departmentLines(r.Summary); len(lines) > 0 {
		add("\n#### Departments\n\n")
		for _, l := range lines {
			add("- %s\n", cell(l))
		}
	}
	if len(r.Summary.Windows) > 0 {
		add("\n#### Lending windows\n\n")
		for _, l := range r.Summary.Windows {
			add("- %s\n", cell(l))
		}
	}
	if len(r.Summary.Pools) > 0 {
		add("\n#### KAI node pools\n\n")
		for _, l := range r.Summary.Pools {
			add("- %s\n", cell(l))
		}
	}
	if header, rows := contentionTable(r.Summary); len(rows) > 0 {
		cols := []string{""}
		align := []string{":-:"}
		for _, h := range header[1:] {
			cols = append(cols, strings.ToUpper(h[:1])+strings.ToLower(h[1:]))
			switch h {
			case "GUARANTEED", "ALONE", "ALL BUSY":
				align = append(align, "--:")
			default:
				align = append(align, "---")
			}
		}
		add("\n#### Contention\n\nWhat each team the change touches runs alone and with every team busy (`tenancy explain --contention`; a range: first come).\n\n| %s |\n|%s|\n", strings.Join(cols, " | ")[1:], strings.Join(align, "|"))
		for _, rw := range rows[:min(len(rows), markdownRowsPerTable)] {
			cells := []string{opWord(rw.op)}
			for i, c := range rw.cells[1:] {
				switch header[i+1] {
				case "GUARANTEED", "ALONE", "ALL BUSY":
					cells = append(cells, emph(rw.op, c))
				default:
					cells = append(cells, cell(c))
				}
			}
			add("| %s |\n", strings.Join(cells, " | "))
		}
		add("%s", moreRows(len(rows), "teams"))
	}
	if len(r.Summary.Priorities) > 0 {
		add("\n#### Priorities\n\n| | Priority | Value | Preemptible | May borrow (Kueue) | May borrow (KAI) | KAI PriorityClass |\n|:-:|---|--:|---|---|---|--:|\n")
		for _, rw := range priorityRows(r.Summary) {
			c := rw.cells
			add("| %s | %s | %s | %s | %s | %s | %s |\n", opWord(rw.op), cell(c[1]), emph(rw.op, c[2]), emph(rw.op, c[3]), emph(rw.op, c[4]), emph(rw.op, c[5]), emph(rw.op, c[6]))
		}
	}
	add("\n#### Pool %s\n\n| | Flavor | Resource | Capacity | Guaranteed | Share |\n|:-:|---|---|--:|--:|--:|\n", code(r.Summary.poolName()))
	for _, rw := range flavorRows(r.Summary) {
		c := rw.cells
		add("| %s | %s | %s | %s | %s | %s |\n", opWord(rw.op), cell(c[1]), cell(c[2]), emph(rw.op, c[3]), emph(rw.op, c[4]), emph(rw.op, c[5]))
	}
	if len(r.Summary.NodeLoss) > 0 {
		add("\n**If one node is lost:**\n")
		for _, n := range r.Summary.NodeLoss {
			add("- %s\n", cell(n.String()))
		}
	}
	if len(r.Summary.Approvals) > 0 {
		add("\n#### Approvals needed\n\n| Part | Owners | Why |\n|---|---|---|\n")
		for _, a := range r.Summary.Approvals[:min(len(r.Summary.Approvals), markdownRowsPerTable)] {
			who := "_no owners named_"
			if len(a.Owners) > 0 {
				who = cell(strings.Join(a.Owners, " "))
			}
			add("| %s | %s | %s |\n", cell(a.Part), who, cell(strings.Join(a.Why, "; ")))
		}
		add("%s", moreRows(len(r.Summary.Approvals), "parts"))
	}
	add("\n")
	for _, f := range r.Summary.Flavors {
		if c := guaranteeChart(r.Summary, f.Name); c != "" {
			blocks = append(blocks, c)
		}
	}
	return blocks
}

// markdownRowsPerTable caps the contention and approval tables of a PR
// comment: a change to hundreds of teams would otherwise fill GitHub's
// comment limit with rows the teams table already names, and leave no room
// for a single object diff. The text and JSON outputs keep every row.
const markdownRowsPerTable = 50

// moreRows says how many rows of a table over markdownRowsPerTable were
// left out, and where to find them; "" when none were.
func moreRows(n int, what string) string {
	if n <= markdownRowsPerTable {
		return ""
	}
	return fmt.Sprintf("\n_… and %d more %s: `tenancy diff` without `--output markdown` lists them all._\n", n-markdownRowsPerTable, what)
}

// markdownObjects is a block per added, removed or changed object of r.
func markdownObjects(r *Report) []string {
	var blocks []string
	for _, o := range r.Objects {
		blocks = append(blocks, objectMarkdown(o))
	}
	return blocks
}

// fit joins blocks while they stay under limit; when one does not, it stops
// and says how much was left out. objects is how many of the blocks are
// object diffs (they come last), so the note can count them.
func fit(blocks []string, limit, objects int) []byte {
	var b strings.Builder
	for i, blk := range blocks {
		// Keep room for the note whenever more blocks follow.
		reserve := 0
		if i < len(blocks)-1 {
			reserve = 400
		}
		if b.Len()+len(blk)+reserve > limit {
			left := len(blocks) - i
			shown := max(objects-left, 0)
			summaryCut := ""
			if left > objects {
				summaryCut = " The summary above is cut short too."
			}
			fmt.Fprintf(&b, "\n> [!NOTE]\n> **Output truncated** to stay under GitHub's 65,536-character comment limit: "+
				"%d of %d object diffs shown.%s Run `tenancy diff` locally for the full diff.\n", shown, objects, summaryCut)
			return []byte(b.String())
		}
		b.WriteString(blk)
	}
	return []byte(b.String())
}

func attentionMarkdown(s Summary) string {
	if !s.needsAttention() {
		return ""
	}
	var b strings.Builder
	b.WriteString("> [!WARNING]\n")
	for _, l := range s.Losses {
		fmt.Fprintf(&b, "> - Team **%s** loses %d guaranteed %s GPUs (%d → %d)\n", cell(l.Team), l.Old-l.New, code(l.Flavor), l.Old, l.New)
	}
	for _, ns := range s.RemovedNamespaces {
		fmt.Fprintf(&b, "> - %s\n", cell(namespaceRemoval(ns, s.NamespaceSyncOptions[ns])))
	}
	for _, w := range s.NewWarnings {
		field := ""
		if f := w.Field(); f != "" {
			field = " " + code(f)
		}
		fmt.Fprintf(&b, "> - New warning: %s%s: %s\n", code(w.Position()), field, cell(w.Message))
	}
	for _, w := range s.ChangedWarnings {
		field := ""
		if f := w.New.Field(); f != "" {
			field = " " + code(f)
		}
		fmt.Fprintf(&b, "> - Changed warning: %s%s: %s\n", code(w.New.Position()), field, cell(w.Message()))
	}
	for _, r := range s.ReviewsDue {
		fmt.Fprintf(&b, "> - Review overdue: %s\n", cell(r))
	}
	b.WriteString("\n")
	return b.String()
}

func teamCounts(s Summary) string {
	var n [4]int
	for _, t := range s.Teams {
		switch t.Op {
		case Added:
			n[0]++
		case Removed:
			n[1]++
		case Changed:
			n[2]++
		default:
			n[3]++
		}
	}
	return fmt.Sprintf("%d added, %d removed, %d changed, %d unchanged", n[0], n[1], n[2], n[3])
}

// chartTeams is how many teams a chart shows before it keeps only the teams
// whose guarantee changes; chartMaxTeams caps even those, largest change first.
const (
	chartTeams    = 15
	chartMaxTeams = 30
)

// guaranteeChart draws guaranteed GPUs of one flavor per team, before and
// after, when any team's guarantee of the flavor changes. Mermaid's xychart
// draws several bar series on top of each other, so before and after are
// neighbouring bars of one series.
func guaranteeChart(s Summary, flavor string) string {
	type bar struct {
		team     string
		old, new int64
	}
	var bars []bar
	var top int64
	for _, t := range s.Teams {
		for _, q := range t.Quotas {
			if q.Flavor == flavor && q.Shown() {
				o, n := deref(q.Guaranteed.Old), deref(q.Guaranteed.New)
				bars = append(bars, bar{t.Name, o, n})
				top = max(top, o, n)
			}
		}
	}
	changed := slices.DeleteFunc(slices.Clone(bars), func(b bar) bool { return b.old == b.new })
	if len(changed) == 0 {
		return "" // nothing to see: every pair of bars would be equal
	}
	title := fmt.Sprintf("Guaranteed %s GPUs per team, before and after", mermaidText(flavor))
	if len(bars) > chartTeams {
		bars, title = changed, fmt.Sprintf("Guaranteed %s GPUs of the teams whose guarantee changes, before and after", mermaidText(flavor))
		if len(bars) > chartMaxTeams {
			// The largest changes, shown in name order.
			slices.SortStableFunc(bars, func(a, b bar) int { return cmp.Compare(abs(b.new-b.old), abs(a.new-a.old)) })
			bars = bars[:chartMaxTeams]
			slices.SortFunc(bars, func(a, b bar) int { return strings.Compare(a.team, b.team) })
			title = fmt.Sprintf("Guaranteed %s GPUs of the %d teams whose guarantee changes most, before and after", mermaidText(flavor), chartMaxTeams)
		}
	}
	for _, f := range s.Flavors {
		if f.Name == flavor {
			top = max(top, deref(f.Capacity.Old), deref(f.Capacity.New))
		}
	}
	var labels, values []string
	for _, b := range bars {
		labels = append(labels, fmt.Sprintf(`"%s before", "%s after"`, mermaidText(b.team), mermaidText(b.team)))
		values = append(values, fmt.Sprintf("%d, %d", b.old, b.new))
	}
	return fmt.Sprintf("```mermaid\nxychart-beta\n  title \"%s\"\n  x-axis [%s]\n  y-axis \"GPUs\" 0 --> %d\n  bar [%s]\n```\n\n",
		title, strings.Join(labels, ", "), max(top, 1), strings.Join(values, ", "))
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

func objectMarkdown(o ObjectChange) string {
	var b strings.Builder
	what := string(o.Op)
	if o.Op == Changed {
		what = fmt.Sprintf("changed, %d field(s)", len(o.Fields))
	}
	fmt.Fprintf(&b, "<details>\n<summary>%s <code>%s %s</code> <sub>%s</sub> — %s</summary>\n\n",
		marker(o.Op), html.EscapeString(o.Kind), html.EscapeString(o.qualifiedName()), html.EscapeString(o.APIVersion), what)
	for _, f := range o.Fields {
		fmt.Fprintf(&b, "- %s\n", code(f.String()))
		if f.Lines != "" {
			fence := fenceFor(f.Lines)
			fmt.Fprintf(&b, "\n  %sdiff\n%s  %s\n", fence, indentLines(f.Lines, "  "), fence)
		}
	}
	if len(o.Fields) > 0 {
		b.WriteString("\n")
	}
	if !o.textsOnly() {
		fence := fenceFor(o.Unified)
		fmt.Fprintf(&b, "%sdiff\n%s%s\n\n", fence, o.Unified, fence)
	}
	b.WriteString("</details>\n\n")
	return b.String()
}

// indentLines puts prefix before every line of s, so a fence nests in a
// list item.
func indentLines(s, prefix string) string {
	var b strings.Builder
	for l := range strings.Lines(s) {
		b.WriteString(prefix + l)
	}
	return b.String()
}

func opWord(op Op) string {
	if op == Unchanged {
		return ""
	}
	return marker(op) + " " + string(op)
}

// emph marks up a cell: changed values bold, removed rows struck through
// so their numbers are not read as current.
func emph(op Op, s string) string {
	switch {
	case op == Removed && s != "":
		return "~~" + cell(s) + "~~"
	case op == Changed && strings.Contains(s, "→"):
		return "**" + cell(s) + "**"
	}
	return cell(s)
}

// cell escapes what would break a table cell or turn into markup.
func cell(s string) string {
	return cellEscaper.Replace(s)
}

// cellEscaper escapes the HTML that GitHub would interpret (quotes need no
// escaping in text) and the Markdown that would break a table or emphasise.
var cellEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;",
	"|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`")

// code wraps s in a code span whose backtick run is longer than any inside.
func code(s string) string {
	ticks := "`" + strings.Repeat("`", longestRun(s, '`'))
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return ticks + pad + s + pad + ticks
}

func fenceFor(s string) string {
	return strings.Repeat("`", max(3, longestRun(s, '`')+1))
}

func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// mermaidText keeps a label from closing Mermaid's quoted string.
func mermaidText(s string) string {
	return strings.ReplaceAll(s, `"`, "'")
}

package diff

import (
	"fmt"
	"strings"
)

// FleetText renders a fleet's report for a terminal: a line per cluster
// saying what changes there, then each cluster's report as Text prints a
// single cluster's.
func FleetText(r *FleetReport, color bool) []byte {
	p := textPrinter{color: color}
	p.line(sgrBold, fmt.Sprintf("tenancy diff %s → %s", r.Old, r.New))
	p.line("", "")
	p.line(sgrBold, "Fleet: "+clusterCounts(r))
	p.table([]string{"", "CLUSTER", "ROLE", "TEAMS", "OBJECTS"}, clusterRows(r))
	p.attention(r.warnings())
	for _, c := range r.Clusters {
		p.line("", "")
		p.line(opColor(c.Op)+sgrBold, fmt.Sprintf("Cluster %s (%s)%s", c.Cluster, c.Role(), clusterOpNote(c.Op)))
		p.report(c.Report)
	}
	return []byte(p.b.String())
}

// FleetMarkdown renders a fleet's report for a pull request comment: a
// table of the clusters, each cluster's summary as Markdown prints a single
// cluster's, then every cluster's object diffs. The object diffs come last
// so that a comment cut to fit under limit (MarkdownLimit when limit <= 0)
// loses them before any cluster's summary.
func FleetMarkdown(r *FleetReport, limit int) []byte {
	if limit <= 0 {
		limit = MarkdownLimit
	}
	blocks := []string{fmt.Sprintf("%s\n### tenancy diff: %s → %s\n\n", MarkdownMarker, code(r.Old), code(r.New))}
	var b strings.Builder
	fmt.Fprintf(&b, "**Fleet:** %s · **Objects:** %s\n\n", clusterCounts(r), r.Counts.String())
	b.WriteString("| | Cluster | Role | Teams | Objects |\n|:-:|---|---|---|---|\n")
	for _, rw := range clusterRows(r) {
		c := rw.cells
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", opWord(rw.op), cell(c[1]), cell(c[2]), cell(c[3]), cell(c[4]))
	}
	b.WriteString("\n")
	b.WriteString(attentionMarkdown(r.warnings()))
	blocks = append(blocks, b.String())
	for _, c := range r.Clusters {
		blocks = append(blocks, fmt.Sprintf("### Cluster %s (%s)%s\n\n", code(c.Cluster), c.Role(), clusterOpNote(c.Op)))
		summary := markdownSummary(c.Report)
		blocks = append(blocks, summary...)
		if !strings.HasSuffix(strings.Join(summary, ""), "\n\n") {
			blocks = append(blocks, "\n") // a blank line before the next heading
		}
	}
	var objects []string
	for _, c := range r.Clusters {
		objs := markdownObjects(c.Report)
		if len(objs) == 0 {
			continue
		}
		if len(objects) == 0 {
			blocks = append(blocks, "### Manifests\n\n")
		}
		// The cluster's heading travels with its first object, so every
		// block after the summaries is an object diff fit can count.
		objs[0] = fmt.Sprintf("#### Cluster %s: %s\n\n", code(c.Cluster), c.Report.Counts.String()) + objs[0]
		objects = append(objects, objs...)
	}
	return fit(append(blocks, objects...), limit, len(objects))
}

// clusterCounts tallies the clusters by what happens to them: "3 clusters:
// 0 added, 0 removed, 2 changed, 1 unchanged"; "1 cluster: ..." when only
// one is compared.
func clusterCounts(r *FleetReport) string {
	var n Counts
	for _, c := range r.Clusters {
		switch c.Op {
		case Added:
			n.Added++
		case Removed:
			n.Removed++
		case Changed:
			n.Changed++
		default:
			n.Unchanged++
		}
	}
	noun := "clusters"
	if len(r.Clusters) == 1 {
		noun = "cluster" // diff --cluster
	}
	return fmt.Sprintf("%d %s: %s", len(r.Clusters), noun, n.String())
}

// clusterRows is a line per cluster: its role, and what changes of its
// teams and objects.
func clusterRows(r *FleetReport) []row {
	var rows []row
	for _, c := range r.Clusters {
		rows = append(rows, row{c.Op, []string{marker(c.Op), c.Cluster, c.Role(), teamCounts(c.Report.Summary), c.Report.Counts.String()}})
	}
	return rows
}

// clusterOpNote says, after a cluster's heading, what happens to the
// cluster: it joins or leaves the fleet (its objects are then all added or
// all removed), changes, or does not.
func clusterOpNote(op Op) string {
	switch op {
	case Added:
		return ": joins the fleet"
	case Removed:
		return ": leaves the fleet"
	case Changed:
		return ": changes"
	}
	return ": unchanged"
}

// warnings is a summary holding only the warnings every cluster shares and
// the reviews due, so the single cluster's Attention printers say them
// once for the fleet.
func (r *FleetReport) warnings() Summary {
	return Summary{NewWarnings: r.NewWarnings, ChangedWarnings: r.ChangedWarnings, ReviewsDue: r.ReviewsDue}
}

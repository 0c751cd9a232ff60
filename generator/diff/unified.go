package diff

import (
	"fmt"
	"strings"
)

// contextLines is how many unchanged lines surround each change, as in
// diff -u and git diff.
const contextLines = 3

// unified returns a unified diff of one object's YAML. A nil side is an
// absent object (/dev/null), so an added object is all "+" lines.
func unified(k ObjectKey, old, new []byte) string {
	a, b := splitLines(old), splitLines(new)
	oldName, newName := "a/"+objectPath(k), "b/"+objectPath(k)
	if old == nil {
		oldName = "/dev/null"
	}
	if new == nil {
		newName = "/dev/null"
	}
	edits := lineDiff(a, b)
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", oldName, newName)
	for _, h := range hunks(edits, contextLines) {
		sb.WriteString(h)
	}
	return sb.String()
}

// textDiff returns the hunks of a unified diff of two texts, without the
// ---/+++ header: the lines of a file embedded in an object, such as the
// agreement in the windows controller's ConfigMap.
func textDiff(old, new string) string {
	return strings.Join(hunks(lineDiff(splitLines([]byte(old)), splitLines([]byte(new))), contextLines), "")
}

// objectPath names an object like a file: Kind/namespace/name.
func objectPath(k ObjectKey) string {
	if k.Namespace != "" {
		return k.Kind + "/" + k.Namespace + "/" + k.Name
	}
	return k.Kind + "/" + k.Name
}

func splitLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	s := strings.TrimSuffix(string(data), "\n")
	return strings.Split(s, "\n")
}

// edit is one line of an edit script: ' ' kept, '-' deleted, '+' inserted.
type edit struct {
	op   byte
	line string
}

// maxEditDistance bounds the work lineDiff does on one object: past this
// many differing lines it stops looking for the shortest script and
// replaces the differing middle whole. Rendered objects are tens of lines;
// the bound only keeps a pathological input from using quadratic memory.
const maxEditDistance = 1000

// lineDiff returns an edit script turning a into b: the shortest one, by
// Myers' O(ND) algorithm ("An O(ND) Difference Algorithm and Its
// Variations", 1986), unless more than maxEditDistance lines differ. It is
// kept over go-udiff, which was measured to give longer scripts past 50
// differences and to split an added list element (docs/decisions.md).
func lineDiff(a, b []string) []edit {
	// Lines shared at the start and the end cost nothing to find and are
	// most of a typical object.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var out []edit
	for _, l := range a[:pre] {
		out = append(out, edit{' ', l})
	}
	out = append(out, myers(a[pre:len(a)-suf], b[pre:len(b)-suf])...)
	for _, l := range a[len(a)-suf:] {
		out = append(out, edit{' ', l})
	}
	return out
}

func myers(a, b []string) []edit {
	n, m := len(a), len(b)
	limit := n + m
	off := limit + 1
	v := make([]int, 2*limit+3) // v[off+k]: the furthest x on diagonal k
	// trace[d] is the part of v that round d reads, diagonals -d-1..d+1,
	// kept for the backtrack: O(D²) memory rather than O(D·(N+M)).
	var trace [][]int
	// No condition: the path reaches the end by round d = n+m at the latest.
	for d := 0; ; d++ {
		if d > maxEditDistance {
			return replaceAll(a, b)
		}
		trace = append(trace, append([]int(nil), v[off-d-1:off+d+2]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // step down: an insertion
			} else {
				x = v[off+k-1] + 1 // step right: a deletion
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, a, b)
			}
		}
	}
}

func replaceAll(a, b []string) []edit {
	out := make([]edit, 0, len(a)+len(b))
	for _, l := range a {
		out = append(out, edit{'-', l})
	}
	for _, l := range b {
		out = append(out, edit{'+', l})
	}
	return out
}

func backtrack(trace [][]int, a, b []string) []edit {
	x, y := len(a), len(b)
	var rev []edit
	for d := len(trace) - 1; d >= 0; d-- {
		v := func(k int) int { return trace[d][k+d+1] }
		k := x - y
		var prevK int
		if k == -d || (k != d && v(k-1) < v(k+1)) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := v(prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			rev = append(rev, edit{' ', a[x-1]})
			x, y = x-1, y-1
		}
		if d > 0 {
			if x == prevX {
				rev = append(rev, edit{'+', b[y-1]})
			} else {
				rev = append(rev, edit{'-', a[x-1]})
			}
		}
		x, y = prevX, prevY
	}
	out := make([]edit, len(rev))
	for i, e := range rev {
		out[len(rev)-1-i] = e
	}
	return out
}

// hunks groups an edit script into unified-diff hunks with ctx lines of
// context, merging changes whose contexts touch.
func hunks(edits []edit, ctx int) []string {
	var out []string
	i := 0
	for i < len(edits) {
		// Find the next change.
		for i < len(edits) && edits[i].op == ' ' {
			i++
		}
		if i == len(edits) {
			break
		}
		start := max(i-ctx, 0)
		// Extend while the next change is within 2*ctx kept lines.
		end := i
		for j := i; j < len(edits); j++ {
			if edits[j].op != ' ' {
				end = j
				continue
			}
			if j-end > 2*ctx {
				break
			}
		}
		stop := min(end+ctx+1, len(edits))
		out = append(out, formatHunk(edits, start, stop))
		i = stop
	}
	return out
}

func formatHunk(edits []edit, start, stop int) string {
	// Line numbers of the hunk's first line on each side.
	aLine, bLine := 1, 1
	for _, e := range edits[:start] {
		if e.op != '+' {
			aLine++
		}
		if e.op != '-' {
			bLine++
		}
	}
	var aLen, bLen int
	var body strings.Builder
	for _, e := range edits[start:stop] {
		if e.op != '+' {
			aLen++
		}
		if e.op != '-' {
			bLen++
		}
		body.WriteByte(e.op)
		body.WriteString(e.line)
		body.WriteByte('\n')
	}
	return fmt.Sprintf("@@ -%s +%s @@\n%s", hunkRange(aLine, aLen), hunkRange(bLine, bLen), body.String())
}

// hunkRange prints start,len as GNU diff does: an empty range names the line
// before it, and a length of 1 is left out.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start-1)
	case 1:
		return fmt.Sprintf("%d", start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

package diff

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/internal/goldentest"
	"github.com/tenancy-dev/tenancy/generator/plan"
)

func h100(capacity int64) []plan.Flavor { return []plan.Flavor{flavor("h100", capacity)} }

func reference() *generator.Result {
	return agreement("gpu-pool", h100(32),
		team("inference", quota("h100", 8, 0, 0)),
		team("research", quota("h100", 8, 8, 8)),
		team("training", quota("h100", 16, 8, 8)))
}

// cases are pairs of renderings; the golden files under testdata/ hold each
// case's report in every format.
var cases = map[string]struct {
	old, new *generator.Result
}{
	"unchanged": {old: reference(), new: reference()},
	"team-gains-gpus": {
		old: agreement("gpu-pool", h100(32),
			team("inference", quota("h100", 8, 0, 0)),
			team("research", quota("h100", 8, 8, 8)),
			team("training", quota("h100", 12, 8, 8))),
		new: reference(),
	},
	"team-loses-gpus-with-warning": {
		old: reference(),
		new: withWarning(agreement("gpu-pool", h100(32),
			team("inference", quota("h100", 8, 0, 0)),
			team("research", quota("h100", 4, 0, 12)),
			team("training", quota("h100", 16, 8, 8))),
			"teams.research.borrow", "borrows up to 12 GPUs but only 8 are lendable"),
	},
	"team-added": {
		old: agreement("gpu-pool", h100(32),
			team("inference", quota("h100", 8, 0, 0)),
			team("training", quota("h100", 16, 8, 8))),
		new: reference(),
	},
	"team-removed": {
		old: reference(),
		new: agreement("gpu-pool", h100(32),
			team("inference", quota("h100", 8, 0, 0)),
			team("training", quota("h100", 16, 8, 8))),
	},
	"flavor-added": {
		old: reference(),
		new: agreement("gpu-pool", []plan.Flavor{flavor("a100", 16), flavor("h100", 32)},
			team("inference", quota("h100", 8, 0, 0)),
			team("research", quota("h100", 8, 8, 8), quota("a100", 16, 16, 0)),
			team("training", quota("h100", 16, 8, 8))),
	},
	"file-added":   {old: nil, new: reference()},
	"file-removed": {old: reference(), new: nil},
}

func TestGolden(t *testing.T) {
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r, err := Compare(Side{Label: "old/tenancy.toml", Result: tc.old}, Side{Label: "new/tenancy.toml", Result: tc.new})
			if err != nil {
				t.Fatal(err)
			}
			js, err := JSON(r)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", name, "diff.txt"), Text(r, false))
			golden(t, filepath.Join("testdata", name, "diff.color.txt"), Text(r, true))
			golden(t, filepath.Join("testdata", name, "diff.md"), Markdown(r, 0))
			golden(t, filepath.Join("testdata", name, "diff.json"), js)
		})
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	goldentest.Compare(t, path, got, "go test ./generator/diff -update")
}

func TestCompareCounts(t *testing.T) {
	for name, tc := range map[string]struct {
		want        Counts
		wantChanged bool
	}{
		"unchanged":       {Counts{Unchanged: 5}, false},
		"team-gains-gpus": {Counts{Changed: 1, Unchanged: 4}, true},
		"team-added":      {Counts{Added: 1, Unchanged: 4}, true},
		"team-removed":    {Counts{Removed: 1, Unchanged: 4}, true},
		"flavor-added":    {Counts{Added: 1, Changed: 3, Unchanged: 2}, true},
		"file-added":      {Counts{Added: 5}, true},
		"file-removed":    {Counts{Removed: 5}, true},
	} {
		t.Run(name, func(t *testing.T) {
			tc2 := cases[name]
			r, err := Compare(Side{Result: tc2.old}, Side{Result: tc2.new})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, r.Counts); diff != "" {
				t.Errorf("counts (-want,+got):\n%s", diff)
			}
			if r.Changed != tc.wantChanged {
				t.Errorf("Changed = %v, want %v", r.Changed, tc.wantChanged)
			}
		})
	}
}

func TestCompareNeitherSide(t *testing.T) {
	if _, err := Compare(Side{}, Side{}); err == nil {
		t.Fatal("Compare of two absent sides succeeded")
	}
}

func TestCompareDuplicateObject(t *testing.T) {
	r := reference()
	r.Objects = append(r.Objects, r.Objects[0])
	_, err := Compare(Side{Result: reference()}, Side{Result: r})
	if err == nil || !strings.Contains(err.Error(), "new side: object Cohort gpu-pool") {
		t.Fatalf("err = %v, want a duplicate object on the new side", err)
	}
}

func TestFieldPaths(t *testing.T) {
	r, err := Compare(Side{Result: cases["team-gains-gpus"].old}, Side{Result: cases["team-gains-gpus"].new})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range r.Objects {
		for _, f := range o.Fields {
			got = append(got, o.Name+": "+f.String())
		}
	}
	want := []string{"training: spec.resourceGroups[0].flavors[h100].resources[nvidia.com/gpu].nominalQuota: 12 → 16"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("field changes (-want,+got):\n%s", diff)
	}
}

func TestCompareFields(t *testing.T) {
	obj := func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		n, err := normalize(v.(map[string]any))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for name, tc := range map[string]struct {
		old, new string
		want     []string
	}{
		"same": {`{"a":1}`, `{"a":1}`, nil},
		"scalar": {`{"spec":{"weight":1}}`, `{"spec":{"weight":2}}`,
			[]string{"spec.weight: 1 → 2"}},
		"added and removed keys": {`{"a":1}`, `{"b":"x"}`,
			[]string{"a: 1 → (unset)", "b: (unset) → x"}},
		"label keys with dots are map keys, as field.Path writes them": {`{"metadata":{"labels":{"kueue.x-k8s.io/queue-name":"a"}}}`, `{"metadata":{"labels":{"kueue.x-k8s.io/queue-name":"b"}}}`,
			[]string{"metadata.labels[kueue.x-k8s.io/queue-name]: a → b"}},
		"keyed list ignores order": {`{"l":[{"name":"a","v":1},{"name":"b","v":2}]}`, `{"l":[{"name":"b","v":2},{"name":"a","v":3}]}`,
			[]string{"l[a].v: 1 → 3"}},
		"keyed list element added": {`{"l":[{"name":"a"}]}`, `{"l":[{"name":"a"},{"name":"b","v":2}]}`,
			[]string{"l[b].v: (unset) → 2"}},
		"keyed list element removed": {`{"l":[{"name":"a"},{"name":"b"}]}`, `{"l":[{"name":"b"}]}`,
			[]string{`l[a]: {"name":"a"} → (unset)`}},
		"topology levels keyed by nodeLabel": {`{"levels":[{"nodeLabel":"rack"}]}`, `{"levels":[{"nodeLabel":"block"},{"nodeLabel":"rack"}]}`,
			[]string{`levels[block]: (unset) → {"nodeLabel":"block"}`}},
		"duplicate names fall back to index": {`{"l":[{"name":"a","v":1},{"name":"a","v":2}]}`, `{"l":[{"name":"a","v":1},{"name":"a","v":3}]}`,
			[]string{"l[1].v: 2 → 3"}},
		"scalar list compared whole": {`{"r":["x"]}`, `{"r":["x","y"]}`,
			[]string{`r: ["x"] → ["x","y"]`}},
		"type change": {`{"q":"16"}`, `{"q":16}`,
			[]string{"q: 16 → 16"}},
		"empty string is quoted": {`{"a":""}`, `{"a":"x"}`,
			[]string{`a: "" → x`}},
	} {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, f := range compareFields(obj(tc.old), obj(tc.new)) {
				got = append(got, f.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
		})
	}
}

func TestMergeOrder(t *testing.T) {
	k := func(n string) ObjectKey { return ObjectKey{Kind: "K", Name: n} }
	got := mergeOrder([]ObjectKey{k("x"), k("a"), k("b"), k("c")}, []ObjectKey{k("a"), k("n"), k("c")})
	want := []ObjectKey{k("x"), k("a"), k("b"), k("n"), k("c")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want,+got):\n%s", diff)
	}
}

func TestSummary(t *testing.T) {
	tc := cases["team-loses-gpus-with-warning"]
	r, err := Compare(Side{Result: tc.old}, Side{Result: tc.new})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Loss{{Team: "research", Flavor: "h100", Old: 8, New: 4}}, r.Summary.Losses); diff != "" {
		t.Errorf("losses (-want,+got):\n%s", diff)
	}
	if len(r.Summary.NewWarnings) != 1 || r.Summary.NewWarnings[0].Field() != "teams.research.borrow" {
		t.Errorf("new warnings = %v, want the borrow warning", r.Summary.NewWarnings)
	}

	// A warning the old side already had is not new, even on another line.
	old := withWarning(reference(), "teams.research.borrow", "borrows up to 12 GPUs but only 8 are lendable")
	old.Warnings[0].Pos.Line = 12
	r, err = Compare(Side{Result: old}, Side{Result: tc.new})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Summary.NewWarnings) != 0 {
		t.Errorf("new warnings = %v, want none", r.Summary.NewWarnings)
	}

	// A removed team loses everything it was guaranteed.
	tc = cases["team-removed"]
	r, _ = Compare(Side{Result: tc.old}, Side{Result: tc.new})
	if diff := cmp.Diff([]Loss{{Team: "research", Flavor: "h100", Old: 8, New: 0}}, r.Summary.Losses); diff != "" {
		t.Errorf("losses (-want,+got):\n%s", diff)
	}

	// Adding a flavor changes only the teams that get some of it.
	tc = cases["flavor-added"]
	r, _ = Compare(Side{Result: tc.old}, Side{Result: tc.new})
	ops := map[string]Op{}
	for _, tm := range r.Summary.Teams {
		ops[tm.Name] = tm.Op
	}
	if diff := cmp.Diff(map[string]Op{"inference": Unchanged, "research": Changed, "training": Unchanged}, ops); diff != "" {
		t.Errorf("team ops (-want,+got):\n%s", diff)
	}
}

func TestUnified(t *testing.T) {
	lines := func(n int, change map[int]string) []byte {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			if s, ok := change[i]; ok {
				b.WriteString(s + "\n")
				continue
			}
			b.WriteString("line" + string(rune('a'+i-1)) + "\n")
		}
		return []byte(b.String())
	}
	k := ObjectKey{Kind: "ClusterQueue", Name: "t"}
	for name, tc := range map[string]struct {
		old, new []byte
		want     string
	}{
		"added object": {nil, []byte("a: 1\nb: 2\n"),
			"--- /dev/null\n+++ b/ClusterQueue/t\n@@ -0,0 +1,2 @@\n+a: 1\n+b: 2\n"},
		"removed object": {[]byte("a: 1\n"), nil,
			"--- a/ClusterQueue/t\n+++ /dev/null\n@@ -1 +0,0 @@\n-a: 1\n"},
		"one change in the middle": {lines(10, nil), lines(10, map[int]string{5: "five"}),
			"--- a/ClusterQueue/t\n+++ b/ClusterQueue/t\n@@ -2,7 +2,7 @@\n lineb\n linec\n lined\n-linee\n+five\n linef\n lineg\n lineh\n"},
		"distant changes make two hunks": {lines(20, nil), lines(20, map[int]string{2: "two", 19: "nineteen"}),
			"--- a/ClusterQueue/t\n+++ b/ClusterQueue/t\n@@ -1,5 +1,5 @@\n linea\n-lineb\n+two\n linec\n lined\n linee\n" +
				"@@ -16,5 +16,5 @@\n linep\n lineq\n liner\n-lines\n+nineteen\n linet\n"},
		"close changes share a hunk": {lines(12, nil), lines(12, map[int]string{2: "two", 8: "eight"}),
			"--- a/ClusterQueue/t\n+++ b/ClusterQueue/t\n@@ -1,11 +1,11 @@\n linea\n-lineb\n+two\n linec\n lined\n linee\n linef\n lineg\n-lineh\n+eight\n linei\n linej\n linek\n"},
		"insertion": {[]byte("a\nc\n"), []byte("a\nb\nc\n"),
			"--- a/ClusterQueue/t\n+++ b/ClusterQueue/t\n@@ -1,2 +1,3 @@\n a\n+b\n c\n"},
		"identical": {[]byte("a\n"), []byte("a\n"), "--- a/ClusterQueue/t\n+++ b/ClusterQueue/t\n"},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, unified(k, tc.old, tc.new)); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
		})
	}
}

// TestLineDiffIsMinimal checks the edit script against a brute-force LCS on
// many small inputs: Myers' script must be as short as possible and must
// turn a into b.
func TestLineDiffIsMinimal(t *testing.T) {
	inputs := []string{"", "a", "b", "ab", "ba", "abc", "acb", "abcabba", "cbabac", "xaxbxc", "aaaa", "abab"}
	for _, as := range inputs {
		for _, bs := range inputs {
			a, b := strings.Split(as, ""), strings.Split(bs, "")
			edits := lineDiff(a, b)
			var gotA, gotB []string
			changes := 0
			for _, e := range edits {
				if e.op != '+' {
					gotA = append(gotA, e.line)
				}
				if e.op != '-' {
					gotB = append(gotB, e.line)
				}
				if e.op != ' ' {
					changes++
				}
			}
			if strings.Join(gotA, "") != as || strings.Join(gotB, "") != bs {
				t.Errorf("%q → %q: script does not reproduce the inputs: %q / %q", as, bs, gotA, gotB)
			}
			if want := len(a) + len(b) - 2*lcs(a, b); changes != want {
				t.Errorf("%q → %q: %d changes, want %d", as, bs, changes, want)
			}
		}
	}
}

// TestLineDiffIsMinimalOnManyChanges: a change touching many scattered
// lines (a dashboard, a re-ordered list) still gets the shortest script. This
// is what go-udiff (gopls' diff) was measured to fail: past 50 differences it
// stops searching, and for these inputs shows 316 to 1,268 changed lines
// where 120 to 600 are enough (docs/decisions.md).
func TestLineDiffIsMinimalOnManyChanges(t *testing.T) {
	for _, every := range []int{15, 6, 3} {
		var a, b []string
		for i := range 600 {
			a = append(a, fmt.Sprintf("line %d", i))
			if i%every == 0 {
				b = append(b, fmt.Sprintf("changed %d", i), fmt.Sprintf("added %d", i))
			} else {
				b = append(b, fmt.Sprintf("line %d", i))
			}
		}
		changes := 0
		for _, e := range lineDiff(a, b) {
			if e.op != ' ' {
				changes++
			}
		}
		if want := len(a) + len(b) - 2*lcs(a, b); changes != want {
			t.Errorf("a change every %d lines: %d changed lines, want %d", every, changes, want)
		}
	}
}

func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

func TestMarkdownStaysUnderTheCommentLimit(t *testing.T) {
	var oldTeams, newTeams []teamSpec
	for i := range 400 {
		name := "team-" + strings.Repeat("x", 20) + string(rune('a'+i%26)) + string(rune('a'+i/26))
		oldTeams = append(oldTeams, team(name, quota("h100", 1, 0, 0)))
		if i%2 == 0 {
			newTeams = append(newTeams, team(name, quota("h100", 2, 1, 1)))
		}
	}
	r, err := Compare(Side{Label: "old", Result: agreement("gpu-pool", h100(1000), oldTeams...)},
		Side{Label: "new", Result: agreement("gpu-pool", h100(1000), newTeams...)})
	if err != nil {
		t.Fatal(err)
	}
	md := string(Markdown(r, 0))
	if n := len([]rune(md)); n >= GitHubCommentLimit || len(md) > MarkdownLimit {
		t.Fatalf("markdown is %d characters (%d bytes), over the limit", n, len(md))
	}
	if !strings.Contains(md, "**Output truncated**") {
		t.Errorf("truncated markdown has no note saying so:\n...%s", md[len(md)-500:])
	}
	if o, c := strings.Count(md, "<details>"), strings.Count(md, "</details>"); o != c {
		t.Errorf("%d <details> but %d </details>: a block was cut in half", o, c)
	}
	if strings.Count(md, "```")%2 != 0 {
		t.Error("odd number of code fences: a fence was cut in half")
	}
	// Without a limit problem nothing is cut.
	small, _ := Compare(Side{Result: reference()}, Side{Result: cases["team-added"].old})
	if strings.Contains(string(Markdown(small, 0)), "truncated") {
		t.Error("a small diff was truncated")
	}
}

func TestGuaranteeChart(t *testing.T) {
	many := func(n int, bump map[int]int64) *generator.Result {
		var ts []teamSpec
		for i := range n {
			ts = append(ts, team(fmt.Sprintf("t%02d", i), quota("h100", 1+bump[i], 0, 0)))
		}
		return agreement("gpu-pool", h100(100), ts...)
	}
	for name, tc := range map[string]struct {
		old, new *generator.Result
		want     string // the chart's x-axis line, "" for no chart
	}{
		"no guarantee changes, no chart": {old: many(3, nil), new: many(3, nil), want: ""},
		"few teams: all of them": {old: many(3, nil), new: many(3, map[int]int64{1: 4}),
			want: `  x-axis ["t00 before", "t00 after", "t01 before", "t01 after", "t02 before", "t02 after"]`},
		"many teams: only those that change": {old: many(40, nil), new: many(40, map[int]int64{7: 2, 30: 1}),
			want: `  x-axis ["t07 before", "t07 after", "t30 before", "t30 after"]`},
	} {
		t.Run(name, func(t *testing.T) {
			r, err := Compare(Side{Result: tc.old}, Side{Result: tc.new})
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			for _, l := range strings.Split(guaranteeChart(r.Summary, "h100"), "\n") {
				if strings.HasPrefix(l, "  x-axis") {
					got = l
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
		})
	}

	// Past chartMaxTeams changes, the largest ones.
	bump := map[int]int64{}
	for i := range 40 {
		bump[i] = int64(i % 5)
		if i == 39 {
			bump[i] = 50
		}
	}
	r, _ := Compare(Side{Result: many(40, nil)}, Side{Result: many(40, bump)})
	chart := guaranteeChart(r.Summary, "h100")
	if n := strings.Count(chart, ` before"`); n != chartMaxTeams {
		t.Errorf("%d teams charted, want %d:\n%s", n, chartMaxTeams, chart)
	}
	if !strings.Contains(chart, `"t39 after"`) {
		t.Errorf("the largest change is not charted:\n%s", chart)
	}
}

func TestLineDiffFallsBackOnHugeInputs(t *testing.T) {
	var a, b []string
	for i := range 3000 {
		a = append(a, fmt.Sprintf("old %d", i))
		b = append(b, fmt.Sprintf("new %d", i))
	}
	a = append([]string{"same start"}, append(a, "same end")...)
	b = append([]string{"same start"}, append(b, "same end")...)
	edits := lineDiff(a, b)
	var gotA, gotB []string
	for _, e := range edits {
		if e.op != '+' {
			gotA = append(gotA, e.line)
		}
		if e.op != '-' {
			gotB = append(gotB, e.line)
		}
	}
	if diff := cmp.Diff(a, gotA); diff != "" {
		t.Errorf("old side not reproduced (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(b, gotB); diff != "" {
		t.Errorf("new side not reproduced (-want,+got):\n%s", diff)
	}
	if edits[0] != (edit{' ', "same start"}) || edits[len(edits)-1] != (edit{' ', "same end"}) {
		t.Errorf("common lines at the ends are not kept: %v ... %v", edits[0], edits[len(edits)-1])
	}
}

// TestNamespaceRemovalSaysWhatArgoCDDoes: the attention line for a removed
// team Namespace follows the guardrails' sync options it carried.
func TestNamespaceRemovalSaysWhatArgoCDDoes(t *testing.T) {
	tests := map[string]struct {
		opts string
		want string
	}{
		"protected":       {"Prune=false,Delete=false", "Argo CD keeps it (Prune=false)"},
		"confirmed":       {"Prune=confirm", "once someone confirms the prune"},
		"unprotected":     {"", "Argo CD deletes it and every workload in it"},
		"spaces are fine": {"Delete=false, Prune=false", "Argo CD keeps it"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := namespaceRemoval("research", tc.opts); !strings.Contains(got, tc.want) {
				t.Errorf("namespaceRemoval(%q) = %q, want it to say %q", tc.opts, got, tc.want)
			}
		})
	}
}

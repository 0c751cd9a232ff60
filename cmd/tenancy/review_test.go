package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runAt runs `tenancy args...` in dir with the clock at now.
func runAt(dir string, now time.Time, args ...string) outcome {
	var out, errb bytes.Buffer
	e := &env{
		stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		getenv: func(string) string { return "" }, environ: func() []string { return nil },
		dir: dir, now: func() time.Time { return now },
	}
	code := run(e, args)
	return outcome{code: code, stdout: out.String(), stderr: errb.String()}
}

const reviewed = `version = 1
name = "gpu-pool"
owners = ["@acme/platform"]
review_by = 2027-01-15
[flavors.h100]
capacity = 16
[teams.training]
guaranteed = 8
owners = ["@acme/training"]
review_by = 2027-04-01
`

func TestCheckWarnsAfterReviewBy(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tenancy.toml"), []byte(reviewed), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		now  time.Time
		want outcome
	}{
		"before every date: valid, no warning": {
			now:  time.Date(2027, 1, 15, 12, 0, 0, 0, time.UTC),
			want: outcome{stderr: "tenancy.toml: valid\n"},
		},
		"past the pool's date: a warning, still valid (exit 0)": {
			now: time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC),
			want: outcome{stderr: "tenancy.toml:4:13: warning: review_by: the pool was due for review on 2027-01-15 (17 days ago): review it with its teams, then set the next date\n" +
				"tenancy.toml: valid\n"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			wantRun(t, runAt(dir, tc.now, "check"), tc.want)
		})
	}
	// A render never reads the date: past it, it writes the same and
	// warns of nothing.
	got := runAt(dir, time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), "render")
	if got.code != 0 || got.stderr != "" {
		t.Errorf("render past review_by: exit %d, stderr %q", got.code, got.stderr)
	}
}

func TestExplainListsReviews(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tenancy.toml"), []byte(reviewed), 0o644); err != nil {
		t.Fatal(err)
	}
	got := runAt(dir, time.Now(), "explain", "--at", "2027-02-01T10:00:00Z")
	want := `
Reviews (at 2027-02-01):
  PART           REVIEW BY   STATUS              OWNERS
  the pool       2027-01-15  OVERDUE by 17 days  @acme/platform
  team training  2027-04-01  due in 59 days      @acme/training
`
	if got.code != 0 || !strings.Contains(got.stdout, want) {
		t.Errorf("explain: exit %d, want the reviews table\n%s\nin:\n%s%s", got.code, want, got.stdout, got.stderr)
	}
}

// TestDiffSaysReviewsDue: the pull request comment says which parts of the
// new side are past their review_by.
func TestDiffSaysReviewsDue(t *testing.T) {
	split := copyExample(t, "split")
	file := filepath.Join(split, "tenancy.toml")
	got := runAt("/", time.Date(2027, 1, 20, 0, 0, 0, 0, time.UTC), "diff", "--output", "markdown", file, file)
	want := "> - Review overdue: the pool was due on 2027-01-15 (5 days ago; @acme/gpu-platform)\n" +
		"> - Review overdue: department science was due on 2027-01-15 (5 days ago; @acme/science-leads)\n"
	if got.code != 0 || !strings.Contains(got.stdout, want) {
		t.Errorf("diff: exit %d, want\n%s\nin:\n%s%s", got.code, want, got.stdout, got.stderr)
	}
}

// TestFleetDiffSaysReviewsDue: a fleet's diff says the reviews past due
// once for the fleet, as a single cluster's does, in every output.
func TestFleetDiffSaysReviewsDue(t *testing.T) {
	src, err := os.ReadFile("../../examples/fleet/tenancy.toml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	reviewed := strings.Replace(string(src), "name = \"gpu-pool\"\n", "name = \"gpu-pool\"\nowners = [\"@acme/platform\"]\nreview_by = 2027-01-15\n", 1)
	writeDiffFiles(t, dir, map[string]string{"old.toml": string(src), "new.toml": reviewed})
	const line = "the pool was due on 2027-01-15 (5 days ago; @acme/platform)"
	tests := map[string]string{
		"text":     "  ! review overdue: " + line + "\n",
		"markdown": "> - Review overdue: " + line + "\n",
		"json":     `"reviewsDue": [` + "\n" + `    "` + line + `"` + "\n  ]",
	}
	for output, want := range tests {
		t.Run(output, func(t *testing.T) {
			got := runAt(dir, time.Date(2027, 1, 20, 0, 0, 0, 0, time.UTC), "diff", "--no-color", "--output", output, "old.toml", "new.toml")
			if got.code != 0 || strings.Count(got.stdout, want) != 1 {
				t.Errorf("diff --output %s: exit %d, want once\n%s\nin:\n%s%s", output, got.code, want, got.stdout, got.stderr)
			}
		})
	}
	// Before the date, nothing is due.
	got := runAt(dir, time.Date(2027, 1, 15, 0, 0, 0, 0, time.UTC), "diff", "--no-color", "old.toml", "new.toml")
	if strings.Contains(got.stdout, "review overdue") {
		t.Errorf("on review_by itself, diff says a review is overdue:\n%s", got.stdout)
	}
}

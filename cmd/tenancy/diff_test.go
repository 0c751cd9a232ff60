package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/tenancy-dev/tenancy/generator/diff"
)

func diffGolden(t *testing.T, path string, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/tenancy -run TestDiff -update to create it)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s differs (-want,+got):\n%s", path, d)
	}
}

// TestDiffGolden renders each pair of agreements under testdata/diff in
// every output format. A case directory holds old.toml, new.toml, an
// optional args file (extra flags) and the expected stdout per format.
func TestDiffGolden(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "diff", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no cases under testdata/diff: %v", err)
	}
	formats := map[string]string{"text": "stdout.txt", "markdown": "stdout.md", "json": "stdout.json"}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			var extra []string
			if b, err := os.ReadFile(filepath.Join(dir, "args")); err == nil {
				extra = strings.Fields(string(b))
			}
			for format, file := range formats {
				args := append([]string{"old.toml", "new.toml", "--output", format}, extra...)
				stdout, stderr, code := runIn(dir, append([]string{"diff"}, args...)...)
				if code != exitOK {
					t.Fatalf("diff %v: exit %d, stderr:\n%s", args, code, stderr)
				}
				if stderr != "" {
					t.Errorf("diff %v: unexpected stderr:\n%s", args, stderr)
				}
				diffGolden(t, filepath.Join(dir, file), stdout)
				if format == "json" && !json.Valid([]byte(stdout)) {
					t.Errorf("--output json is not valid JSON")
				}
			}
		})
	}
}

func writeDiffFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readDiffCase(t *testing.T, name, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "diff", name, file))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// brokenDiffAgreement has a quota that is not a number, on line 9.
const brokenDiffAgreement = `version = 1
name = "gpu-pool"

[flavors.h100]
resource = "nvidia.com/gpu"
capacity = 32

[teams.training]
guaranteed = "sixteen"
`

func TestDiffExitCodes(t *testing.T) {
	same := readDiffCase(t, "team-gains-gpus", "new.toml")
	changed := readDiffCase(t, "team-gains-gpus", "old.toml")
	for name, tc := range map[string]struct {
		files      map[string]string
		args       []string
		wantCode   int
		wantStderr []string // substrings stderr must contain
	}{
		"no changes": {
			files: map[string]string{"a.toml": same, "b.toml": same}, args: []string{"a.toml", "b.toml"}, wantCode: 0,
		},
		"no changes with --exit-code": {
			files: map[string]string{"a.toml": same, "b.toml": same}, args: []string{"--exit-code", "a.toml", "b.toml"}, wantCode: 0,
		},
		"changes": {
			files: map[string]string{"a.toml": changed, "b.toml": same}, args: []string{"a.toml", "b.toml"}, wantCode: 0,
		},
		"changes with --exit-code": {
			files: map[string]string{"a.toml": changed, "b.toml": same}, args: []string{"a.toml", "b.toml", "--exit-code"}, wantCode: 1,
		},
		"changes with --exit-code in json": {
			files: map[string]string{"a.toml": changed, "b.toml": same}, args: []string{"--output", "json", "--exit-code", "a.toml", "b.toml"}, wantCode: 1,
		},
		"broken new side": {
			files: map[string]string{"a.toml": same, "b.toml": brokenDiffAgreement}, args: []string{"a.toml", "b.toml", "--exit-code"}, wantCode: 2,
			wantStderr: []string{"b.toml:9:", "teams.training.guaranteed", "the new side, b.toml, is invalid"},
		},
		"broken old side": {
			files: map[string]string{"a.toml": brokenDiffAgreement, "b.toml": same}, args: []string{"a.toml", "b.toml"}, wantCode: 2,
			wantStderr: []string{"a.toml:9:", "the old side, a.toml, is invalid"},
		},
		"both sides broken": {
			files: map[string]string{"a.toml": brokenDiffAgreement, "b.toml": brokenDiffAgreement}, args: []string{"a.toml", "b.toml"}, wantCode: 2,
			wantStderr: []string{"a.toml:9:", "the old side, a.toml, is invalid", "b.toml:9:", "the new side, b.toml, is invalid"},
		},
		"missing new file": {
			files: map[string]string{"a.toml": same}, args: []string{"a.toml", "b.toml"}, wantCode: 2,
			wantStderr: []string{"new side", "b.toml"},
		},
		"one file": {
			files: map[string]string{"a.toml": same}, args: []string{"a.toml"}, wantCode: 2,
			wantStderr: []string{"expected OLD and NEW files"},
		},
		"bad output": {
			files: map[string]string{"a.toml": same, "b.toml": same}, args: []string{"--output", "yaml", "a.toml", "b.toml"}, wantCode: 2,
			wantStderr: []string{`--output "yaml"`},
		},
		"bad backend": {
			files: map[string]string{"a.toml": same, "b.toml": same}, args: []string{"--backend", "volcano", "a.toml", "b.toml"}, wantCode: 2,
			wantStderr: []string{"volcano"},
		},
		"head without base": {
			files: map[string]string{"a.toml": same}, args: []string{"--head", "HEAD", "a.toml"}, wantCode: 2,
			wantStderr: []string{"--head needs --base"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeDiffFiles(t, dir, tc.files)
			stdout, stderr, code := runIn(dir, append([]string{"diff"}, tc.args...)...)
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.wantCode, stderr)
			}
			if tc.wantCode == 2 && stdout != "" {
				t.Errorf("an error wrote to stdout:\n%s", stdout)
			}
			if tc.wantCode != 2 && stdout == "" {
				t.Error("no output")
			}
			for _, s := range tc.wantStderr {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr does not mention %q:\n%s", s, stderr)
				}
			}
		})
	}
}

// diffGitRepo makes a repository in a temporary directory with git itself,
// isolated from the user's and the system's configuration.
type diffGitRepo struct {
	t   *testing.T
	dir string
}

func newDiffGitRepo(t *testing.T) *diffGitRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is needed for tenancy diff --base: %v", err)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_AUTHOR_NAME", "test")
	t.Setenv("GIT_AUTHOR_EMAIL", "test@example.com")
	t.Setenv("GIT_COMMITTER_NAME", "test")
	t.Setenv("GIT_COMMITTER_EMAIL", "test@example.com")
	r := &diffGitRepo{t: t, dir: t.TempDir()}
	r.git("init", "-q", "-b", "main")
	return r
}

func (r *diffGitRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes files (an empty content removes the file) and commits them.
func (r *diffGitRepo) commit(msg string, files map[string]string) {
	r.t.Helper()
	for name, content := range files {
		if content == "" {
			r.git("rm", "-q", name)
			continue
		}
		writeDiffFiles(r.t, r.dir, map[string]string{name: content})
		r.git("add", name)
	}
	r.git("commit", "-q", "-m", msg)
}

func diffJSON(t *testing.T, stdout string) *diff.Report {
	t.Helper()
	var r diff.Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("%v:\n%s", err, stdout)
	}
	return &r
}

func TestDiffGitBase(t *testing.T) {
	before := readDiffCase(t, "team-gains-gpus", "old.toml")
	after := readDiffCase(t, "team-gains-gpus", "new.toml")
	repo := newDiffGitRepo(t)
	repo.commit("first", map[string]string{"deploy/tenancy.toml": before, "README": "x\n"})
	repo.commit("second", map[string]string{"deploy/tenancy.toml": after})
	repo.commit("third: other team", map[string]string{"other/tenancy.toml": after})
	deploy := filepath.Join(repo.dir, "deploy")

	t.Run("base and head", func(t *testing.T) {
		stdout, stderr, code := runIn(repo.dir, "diff", "--base", "HEAD~2", "--head", "HEAD", "deploy/tenancy.toml", "--output", "json", "--exit-code")
		if code != 1 {
			t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr)
		}
		r := diffJSON(t, stdout)
		if r.Old != "HEAD~2:deploy/tenancy.toml" || r.New != "HEAD:deploy/tenancy.toml" {
			t.Errorf("labels %q → %q", r.Old, r.New)
		}
		if len(r.Summary.Losses) != 0 || r.Counts.Changed == 0 {
			t.Errorf("want a gain, got %+v", r.Counts)
		}
	})
	t.Run("base against the working tree, from a subdirectory", func(t *testing.T) {
		writeDiffFiles(t, deploy, map[string]string{"tenancy.toml": before})
		defer writeDiffFiles(t, deploy, map[string]string{"tenancy.toml": after})
		stdout, stderr, code := runIn(deploy, "diff", "--base", "HEAD~2", "--exit-code")
		if code != 0 {
			t.Fatalf("exit %d, want 0 (the working tree is back at the base); stderr:\n%s\n%s", code, stderr, stdout)
		}
		_, stderr, code = runIn(deploy, "diff", "--base", "HEAD", "--exit-code")
		if code != 1 {
			t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr)
		}
	})
	t.Run("file added", func(t *testing.T) {
		stdout, stderr, code := runIn(repo.dir, "diff", "--base", "HEAD~1", "--head", "HEAD", "other/tenancy.toml", "--output", "json")
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		r := diffJSON(t, stdout)
		if r.Counts.Added == 0 || r.Counts.Removed+r.Counts.Changed+r.Counts.Unchanged != 0 {
			t.Errorf("want everything added, got %+v", r.Counts)
		}
	})
	t.Run("file removed in the working tree", func(t *testing.T) {
		dir := filepath.Join(repo.dir, "other")
		if err := os.Remove(filepath.Join(dir, "tenancy.toml")); err != nil {
			t.Fatal(err)
		}
		defer writeDiffFiles(t, dir, map[string]string{"tenancy.toml": after})
		stdout, stderr, code := runIn(dir, "diff", "--base", "HEAD", "--output", "json")
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		r := diffJSON(t, stdout)
		if r.Counts.Removed == 0 || r.Counts.Added+r.Counts.Changed+r.Counts.Unchanged != 0 {
			t.Errorf("want everything removed, got %+v", r.Counts)
		}
	})
	t.Run("file on neither side", func(t *testing.T) {
		_, stderr, code := runIn(repo.dir, "diff", "--base", "HEAD~1", "--head", "HEAD", "nowhere.toml")
		if code != 2 || !strings.Contains(stderr, "nowhere.toml exists on neither side") {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
	})
	t.Run("unknown revision", func(t *testing.T) {
		stdout, stderr, code := runIn(repo.dir, "diff", "--base", "origin/main", "deploy/tenancy.toml")
		if code != 2 || stdout != "" || !strings.Contains(stderr, "revision origin/main not found") {
			t.Errorf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
		}
	})
	t.Run("a revision is never an option", func(t *testing.T) {
		_, stderr, code := runIn(repo.dir, "diff", "--base", "--output=/tmp/x", "deploy/tenancy.toml")
		if code != 2 || !strings.Contains(stderr, "not a git revision") {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
	})
	t.Run("broken file at a revision names the revision", func(t *testing.T) {
		repo.commit("broken", map[string]string{"deploy/tenancy.toml": brokenDiffAgreement})
		defer repo.git("reset", "-q", "--hard", "HEAD~1")
		stdout, stderr, code := runIn(repo.dir, "diff", "--base", "HEAD~1", "--head", "HEAD", "deploy/tenancy.toml")
		if code != 2 || stdout != "" || !strings.Contains(stderr, "HEAD:deploy/tenancy.toml:9:") || !strings.Contains(stderr, "the new side") {
			t.Errorf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
		}
	})
	t.Run("a symbolic link at a revision is refused", func(t *testing.T) {
		if err := os.Symlink("deploy/tenancy.toml", filepath.Join(repo.dir, "link.toml")); err != nil {
			t.Fatal(err)
		}
		repo.git("add", "link.toml")
		repo.git("commit", "-q", "-m", "link")
		defer repo.git("reset", "-q", "--hard", "HEAD~1")
		_, stderr, code := runIn(repo.dir, "diff", "--base", "HEAD", "--head", "HEAD", "link.toml")
		if code != 2 || !strings.Contains(stderr, "link.toml at HEAD is not a regular file") {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
	})
	t.Run("not a repository", func(t *testing.T) {
		dir := t.TempDir()
		writeDiffFiles(t, dir, map[string]string{"tenancy.toml": after})
		_, stderr, code := runIn(dir, "diff", "--base", "HEAD")
		if code != 2 || stderr == "" {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
	})
}

// TestDiffGitShallowClone does what CI does: a depth-1 checkout of the pull
// request that fetches only the tip of the base branch.
func TestDiffGitShallowClone(t *testing.T) {
	repo := newDiffGitRepo(t)
	repo.commit("base", map[string]string{"tenancy.toml": readDiffCase(t, "team-gains-gpus", "old.toml")})
	repo.git("checkout", "-q", "-b", "feature")
	repo.commit("more GPUs for training", map[string]string{"tenancy.toml": readDiffCase(t, "team-gains-gpus", "new.toml")})

	clone := t.TempDir()
	cmd := exec.Command("git", "clone", "-q", "--depth=1", "--branch", "feature", "file://"+repo.dir, clone)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	_, stderr, code := runIn(clone, "diff", "--base", "origin/main")
	if code != 2 || !strings.Contains(stderr, "git fetch --depth=1 origin main:refs/remotes/origin/main") {
		t.Errorf("before fetching the base: exit %d, stderr:\n%s", code, stderr)
	}
	fetch := exec.Command("git", "fetch", "-q", "--depth=1", "origin", "main:refs/remotes/origin/main")
	fetch.Dir = clone
	if out, err := fetch.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	stdout, stderr, code := runIn(clone, "diff", "--base", "origin/main", "--output", "markdown", "--exit-code")
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "### tenancy diff: `origin/main:tenancy.toml` → `tenancy.toml`") {
		t.Errorf("markdown heading missing:\n%s", stdout)
	}
}

// largeDiffAgreement has n teams with two namespaces each, every one guaranteed
// `each` GPUs.
func largeDiffAgreement(n int, each int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "version = 1\nname = \"gpu-pool\"\n\n[flavors.h100]\nresource = \"nvidia.com/gpu\"\ncapacity = %d\n", n*4)
	for i := range n {
		fmt.Fprintf(&b, "\n[teams.team-%03d]\nnamespaces = [\"team-%03d\", \"team-%03d-batch\"]\nguaranteed = %d\nlendable = %d\nborrow = 0\n", i, i, i, each, each)
	}
	return b.String()
}

func TestDiffMarkdownStaysUnderTheCommentLimit(t *testing.T) {
	dir := t.TempDir()
	writeDiffFiles(t, dir, map[string]string{"old.toml": largeDiffAgreement(300, 1), "new.toml": largeDiffAgreement(300, 2)})
	stdout, stderr, code := runIn(dir, "diff", "old.toml", "new.toml", "--output", "markdown")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if n := utf8.RuneCountInString(stdout); n >= diff.GitHubCommentLimit {
		t.Fatalf("markdown is %d characters, GitHub accepts fewer than %d", n, diff.GitHubCommentLimit)
	}
	if !strings.Contains(stdout, "**Output truncated**") {
		t.Errorf("a 300-team diff was not truncated, or says nothing about it; it ends with:\n%s", stdout[max(0, len(stdout)-500):])
	}
	if o, c := strings.Count(stdout, "<details>"), strings.Count(stdout, "</details>"); o != c || o == 0 {
		t.Errorf("%d <details> and %d </details>", o, c)
	}
	// The contention and approval tables keep 50 rows each, so that the
	// object diffs are not crowded out.
	for _, more := range []string{"… and 250 more teams", "… and 250 more parts"} {
		if !strings.Contains(stdout, more) {
			t.Errorf("the markdown does not say %q", more)
		}
	}
	// The text output is not cut.
	text, _, _ := runIn(dir, "diff", "old.toml", "new.toml")
	if strings.Count(text, "~ ClusterQueue team-") != 300 {
		t.Errorf("text output does not show all 300 ClusterQueues")
	}
}

func TestDiffColor(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	e := &env{stdout: f, getenv: func(string) string { return "" }}
	if colorWanted(e) {
		t.Error("colour wanted for a regular file")
	}
	e.stdout = &bytes.Buffer{}
	if colorWanted(e) {
		t.Error("colour wanted for a buffer")
	}
	// The golden text files are written to buffers: no escape sequences.
	for _, name := range []string{"team-gains-gpus", "backend-kai"} {
		if strings.Contains(readDiffCase(t, name, "stdout.txt"), "\x1b[") {
			t.Errorf("%s/stdout.txt has colour", name)
		}
	}
}

// TestDiffFleetBrokenSide: a fleet whose new side does not decode, or
// splits a guarantee into shares that do not add up, is an error at its
// line naming the side (and the cluster whose render refused it), with
// nothing on stdout, as a single cluster's is.
func TestDiffFleetBrokenSide(t *testing.T) {
	old := readDiffCase(t, "fleet-share-moves", "old.toml")
	for name, tc := range map[string]struct {
		new  string
		want []string
	}{
		"does not decode": {
			new:  strings.Replace(old, "guaranteed = 16\n", "guaranteed = \"sixteen\"\n", 1),
			want: []string{"new.toml:31:", "teams.training.guaranteed", "the new side, new.toml, is invalid"},
		},
		"shares that do not add up": {
			new:  strings.Replace(old, "clusters = { east = 16 }", "clusters = { east = 12, west = 2 }", 1),
			want: []string{"new.toml:34:", "teams.training.clusters", "the new side, new.toml (cluster hub), is invalid"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeDiffFiles(t, dir, map[string]string{"old.toml": old, "new.toml": tc.new})
			stdout, stderr, code := runIn(dir, "diff", "old.toml", "new.toml")
			if code != exitDiffTrouble || stdout != "" {
				t.Fatalf("exit %d, stdout %q; want exit 2 and no stdout", code, stdout)
			}
			for _, want := range tc.want {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
		})
	}
}

// TestDiffClusterUsage: --cluster naming no part of either side, or given
// for agreements without [clusters], is a usage error; the KAI manager is
// refused by the render, naming the workers.
func TestDiffClusterUsage(t *testing.T) {
	fleet := readDiffCase(t, "fleet-share-moves", "old.toml")
	single := readDiffCase(t, "team-gains-gpus", "old.toml")
	for name, tc := range map[string]struct {
		old, new string
		args     []string
		want     string
	}{
		"no such cluster":        {fleet, fleet, []string{"--cluster", "north"}, `--cluster "north": neither side has that cluster; the parts are hub, east, west`},
		"no fleet":               {single, single, []string{"--cluster", "east"}, `--cluster "east": neither side has [clusters]`},
		"the manager, under KAI": {fleet, fleet, []string{"--cluster", "hub", "--backend", "kai"}, "render the workers (east, west) for KAI"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeDiffFiles(t, dir, map[string]string{"old.toml": tc.old, "new.toml": tc.new})
			stdout, stderr, code := runIn(dir, append([]string{"diff", "old.toml", "new.toml"}, tc.args...)...)
			if code != exitDiffTrouble || stdout != "" || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2, no stdout, stderr saying %q", code, stdout, stderr, tc.want)
			}
		})
	}
}

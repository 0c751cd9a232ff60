package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/diff"
)

// exitDiffTrouble is diff's error status: like diff(1) and git diff
// --exit-code, 1 means "there are changes", so errors are 2.
const exitDiffTrouble = exitUsage

// gitTimeout bounds each git command; reading one blob takes milliseconds.
const gitTimeout = 30 * time.Second

func runDiff(e *env, args []string) int {
	flags := newFlagSet(e, "diff", "diff [flags] OLD.toml NEW.toml\n  tenancy diff [flags] --base REV [--head REV] [FILE]", `
Show what a change to the agreement does: first per team and flavor
(guaranteed, lendable, borrow, weight, reclaim before → after, the pool's
capacity and how much of it is guaranteed, teams that lose guaranteed GPUs,
warnings the new side adds), then every rendered object that is added,
removed or changed, with field-level changes and a unified YAML diff.

Both sides are rendered with the same --kueue-api, and with --backend when it
is given (which each side's backend key must name); without it, each side for
the backend its own backend key names first (Kueue without the key), so a
change of the key shows as the objects it replaces.

One of OLD and NEW may be -, read from stdin and named <stdin>:
  git show main:tenancy.toml | tenancy diff - tenancy.toml

An agreement with [clusters] on either side is a fleet: each part (the
manager's and each worker's) is rendered on both sides and compared, so the
output says what the change does in each cluster; --cluster NAME compares
that part alone. A side without [clusters] stands for the other's manager.

With --base, FILE (default ./tenancy.toml) is read at revision REV with
git show; the new side is FILE at --head, or in the working tree when --head
is not given. A file missing on one side means every object is added or
removed. In a shallow CI checkout, fetch the base first, e.g.
  git fetch --depth=1 origin main:refs/remotes/origin/main

--output markdown prints a pull request comment (under GitHub's 65,536
character limit; long diffs are cut with a note); --output json is for tools.
Text is coloured when stdout is a terminal, unless --no-color or NO_COLOR.

Each output names whose approval the change needs, by rule: a team whose
guaranteed, lendable or borrow changes (or that is added or removed) needs
its owners, a department's likewise, a change to a flavor or to the pool
needs the pool's owners; a part's owners are its own, else its
department's, else the pool's, as the old side says. The markdown also says
per flavor what losing one node (gpus_per_node GPUs, default 8) would break.

Exit status: 0 no changes (or changes without --exit-code), 1 changes with
--exit-code, 4 changes with --exit-code that need the approval of owners the
agreement names, 2 an error on either side (nothing is written to stdout).`)
	var bf backendFlags
	bf.register(flags)
	base := flags.String("base", "", "git revision of the old side (reads FILE with git show)")
	head := flags.String("head", "", "git revision of the new side (default: the working tree); needs --base")
	output := flags.String("output", "text", "output format: text, markdown or json")
	exitCode := flags.Bool("exit-code", false, "exit 1 when anything changes, like git diff --exit-code; 4 when the changes need owners' approval")
	noColor := flags.Bool("no-color", false, "never colour the text output")
	cluster := flags.String("cluster", "", "compare only this part of a fleet agreement (one with [clusters]): its manager's name or a worker cluster's; without it, every part")
	positional, code, ok := parseArgs(e, flags, args)
	if !ok {
		return code
	}
	usageErr := func(format string, a ...any) int {
		fmt.Fprintf(e.stderr, "tenancy diff: "+format+"\nRun 'tenancy diff --help' for usage.\n", a...)
		return exitUsage
	}
	switch *output {
	case "text", "markdown", "json":
	default:
		return usageErr("--output %q: must be text, markdown or json", *output)
	}
	opts, err := bf.options()
	if err != nil {
		return usageErr("%v", err)
	}

	var oldSide, newSide diffSide
	switch {
	case *base == "" && *head != "":
		return usageErr("--head needs --base")
	case *base == "":
		if len(positional) != 2 {
			return usageErr("expected OLD and NEW files, got %d argument(s); or use --base REV [FILE]", len(positional))
		}
		if positional[0] == stdinPath && positional[1] == stdinPath {
			// Stdin holds one stream: the second read would see nothing,
			// and an empty agreement is not what was meant.
			return usageErr("OLD and NEW are both - (stdin): at most one side can be read from stdin")
		}
		oldSide, err = fileSide("old", e, positional[0], false)
		if err == nil {
			newSide, err = fileSide("new", e, positional[1], false)
		}
	default:
		file, ok := agreementPath(e, "diff", positional)
		if !ok {
			return exitUsage
		}
		if file == stdinPath {
			// --base reads FILE at a revision with git show; stdin has none.
			return usageErr("--base reads FILE at a git revision, and - (stdin) is not a file in git; compare stdin with a file instead: tenancy diff - FILE")
		}
		oldSide, err = revisionSide("old", e, *base, file)
		if err == nil && *head != "" {
			newSide, err = revisionSide("new", e, *head, file)
		} else if err == nil {
			newSide, err = fileSide("new", e, file, true)
		}
		if err == nil && oldSide.src == nil && newSide.src == nil {
			err = fmt.Errorf("%s exists on neither side (%s, %s)", file, oldSide.label, newSide.label)
		}
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy diff: %v\n", err)
		return exitDiffTrouble
	}

	color := !*noColor && colorWanted(e)
	bothSides(oldSide.prepare, newSide.prepare)
	// A fleet agreement, on either side, is compared cluster by cluster.
	oldParts, oldErr := sideParts(oldSide)
	newParts, newErr := sideParts(newSide)
	if oldErr != nil || newErr != nil {
		unreadableSides(e, oldSide, newSide, oldParts, newParts, oldErr, newErr, opts)
		return exitDiffTrouble
	}
	if *cluster != "" {
		if oldParts == nil && newParts == nil {
			return usageErr("--cluster %q: neither side has [clusters]; compare it without --cluster", *cluster)
		}
		if names, _ := diff.FleetParts(oldParts, newParts); !slices.Contains(names, *cluster) {
			return usageErr("--cluster %q: neither side has that cluster; the parts are %s", *cluster, strings.Join(names, ", "))
		}
	}
	if oldParts != nil || newParts != nil {
		parts, ok := renderFleet(e, oldSide, newSide, oldParts, newParts, opts, *cluster)
		if !ok {
			return exitDiffTrouble
		}
		report, err := diff.CompareFleet(oldSide.label, newSide.label, parts)
		if err != nil {
			fmt.Fprintf(e.stderr, "tenancy diff: %v\n", err)
			return exitDiffTrouble
		}
		report.SetReviewsDue(parts, e.today())
		return writeDiff(e, *output, diffStatus(*exitCode, report.Changed, report.NeedsOwners()), diffFormats{
			text:     func() []byte { return diff.FleetText(report, color) },
			markdown: func() []byte { return diff.FleetMarkdown(report, 0) },
			json:     func() ([]byte, error) { return diff.FleetJSON(report) },
		})
	}

	// Both sides are rendered, side by side, before either failure is
	// reported (old first), so one run shows every problem of both.
	var oldRes, newRes *generator.Result
	var oldFailed, newFailed error
	bothSides(func() { oldRes, oldFailed = oldSide.render(opts) }, func() { newRes, newFailed = newSide.render(opts) })
	if oldFailed != nil {
		sideFailed(e, oldSide, oldFailed)
	}
	if newFailed != nil {
		sideFailed(e, newSide, newFailed)
	}
	if oldFailed != nil || newFailed != nil {
		return exitDiffTrouble
	}
	report, err := diff.Compare(diff.Side{Label: oldSide.label, Result: oldRes}, diff.Side{Label: newSide.label, Result: newRes})
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy diff: %v\n", err)
		return exitDiffTrouble
	}
	if newRes != nil {
		report.Summary.SetReviewsDue(newRes.Plan, e.today())
	}
	return writeDiff(e, *output, diffStatus(*exitCode, report.Changed, report.Summary.NeedsOwners()), diffFormats{
		text:     func() []byte { return diff.Text(report, color) },
		markdown: func() []byte { return diff.Markdown(report, 0) },
		json:     func() ([]byte, error) { return diff.JSON(report) },
	})
}

// diffFormats builds a report in each --output format.
type diffFormats struct {
	text, markdown func() []byte
	json           func() ([]byte, error)
}

// writeDiff builds the output and writes it at once: an error building it
// leaves stdout empty. changedExit says the run ends with status 1 (changes
// and --exit-code).
func writeDiff(e *env, output string, status int, formats diffFormats) int {
	var out []byte
	var err error
	switch output {
	case "text":
		out = formats.text()
	case "markdown":
		out = formats.markdown()
	default:
		out, err = formats.json()
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "tenancy diff: %v\n", err)
		return exitDiffTrouble
	}
	if _, err := e.stdout.Write(out); err != nil {
		fmt.Fprintf(e.stderr, "tenancy diff: write output: %v\n", err)
		return exitDiffTrouble
	}
	return status
}

// exitApprovals is diff --exit-code's status for changes that need the
// approval of owners the agreement names (the report's approvals), so CI
// can post a required status for them; changes that need none exit 1.
const exitApprovals = 4

// diffStatus is diff's exit status once the report is written.
func diffStatus(exitCode, changed, needsOwners bool) int {
	switch {
	case !exitCode || !changed:
		return exitOK
	case needsOwners:
		return exitApprovals
	}
	return exitFailure
}

// diffSide is one side's agreement before rendering; src is nil when the
// file does not exist there.
type diffSide struct {
	name  string // old or new
	label string // the file, or REV:file
	src   *generator.Source
	// prepared is src read once, for its parts and each rendering of it;
	// nil with src.
	prepared *generator.Prepared
}

// prepare reads the side's agreement once (generator.Prepare), so listing
// its parts and rendering each part parse it once: at 10,000 teams a
// parse costs about a third of a second.
func (s *diffSide) prepare() {
	if s.src != nil {
		s.prepared = generator.Prepare(*s.src)
	}
}

// fileSide reads a file from the working tree. A missing file is an error
// unless missingOK (the new side of --base, where it means "deleted").
func fileSide(name string, e *env, file string, missingOK bool) (diffSide, error) {
	s := diffSide{name: name, label: agreementName(file)}
	src, err := readAgreement(e, file)
	if missingOK && errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("%s side: %w", name, err)
	}
	s.src = &src
	return s, nil
}

// revisionSide reads file at a git revision. Diagnostics then name the file
// as REV:file, so a reader knows which version is broken.
func revisionSide(name string, e *env, rev, file string) (diffSide, error) {
	s := diffSide{name: name, label: rev + ":" + file}
	data, found, err := gitShow(e, rev, file)
	if err != nil {
		return s, fmt.Errorf("%s side: %w", name, err)
	}
	if found {
		// The agreement's directory at rev, for the files it includes.
		commit, full, err := gitPath(e, rev, file)
		if err != nil {
			return s, fmt.Errorf("%s side: %w", name, err)
		}
		s.src = &generator.Source{Path: s.label, Data: data, FS: &gitTree{e: e, commit: commit, dir: path.Dir(full)}}
	}
	return s, nil
}

// renderSide renders one side; on failure it prints every diagnostic and a
// line naming the side. An absent side renders to nil.
func renderSide(e *env, s diffSide, opts generator.Options) (*generator.Result, bool) {
	res, err := s.render(opts)
	if err == nil {
		return res, true
	}
	sideFailed(e, s, err)
	return nil, false
}

// render renders the side, printing nothing; an absent side renders to nil.
// The YAML is checked, not written (RenderFields: the same verdict and
// diagnostics as Render): diff compares objects by their fields and writes
// the YAML of those it shows, a few of 50,000 at 10,000 teams.
func (s diffSide) render(opts generator.Options) (*generator.Result, error) {
	if s.src == nil {
		return nil, nil
	}
	return s.prepared.RenderFields(opts)
}

// bothSides runs the two sides' work at once: each reads and renders its
// own agreement, so on two cores a diff of 10,000 teams takes about the
// time of one side.
func bothSides(old, new func()) {
	var wg sync.WaitGroup
	wg.Go(old)
	new()
	wg.Wait()
}

// sideFailed prints why a side did not render: every diagnostic and a line
// naming the side, or the error.
func sideFailed(e *env, s diffSide, err error) {
	var ae *generator.AgreementError
	if errors.As(err, &ae) {
		printDiagnostics(e, ae.Diagnostics)
		fmt.Fprintf(e.stderr, "tenancy diff: the %s side, %s, is invalid: %d error(s)\n", s.name, s.label, len(ae.Diagnostics.Errors()))
		return
	}
	fmt.Fprintf(e.stderr, "tenancy diff: %s side, %s: %v\n", s.name, s.label, err)
}

// colorWanted follows the conventions of terminal tools: colour only on a
// terminal, never with NO_COLOR (https://no-color.org) or TERM=dumb.
func colorWanted(e *env) bool {
	f, ok := e.stdout.(*os.File)
	return ok && isTerminal(f) && e.getenv("NO_COLOR") == "" && e.getenv("TERM") != "dumb"
}

// gitShow returns file's content at rev, or found=false when the revision
// exists but the file does not. git runs directly, never through a shell,
// in the command's directory; the revision cannot be mistaken for an option.
func gitShow(e *env, rev, file string) (data []byte, found bool, err error) {
	commit, full, err := gitPath(e, rev, file)
	if err != nil {
		return nil, false, err
	}
	entry, err := git(e, "ls-tree", "--full-tree", commit, "--", full)
	if err != nil {
		return nil, false, fmt.Errorf("%s at %s: %v", file, rev, err)
	}
	if len(bytes.TrimSpace(entry)) == 0 {
		return nil, false, nil
	}
	// "<mode> <type> <object>\t<path>": a regular file is a blob of mode
	// 100644 or 100755; a symbolic link (120000) would read as its target's
	// name, a submodule (commit) as nothing.
	if fields := bytes.Fields(entry); len(fields) < 2 || string(fields[1]) != "blob" || string(fields[0]) == "120000" {
		return nil, false, fmt.Errorf("%s at %s is not a regular file", file, rev)
	}
	data, err = git(e, "show", commit+":"+full)
	if err != nil {
		return nil, false, fmt.Errorf("%s at %s: %v", file, rev, err)
	}
	return data, true, nil
}

// gitPath resolves rev to its commit and file to its path from the
// repository's root.
func gitPath(e *env, rev, file string) (commit, full string, err error) {
	if rev == "" || strings.HasPrefix(rev, "-") || strings.ContainsAny(rev, "\x00\n:") {
		return "", "", fmt.Errorf("revision %q: not a git revision", rev)
	}
	out, err := git(e, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			// --quiet: git said nothing, the revision is just not there.
			branch := "main"
			if b, ok := strings.CutPrefix(rev, "origin/"); ok {
				branch = b
			}
			return "", "", fmt.Errorf("revision %s not found (in a shallow checkout, fetch it first, e.g. git fetch --depth=1 origin %s:refs/remotes/origin/%s)", rev, branch, branch)
		}
		return "", "", fmt.Errorf("revision %s: %v", rev, err)
	}
	// The file's path from the repository's root: git show REV:./file would
	// do, but ls-tree needs it to tell "missing" from other errors without
	// parsing git's (translated) messages.
	prefix, err := git(e, "rev-parse", "--show-prefix")
	if err != nil {
		return "", "", fmt.Errorf("%s: --base needs a git work tree: %v", e.dir, err)
	}
	rel := file
	if filepath.IsAbs(rel) {
		if rel, err = filepath.Rel(e.dir, file); err != nil {
			return "", "", err
		}
	}
	full = path.Clean(string(bytes.TrimSpace(prefix)) + filepath.ToSlash(rel))
	if full == ".." || strings.HasPrefix(full, "../") || path.IsAbs(full) {
		return "", "", fmt.Errorf("%s is outside the git repository", file)
	}
	return string(bytes.TrimSpace(out)), full, nil
}

// git runs one git command in e.dir and returns its stdout, refusing more
// than generator.MaxAgreementSize of it.
func git(e *env, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"--no-pager"}, args...)...)
	cmd.Dir = e.dir
	var stdout cappedBuffer
	var stderr bytes.Buffer
	stdout.limit = generator.MaxAgreementSize
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if stdout.over {
			return nil, generator.ErrTooLarge
		}
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return nil, errors.New(msg)
		}
		return nil, err
	}
	return stdout.Bytes(), nil
}

// cappedBuffer fails writes past its limit, which stops the command.
type cappedBuffer struct {
	bytes.Buffer
	limit int
	over  bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.limit {
		b.over = true
		return 0, generator.ErrTooLarge
	}
	return b.Buffer.Write(p)
}

package main

import (
	"bytes"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// update rewrites the golden files under testdata/ instead of comparing.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// runIn runs `tenancy args...` in-process with dir as working directory and
// a pipe, not a person, on stdin.
func runIn(dir string, args ...string) (stdout, stderr string, code int) {
	return runWithStdin(dir, strings.NewReader(""), args...)
}

// runWithStdin runs `tenancy args...` in-process in dir with stdin on stdin,
// as in `git show main:tenancy.toml | tenancy check -`.
func runWithStdin(dir string, stdin io.Reader, args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	e := &env{
		stdin:   stdin,
		stdout:  &out,
		stderr:  &errb,
		getenv:  func(string) string { return "" },
		environ: func() []string { return nil },
		dir:     dir,
	}
	code = run(e, args)
	return out.String(), errb.String(), code
}

// outcome is what one run of the command gave: its exit status and output.
type outcome struct {
	code           int
	stdout, stderr string
}

// wantRun reports how got differs from want, each stream as a diff.
func wantRun(t *testing.T, got, want outcome) {
	t.Helper()
	if got.code != want.code {
		t.Errorf("exit %d, want %d", got.code, want.code)
	}
	if diff := cmp.Diff(want.stdout, got.stdout); diff != "" {
		t.Errorf("stdout (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(want.stderr, got.stderr); diff != "" {
		t.Errorf("stderr (-want,+got):\n%s", diff)
	}
}

package main

import (
	"bytes"
	"flag"
	"io"
	"strings"
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

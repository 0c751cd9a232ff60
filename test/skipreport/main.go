// Skipreport runs `go test -json ...` and prints what plain `go test` would
// (a line per package, the output of failing tests, build errors), then one
// line per skipped test with its reason, so a skip is visible in make test's
// output. The exit code is the command's.
//
//	skipreport [-record FILE] go test -json -count=1 ./...
//	skipreport -summary FILE
//
// -record appends the skip lines to FILE; -summary prints the lines of FILE
// (every run of make test's targets) as the final summary of make test.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

func main() {
	record := flag.String("record", "", "append the skip lines to this file")
	summary := flag.String("summary", "", "print the skip lines recorded in this file and exit")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: skipreport [-record FILE] go test -json ARGS...\n       skipreport -summary FILE")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *summary != "" {
		if err := printSummary(os.Stdout, *summary); err != nil {
			fmt.Fprintln(os.Stderr, "skipreport:", err)
			os.Exit(1)
		}
		return
	}
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	os.Exit(run(flag.Args(), *record))
}

// run runs the command, filters its JSON stream and returns its exit code.
func run(args []string, record string) int {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stderr = os.Stdin, os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "skipreport:", err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "skipreport:", err)
		return 1
	}
	skips := filter(out, os.Stdout)
	code := 0
	if err := cmd.Wait(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() < 0 { // not run, or killed by a signal
			fmt.Fprintln(os.Stderr, "skipreport:", err)
			code = 1
		} else {
			code = exit.ExitCode()
		}
	}
	for _, s := range skips {
		fmt.Println(s)
	}
	if record != "" && len(skips) > 0 {
		if err := appendLines(record, skips); err != nil {
			fmt.Fprintln(os.Stderr, "skipreport:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string // build-output and build-fail events
}

// filter copies the stream to w the way plain go test prints it: package
// lines and build errors at once, a test's output only when the test fails
// (or its package fails without saying which test did, as on a panic or a
// timeout). Lines that are not JSON are copied as they are. It returns the
// skip lines, "skipped: PACKAGE TEST (REASON)", in the order the tests ended.
func filter(r io.Reader, w io.Writer) []string {
	type key struct{ pkg, test string }
	held := map[key][]string{}  // output of running tests, by top-level test
	order := map[string][]key{} // held tests of each package, in start order
	reason := map[key]string{}  // the last message a test logged
	var skips []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		if e.Action == "build-output" {
			io.WriteString(w, e.Output)
			continue
		}
		if e.Test == "" {
			switch e.Action {
			case "output":
				if e.Output != "PASS\n" {
					io.WriteString(w, e.Output)
				}
			case "fail": // flush what no test's failure accounted for
				for _, k := range order[e.Package] {
					for _, l := range held[k] {
						io.WriteString(w, l)
					}
					delete(held, k)
				}
				delete(order, e.Package)
			}
			continue
		}
		top := key{e.Package, strings.SplitN(e.Test, "/", 2)[0]}
		this := key{e.Package, e.Test}
		switch e.Action {
		case "run":
			if e.Test == top.test {
				held[top] = nil
				order[e.Package] = append(order[e.Package], top)
			}
		case "output":
			held[top] = append(held[top], e.Output)
			if m := message(e.Output); m != "" {
				reason[this] = m
			}
		case "skip":
			why := reason[this]
			if why == "" {
				why = "no reason given"
			}
			skips = append(skips, fmt.Sprintf("skipped: %s %s (%s)", e.Package, e.Test, why))
		}
		if e.Test == top.test && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip") {
			if e.Action == "fail" {
				for _, l := range held[top] {
					io.WriteString(w, l)
				}
			}
			delete(held, top)
			ks := order[e.Package]
			for i, k := range ks {
				if k == top {
					order[e.Package] = append(ks[:i:i], ks[i+1:]...)
					break
				}
			}
		}
		if e.Action == "pass" || e.Action == "fail" || e.Action == "skip" {
			delete(reason, this)
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(w, "skipreport: reading go test's output:", err)
	}
	// A stream that ends inside a test (go test killed): show what it said.
	for _, ks := range order {
		for _, k := range ks {
			for _, l := range held[k] {
				io.WriteString(w, l)
			}
		}
	}
	return skips
}

// message returns what a test logged on this output line, "file_test.go:12:
// text", or "" for the lines go test itself writes (=== RUN, --- SKIP, ...).
// A message's continuation lines (indented further) are not messages.
func message(out string) string {
	s := strings.TrimRight(out, "\n")
	trimmed := strings.TrimLeft(s, " ")
	if strings.HasPrefix(trimmed, "=== ") || strings.HasPrefix(trimmed, "--- ") {
		return ""
	}
	file, rest, ok := strings.Cut(trimmed, ": ")
	if !ok || !strings.Contains(file, ".go:") {
		return ""
	}
	return file + ": " + rest
}

func appendLines(path string, lines []string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	for _, l := range lines {
		fmt.Fprintln(f, l)
	}
	return f.Close()
}

func printSummary(w io.Writer, path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		fmt.Fprintln(w, "make test: no test skipped")
		return nil
	}
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	fmt.Fprintf(w, "make test: %d skipped:\n", len(lines))
	for _, l := range lines {
		fmt.Fprintln(w, "  "+l)
	}
	return nil
}

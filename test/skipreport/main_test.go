package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testdata/stream.json is `go test -json` of testdata/demo_test.go.txt (a
// passing, a failing and three skipped tests), times zeroed.
func TestFilter(t *testing.T) {
	stream, err := os.ReadFile(filepath.Join("testdata", "stream.json"))
	if err != nil {
		t.Fatal(err)
	}
	in := "not JSON, printed as it is\n" + string(stream)
	var out bytes.Buffer
	skips := filter(strings.NewReader(in), &out)

	wantSkips := []string{
		"skipped: example.com/demo TestSkipsWithReason (demo_test.go:9: TAPLO is not set: install it with make taplo)",
		"skipped: example.com/demo TestSkipsWithoutReason (no reason given)",
		"skipped: example.com/demo TestSubtests/skips (demo_test.go:21: no bwrap here)",
	}
	if diff := cmp.Diff(wantSkips, skips); diff != "" {
		t.Errorf("skips (-want,+got):\n%s", diff)
	}
	wantOut := `not JSON, printed as it is
=== RUN   TestFails
    demo_test.go:15: context of the failure
    demo_test.go:16: want 1, got 2
--- FAIL: TestFails (0.00s)
FAIL
FAIL	example.com/demo	0.01s
`
	if diff := cmp.Diff(wantOut, out.String()); diff != "" {
		t.Errorf("output (-want,+got):\n%s", diff)
	}
}

// A package that fails without a failing test (a panic, a timeout, a
// TestMain that exits) shows the output of the tests still running.
func TestFilterShowsOutputOfAnUnfinishedTest(t *testing.T) {
	in := `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestHangs"}
{"Action":"output","Package":"p","Test":"TestHangs","Output":"=== RUN   TestHangs\n"}
{"Action":"output","Package":"p","Test":"TestHangs","Output":"panic: test timed out after 1s\n"}
{"Action":"output","Package":"p","Output":"FAIL\tp\t1.00s\n"}
{"Action":"fail","Package":"p","Elapsed":1}
`
	var out bytes.Buffer
	if skips := filter(strings.NewReader(in), &out); len(skips) != 0 {
		t.Errorf("skips: %q", skips)
	}
	want := "FAIL\tp\t1.00s\n=== RUN   TestHangs\npanic: test timed out after 1s\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("output (-want,+got):\n%s", diff)
	}
}

func TestRunKeepsTheExitCode(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"true"}, 0},
		{[]string{"false"}, 1},
		{[]string{"sh", "-c", "exit 3"}, 3},
		{[]string{"/nonexistent/command"}, 1},
	} {
		if got := run(tc.args, ""); got != tc.want {
			t.Errorf("run(%q) = %d, want %d", tc.args, got, tc.want)
		}
	}
}

func TestSummary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "skips")
	var out bytes.Buffer
	if err := printSummary(&out, path); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "make test: no test skipped\n"; got != want {
		t.Errorf("without skips: %q, want %q", got, want)
	}
	if err := appendLines(path, []string{"skipped: a TestA (why)"}); err != nil {
		t.Fatal(err)
	}
	if err := appendLines(path, []string{"skipped: b TestB (why not)"}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := printSummary(&out, path); err != nil {
		t.Fatal(err)
	}
	want := "make test: 2 skipped:\n  skipped: a TestA (why)\n  skipped: b TestB (why not)\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("summary (-want,+got):\n%s", diff)
	}
}

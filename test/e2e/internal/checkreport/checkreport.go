// Package checkreport is what the end-to-end suites share around their
// checks: TestMain's skeleton (a temporary directory kept on failure, set-up,
// stop on interrupt, the closing report), and each check's outcome and time,
// with the components' logs when it fails. The control-plane suite and the
// Argo CD loop use it.
package checkreport

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
)

// Record is one check's outcome.
type Record struct {
	Name     string
	Result   string // PASS, FAIL or SKIP
	Duration time.Duration
}

// Report collects records; it is safe for concurrent use.
type Report struct {
	mu      sync.Mutex
	records []Record
}

// Add records one outcome.
func (r *Report) Add(name, result string, d time.Duration) {
	r.mu.Lock()
	r.records = append(r.records, Record{name, result, d})
	r.mu.Unlock()
}

// Records returns the outcomes so far, in the order they were added, and
// how many passed, failed and were skipped.
func (r *Report) Records() (records []Record, counts map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	counts = map[string]int{}
	for _, rec := range r.records {
		counts[rec.Result]++
	}
	return append([]Record(nil), r.records...), counts
}

// SkipIf skips a check of a suite that did not run, with why (set when
// it did not: the reason and how to run it), and records it, so that the
// summary says the suite did not run.
func (r *Report) SkipIf(t *testing.T, why string) {
	t.Helper()
	if why != "" {
		r.Add(t.Name(), "SKIP", 0)
		t.Skip(why)
	}
}

// Begin starts a check: when it ends, its outcome and time are recorded
// and, if it failed, the components that exited and the last logTail bytes
// of each component's log are logged. A set-up error fails the check at
// once, so it is not hidden behind a skip.
func (r *Report) Begin(t *testing.T, cp *controlplane.ControlPlane, setupErr error, logTail int) {
	t.Helper()
	start := time.Now()
	t.Cleanup(func() {
		result := "PASS"
		switch {
		case t.Failed():
			result = "FAIL"
		case t.Skipped():
			result = "SKIP"
		}
		if t.Failed() && cp != nil {
			if gone := cp.Exited(); len(gone) > 0 {
				t.Logf("components that exited: %v", gone)
			}
			t.Logf("end of the component logs:%s", cp.LogTails(logTail))
		}
		r.Add(t.Name(), result, time.Since(start))
	})
	if setupErr != nil {
		t.Fatalf("set-up failed: %v", setupErr)
	}
}

// Suite is what a suite's TestMain runs around its checks.
type Suite struct {
	// Name prefixes messages and names the temporary directory.
	Name string
	// Keep keeps the temporary directory (state and logs) after a passing
	// run; a failing run always keeps it.
	Keep bool
	// SetUp starts what the checks need, in dir. stop, when not nil, stops
	// it: after the checks, or at once on an interrupt. A set-up error does
	// not stop the run: every check then fails with it (Report.Begin).
	SetUp func(ctx context.Context, dir string) (stop func(), err error)
	// Report prints the closing report; total includes the set-up.
	Report func(total time.Duration)
}

// Main runs a suite's checks and returns the exit code for os.Exit.
func Main(m *testing.M, s Suite) int {
	began := time.Now()
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()

	dir, err := os.MkdirTemp("", "tenancy-"+strings.ReplaceAll(s.Name, "/", "-")+"-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", s.Name, err)
		return 1
	}
	code := 1
	defer func() {
		if code == 0 && !s.Keep {
			os.RemoveAll(dir)
		} else {
			fmt.Fprintf(os.Stderr, "%s: state and component logs kept in %s\n", s.Name, dir)
		}
	}()

	stop, err := s.SetUp(ctx, dir)
	if stop != nil {
		var once sync.Once
		stopOnce := func() { once.Do(stop) }
		// Stop runs even when a check fails or panics inside m.Run (the
		// testing package recovers panics in tests and still returns);
		// Pdeathsig covers the test binary being killed.
		defer stopOnce()
		// A signal stops everything at once instead of waiting for the
		// running check to notice.
		go func() {
			<-ctx.Done()
			stopOnce()
		}()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: set-up failed: %v\n", s.Name, err)
	}
	code = m.Run()
	s.Report(time.Since(began))
	return code
}

// Print writes the closing report: the title, the lines a suite adds
// about its set-up, each check's outcome and time, the whole run's time
// and the counts, prefixed with the suite's name.
func (r *Report) Print(w io.Writer, suite, title string, setUp []string, total time.Duration) {
	records, counts := r.Records()
	fmt.Fprintf(w, "\n%s\n", title)
	for _, l := range setUp {
		fmt.Fprintf(w, "  %s\n", l)
	}
	for _, rec := range records {
		fmt.Fprintf(w, "  %-4s  %-56s %8s\n", rec.Result, rec.Name, rec.Duration.Round(10*time.Millisecond))
	}
	fmt.Fprintf(w, "  whole run including start-up: %s\n", total.Round(time.Second))
	fmt.Fprintf(w, "%s: %d passed, %d failed, %d skipped\n", suite, counts["PASS"], counts["FAIL"], counts["SKIP"])
}

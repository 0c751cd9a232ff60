// Package checkreport keeps the outcome and time of each end-to-end check,
// for the report a suite prints when it ends, and shows the components' logs
// when a check fails. The control-plane suite and the Argo CD loop share it.
package checkreport

import (
	"sync"
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

//go:build !unix

package generator_test

import "time"

// cpuTimeEpoch is where the fallback counts from.
var cpuTimeEpoch = time.Now()

// cpuTime falls back to wall-clock time where getrusage is not available.
func cpuTime() time.Duration { return time.Since(cpuTimeEpoch) }

//go:build unix

package generator_test

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user+system) the test process has used, all
// threads together, so garbage collection counts. Unlike wall-clock time it
// does not grow when other processes share the machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return time.Since(start)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// start is the fallback's epoch.
var start = time.Now()

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
		return time.Since(cpuTimeEpoch)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuTimeEpoch is where the fallback counts from.
var cpuTimeEpoch = time.Now()

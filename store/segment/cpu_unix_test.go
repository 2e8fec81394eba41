//go:build unix

package segment

import (
	"syscall"
	"time"
)

// processCPU is the process's user + system CPU time (benchmarks).
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

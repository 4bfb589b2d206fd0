//go:build unix

package scrape

import (
	"syscall"
	"testing"
	"time"
)

// selfCPU is the CPU time this process has used, user and system.
func selfCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

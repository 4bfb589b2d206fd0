//go:build unix

package testutil

import (
	"syscall"
	"time"
)

// selfAndChildrenCPU is the CPU time of this process and of its children
// that ended and were waited for (getrusage).
func selfAndChildrenCPU() time.Duration {
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	sum := func(r syscall.Rusage) int64 { return r.Utime.Nano() + r.Stime.Nano() }
	return time.Duration(sum(self) + sum(children))
}

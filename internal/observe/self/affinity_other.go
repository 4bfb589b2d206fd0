//go:build !linux

package self

import "runtime"

// affinity is the CPUs Go found at start: outside Linux there is no
// sched_getaffinity.
func affinity() (int, error) { return runtime.NumCPU(), nil }

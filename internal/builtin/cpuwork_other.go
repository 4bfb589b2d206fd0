//go:build !linux

package builtin

import "time"

// threadCPU cannot be read outside Linux: BurnCPU burns wall time.
func threadCPU() (time.Duration, bool) { return 0, false }

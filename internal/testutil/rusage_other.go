//go:build !unix

package testutil

import "time"

// selfAndChildrenCPU is unknown outside Unix (no getrusage): 0.
func selfAndChildrenCPU() time.Duration { return 0 }

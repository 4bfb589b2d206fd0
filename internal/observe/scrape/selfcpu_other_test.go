//go:build !unix

package scrape

import (
	"testing"
	"time"
)

// selfCPU: no getrusage here (perflab runs on Linux only).
func selfCPU(t *testing.T) time.Duration {
	t.Skip("getrusage is a unix call")
	return 0
}

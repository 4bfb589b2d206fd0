package analysis

import (
	"fmt"

	"github.com/perflab/perflab/internal/units"
)

// JudgeLink marks s link-bound when its operations moved at least bound
// bytes per second (sent plus received, over the window): the network
// between the generator and the system under test, not the system, may
// have set the throughput. link names the link as configured ("10Gbps"),
// for the warning. A bound of 0 (no link configured) judges nothing.
func JudgeLink(s *Summary, bound float64, link string) {
	// equivalent mutant: Seconds < 0; a summary of no seconds has rates of
	// 0 (Summarize), which bind no link
	if bound <= 0 || s == nil || s.Seconds <= 0 {
		return
	}
	var moved float64
	for _, op := range s.Ops {
		moved += op.BytesSentPS + op.BytesRecvPS
	}
	if moved < bound {
		return
	}
	s.LinkBound = true
	s.Warnings = append(s.Warnings, fmt.Sprintf(
		"link-bound: %s/s moved, at least %s/s of the %s link; the network, not the system under test, may have been the limit",
		units.FormatBytes(moved), units.FormatBytes(bound), link))
}

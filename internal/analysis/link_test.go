package analysis

import (
	"strings"
	"testing"
)

func TestJudgeLink(t *testing.T) {
	mk := func(sent, recv float64) *Summary {
		return &Summary{Seconds: 10, Ops: []Op{{Name: "GET", BytesRecvPS: recv}, {Name: "PUT", BytesSentPS: sent}}}
	}
	const bound = 0.9 * 125e6 // 90 % of 1 Gbps in bytes/s
	for _, c := range []struct {
		name      string
		s         *Summary
		bound     float64
		linkBound bool
	}{
		{"GET and PUT together reach the bound", mk(40e6, 80e6), bound, true},
		{"exactly at the bound", mk(50e6, 62.5e6), bound, true}, // "at least" the bound
		{"below the bound", mk(10e6, 90e6), bound, false},
		{"no link configured", mk(40e6, 80e6), 0, false},
	} {
		JudgeLink(c.s, c.bound, "1Gbps")
		if c.s.LinkBound != c.linkBound {
			t.Errorf("%s: LinkBound = %v, want %v", c.name, c.s.LinkBound, c.linkBound)
		}
		warned := len(c.s.Warnings) == 1 && strings.Contains(c.s.Warnings[0], "link-bound") && strings.Contains(c.s.Warnings[0], "1Gbps")
		if warned != c.linkBound {
			t.Errorf("%s: warnings %q", c.name, c.s.Warnings)
		}
	}
}

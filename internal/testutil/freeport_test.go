package testutil

import (
	"net"
	"strconv"
	"testing"
)

// TestFreePortGivesEachPortOnce: the ports lie below the ephemeral range,
// each can be bound, and no two calls of a process give the same one.
func TestFreePortGivesEachPortOnce(t *testing.T) {
	seen := map[int]bool{}
	for range 300 {
		p := FreePort(t)
		if p < freePortLow || p > freePortHigh || seen[p] {
			t.Fatalf("port %d: outside %d–%d, or given twice", p, freePortLow, freePortHigh)
		}
		seen[p] = true
	}
	held, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(FreePort(t)))
	if err != nil {
		t.Fatalf("cannot bind the port FreePort gave: %v", err)
	}
	_ = held.Close()
}

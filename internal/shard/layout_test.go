package shard

import (
	"context"
	"slices"
	"testing"
	"time"
)

func TestPhasesAreListedInOrder(t *testing.T) {
	s, err := NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := Run{Store: s, ID: "run"}
	ctx := context.Background()
	for _, k := range []int{0, 2, 10, 1} {
		if err := r.Announce(ctx, Announcement{Phase: k, StartAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.StopPhase(ctx, 3, "crashed"); err != nil { // a stop alone is no announcement
		t.Fatal(err)
	}
	got, err := r.Phases(ctx)
	if err != nil || !slices.Equal(got, []int{0, 1, 2, 10}) {
		t.Errorf("Phases() = %v, %v", got, err)
	}
	if _, found, err := r.PhaseStopped(ctx, 3); !found || err != nil {
		t.Errorf("phase 3 stopped: %v, %v", found, err)
	}
	if _, found, _ := r.PhaseStopped(ctx, 2); found {
		t.Error("phase 2 reads as stopped")
	}
}

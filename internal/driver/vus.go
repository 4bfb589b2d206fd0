package driver

import (
	"sync"
	"sync/atomic"
)

// VUs maps VU numbers to a driver's per-VU state, made by New the first
// time a VU asks. A lookup is one atomic load; a VU seen for the first time
// takes the lock and may grow the table. A negative VU (a caller outside
// the engine) gets a throwaway state from New that is not kept.
type VUs[T any] struct {
	New func(vu int) *T

	mu    sync.Mutex
	slots atomic.Pointer[[]atomic.Pointer[T]]
}

// Get returns vu's state.
func (t *VUs[T]) Get(vu int) *T {
	if vu < 0 {
		return t.New(vu)
	}
	if p := t.slots.Load(); p != nil && vu < len(*p) {
		if s := (*p)[vu].Load(); s != nil {
			return s
		}
	}
	return t.add(vu)
}

func (t *VUs[T]) add(vu int) *T {
	t.mu.Lock()
	defer t.mu.Unlock()
	var cur []atomic.Pointer[T]
	if p := t.slots.Load(); p != nil {
		cur = *p
	}
	if vu >= len(cur) {
		grown := make([]atomic.Pointer[T], max(vu+1, 2*len(cur), 16))
		for i := range cur {
			grown[i].Store(cur[i].Load())
		}
		cur = grown
		t.slots.Store(&cur)
	}
	if s := cur[vu].Load(); s != nil {
		return s
	}
	s := t.New(vu)
	cur[vu].Store(s)
	return s
}

// Each calls f for every VU's state made so far.
func (t *VUs[T]) Each(f func(*T)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p := t.slots.Load(); p != nil {
		for i := range *p {
			if s := (*p)[i].Load(); s != nil {
				f(s)
			}
		}
	}
}

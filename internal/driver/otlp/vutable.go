package otlpdriver

import (
	"sync"
	"sync/atomic"
)

// vuTable maps VU numbers to their state, made on first use. Lookups are
// one atomic load; a VU seen for the first time takes the lock and may
// grow the table. A negative VU gets a throwaway state.
type vuTable[T any] struct {
	make  func(vu int) *T
	mu    sync.Mutex
	slots atomic.Pointer[[]atomic.Pointer[T]]
}

func (t *vuTable[T]) get(vu int) *T {
	if vu < 0 {
		return t.make(vu)
	}
	if p := t.slots.Load(); p != nil && vu < len(*p) {
		if s := (*p)[vu].Load(); s != nil {
			return s
		}
	}
	return t.add(vu)
}

func (t *vuTable[T]) add(vu int) *T {
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
	s := t.make(vu)
	cur[vu].Store(s)
	return s
}

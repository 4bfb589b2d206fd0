package driver

import (
	"sync"
	"testing"
)

func TestVUsMakesEachStateOnceAndKeepsIt(t *testing.T) {
	var made sync.Map
	tab := VUs[int]{New: func(vu int) *int {
		if _, dup := made.LoadOrStore(vu, true); dup && vu >= 0 {
			t.Errorf("state of VU %d made twice", vu)
		}
		v := vu
		return &v
	}}
	var wg sync.WaitGroup
	got := make([][]*int, 8)
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for vu := 0; vu < 100; vu++ { // grows the table several times
				got[g] = append(got[g], tab.Get(vu))
			}
		}()
	}
	wg.Wait()
	for vu := 0; vu < 100; vu++ {
		for g := range got {
			if got[g][vu] != got[0][vu] || *got[g][vu] != vu {
				t.Fatalf("VU %d: goroutine %d got another state", vu, g)
			}
		}
	}
	n := 0
	tab.Each(func(*int) { n++ })
	if n != 100 {
		t.Errorf("Each saw %d states, want 100", n)
	}
	if a, b := tab.Get(-1), tab.Get(-1); a == b {
		t.Error("a negative VU's state was kept")
	}
}

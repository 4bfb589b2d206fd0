package target

import (
	"slices"
	"strings"
	"testing"
)

func TestLineSplitter(t *testing.T) {
	r := newRing(4)
	s := &lineSplitter{ring: r}
	s.write([]byte("one\r\ntw"))
	s.write([]byte("o\n\nthree"))
	if got, want := r.last(10), []string{"one", "two", ""}; !slices.Equal(got, want) {
		t.Fatalf("last = %q, want %q", got, want)
	}
	s.flush()
	s.write([]byte(strings.Repeat("x", maxLineBytes+10) + "\nfive\n"))
	got := r.last(10)
	if want := []string{"", "three", strings.Repeat("x", maxLineBytes) + " …", "five"}; !slices.Equal(got, want) {
		t.Fatalf("last after wrap = %q, want %q", got, want)
	}
	if got := r.last(2); !slices.Equal(got, []string{got[0], "five"}) || len(got) != 2 {
		t.Errorf("last(2) = %q", got)
	}
	if r.last(0) != nil || newRing(3).last(5) != nil {
		t.Error("last of nothing is not nil")
	}
}

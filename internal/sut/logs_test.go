package sut

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLineSplitter(t *testing.T) {
	t.Parallel()
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

// TestStreamScrubsWholeLines: with Scrub set, a secret split across the
// component's writes is scrubbed in the log file and the tail, the last
// unfinished line too.
func TestStreamScrubsWholeLines(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "c.stdout.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	scrub := strings.NewReplacer("token-secret", "${TOKEN}").Replace
	st := &stream{r: r, file: f, scrub: scrub, done: make(chan struct{})}
	ring := newRing(8)
	split := &lineSplitter{ring: ring, scrub: scrub}
	for _, part := range []string{"a tok", "en-secret b\nc token-", "secret\nd token-sec", "ret"} {
		if err := st.write([]byte(part)); err != nil { // as copy does, a read at a time
			t.Fatal(err)
		}
		split.write([]byte(part))
	}
	w.Close()
	st.copy(split) // reads the end of the output: writes what is held back
	b, err := os.ReadFile(path)
	if want := "a ${TOKEN} b\nc ${TOKEN}\nd ${TOKEN}"; err != nil || string(b) != want || st.err != nil {
		t.Errorf("log = %q, %v, %v; want %q", b, err, st.err, want)
	}
	if got, want := ring.last(8), []string{"a ${TOKEN} b", "c ${TOKEN}", "d ${TOKEN}"}; !slices.Equal(got, want) {
		t.Errorf("tail = %q, want %q", got, want)
	}
}

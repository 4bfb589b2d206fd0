package openaidriver

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/builtin"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/testutil"
)

// A request meets goodput when every bound given holds of its own
// figures; one of fewer than two tokens has no ITL or TPOT to exceed.
func TestGoodputMet(t *testing.T) {
	ms := time.Millisecond
	f := figures{ttft: 100 * ms, itl: 20 * ms, tpot: 21 * ms, hasTTFT: true, hasSteps: true}
	for _, tc := range []struct {
		g       Goodput
		f       figures
		latency time.Duration
		want    bool
	}{
		{Goodput{TTFT: 100 * ms}, f, time.Second, true},
		{Goodput{TTFT: 99 * ms}, f, time.Second, false},
		{Goodput{ITL: 20 * ms, TPOT: 21 * ms}, f, time.Second, true},
		{Goodput{ITL: 19 * ms}, f, time.Second, false},
		{Goodput{TPOT: 20 * ms}, f, time.Second, false},
		{Goodput{Latency: time.Second}, f, time.Second, true},
		{Goodput{Latency: time.Second}, f, time.Second + 1, false},
		{Goodput{TTFT: time.Second}, figures{}, 0, false},
		{Goodput{ITL: ms, TPOT: ms}, figures{ttft: ms, hasTTFT: true}, ms, true},
		{Goodput{TTFT: 200 * ms, ITL: 50 * ms, TPOT: 40 * ms, Latency: 5 * time.Second}, f, time.Second, true},
	} {
		if got := tc.g.met(tc.f, tc.latency); got != tc.want {
			t.Errorf("%s, %+v, latency %v: met %v, want %v", &tc.g, tc.f, tc.latency, got, tc.want)
		}
	}
}

// Against the mock (TTFT 30 ms, 21 tokens 5 ms apart, 130 ms in all)
// bounds above the figures pass every stream and one under any figure none
// (a first token 60 ms late would be needed to bring the mean gap under
// 2 ms); every request
// is judged, failed ones too, and the time to second token is the first
// gap. Which streams met goodput, and the gap, are timing figures, judged
// against what the machine gave (testutil.Measure): beside four CPU hogs
// the tokens came late and bunched, the median gap 4.2 ms.
func TestGoodputAndTTSTAgainstTheMock(t *testing.T) {
	testutil.Alone(t)
	srv, _ := startMock(t, builtin.LLMConfig{Latency: 30 * time.Millisecond, Tokens: 21, TokensPerSecond: 200})
	ms := time.Millisecond
	var ttst []time.Duration
	var missed []string
	machine := testutil.Measure(t)
	for _, tc := range []struct {
		g    Goodput
		good bool
	}{
		{Goodput{TTFT: 60 * ms, ITL: 15 * ms, TPOT: 15 * ms, Latency: 250 * ms}, true},
		{Goodput{TTFT: 25 * ms}, false},
		{Goodput{ITL: 2 * ms}, false},
		{Goodput{TPOT: 2 * ms}, false},
		{Goodput{Latency: 120 * ms}, false},
	} {
		d := newDriver(t, Config{URL: srv.URL, Model: "m", Stream: true, Prompts: []string{"x"}, Goodput: &tc.g})
		for range 3 {
			r := do(d)
			for _, m := range r.Measures {
				if m.Measure == stats.TTST {
					ttst = append(ttst, m.D)
				}
			}
			want := int64(0)
			if tc.good {
				want = 1
			}
			if r.Class != stats.OK || r.Counters[stats.GoodputJudged] != 1 {
				t.Errorf("%s: %v %s, counters %v, want judged", &tc.g, r.Class, r.Message, r.Counters)
			} else if r.Counters[stats.Goodput] != want {
				missed = append(missed, fmt.Sprintf("%s: counters %v, want good %v", &tc.g, r.Counters, tc.good))
			}
		}
		if s := d.Stats(); s.Judged != 3 {
			t.Errorf("%s: stats %+v", &tc.g, s)
		} else if s.Good != int64(3*btoi(tc.good)) {
			missed = append(missed, fmt.Sprintf("%s: stats %+v, want %d good", &tc.g, s, 3*btoi(tc.good)))
		}
	}
	slices.Sort(ttst)
	if len(ttst) != 15 {
		t.Errorf("TTST %v: want one a stream", ttst)
	} else if ttst[7] < 4500*time.Microsecond || ttst[7] > 5500*time.Microsecond {
		missed = append(missed, fmt.Sprintf("TTST %v: want the median 5ms within 10 %%", ttst))
	}
	d := newDriver(t, Config{URL: "http://127.0.0.1:1", Model: "m", Stream: true, Prompts: []string{"x"}, Goodput: &Goodput{TTFT: time.Hour}})
	if r := do(d); r.Class == stats.OK || r.Counters[stats.GoodputJudged] != 1 || r.Counters[stats.Goodput] != 0 {
		t.Errorf("refused connection: %v, counters %v: want judged and not good", r.Class, r.Counters)
	}
	var fact string
	for _, f := range d.Facts() {
		if f.Name == "goodput" {
			fact = f.Value
		}
	}
	if fact != "0 of 1 requests met ttft ≤ 1h0m0s (whole run)" {
		t.Errorf("goodput fact %q", fact)
	}
	machine.Check(t, len(missed) == 0, testutil.Need{}, "%s", strings.Join(missed, "\n"))
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

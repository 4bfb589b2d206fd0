package run

import (
	"errors"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/stats"
	"github.com/perflab/perflab/internal/view"
)

// runWithChecks is a run of one workload, p/write, whose driver made
// checks, and that sent requests of which failed failed.
func runWithChecks(requests, failed int64, checks ...driver.Check) *view.Run {
	s := &analysis.Summary{Workload: analysis.Workload{Name: "p/write", Target: "http://127.0.0.1:1/"},
		RequestsTotal: requests, ErrorsTotal: failed}
	return &view.Run{Workloads: []*analysis.Summary{s}, Cells: []*view.Cell{{Phases: []*view.Phase{{Profile: "p",
		Workloads: []*analysis.Summary{s}, Drivers: map[string]*view.DriverNotes{"p/write": {Checks: checks}}}}}}}
}

// verdict is a status and error as the run's end reports them.
type verdict struct {
	state string
	code  int
	msg   string // part of the error's message; "" when there is no error
	hint  string // part of the error's hint
}

func checkVerdict(t *testing.T, name string, status results.Status, err error, want verdict) {
	t.Helper()
	var re *Failure
	if status.State != want.state || status.ExitCode != want.code || (err == nil) != (want.msg == "") {
		t.Errorf("%s: %s, exit %d, error %v; want %s, exit %d, error %q", name, status.State, status.ExitCode, err, want.state, want.code, want.msg)
		return
	}
	if err == nil {
		return
	}
	if !errors.As(err, &re) || re.Code != want.code || !strings.Contains(err.Error(), want.msg) || !strings.Contains(re.Hint, want.hint) {
		t.Errorf("%s: error %v (hint %q), want %q (hint %q)", name, err, re.Hint, want.msg, want.hint)
	}
}

// TestJudgeReadBack: a run fails as LOST only on a check that lost data,
// and exits 1 as unverified only on a check that got no answer in a run
// that otherwise completed; ok and late checks leave it completed. A loss
// where nothing was found says it may be a delay or another tenant.
func TestJudgeReadBack(t *testing.T) {
	ok := driver.Check{Name: "series", Expected: 10, Found: 10, Unit: "series", State: driver.CheckOK}
	late := driver.Check{Name: "samples", Expected: 100, Found: 100, Unit: "samples", State: driver.CheckLate, Late: 40}
	lost := driver.Check{Name: "samples", Expected: 100, Found: 90, Unit: "samples", State: driver.CheckLost}
	none := driver.Check{Name: "samples", Expected: 100, Unit: "samples", State: driver.CheckLost}
	unverified := driver.Check{Name: "samples", Expected: 100, Unit: "samples", State: driver.CheckUnverified, Reason: "HTTP 503"}
	completed := results.Status{State: results.StateCompleted, ExitCode: ExitOK}
	for _, tt := range []struct {
		name     string
		checks   []driver.Check
		lost, un verdict // judgeLost's, and judgeUnverified's of a completed run
	}{
		{"ok", []driver.Check{ok}, verdict{}, verdict{state: "completed"}},
		{"late", []driver.Check{ok, late}, verdict{}, verdict{state: "completed"}},
		{"lost", []driver.Check{ok, lost}, verdict{"failed", ExitFailed, "workload p/write lost data (samples: 90 of 100 samples found, 10 samples short)", lostHint},
			verdict{state: "completed"}},
		{"one found", []driver.Check{{Name: "samples", Expected: 100, Found: 1, Unit: "samples", State: driver.CheckLost}},
			verdict{"failed", ExitFailed, "1 of 100 samples found, 99 samples short", lostHint}, verdict{state: "completed"}},
		{"none found", []driver.Check{none}, verdict{"failed", ExitFailed, "0 of 100 samples found, 100 samples short", noneFoundHint}, verdict{state: "completed"}},
		{"unverified", []driver.Check{ok, unverified}, verdict{},
			verdict{"completed", ExitFailed, "read-back unverified: workload p/write: samples: HTTP 503", unverifiedHint}},
	} {
		r := runWithChecks(1000, 0, tt.checks...)
		status, err := judgeLost(r)
		if tt.lost.state == "" {
			if err != nil || status.State != "" {
				t.Errorf("%s: judgeLost %+v, %v; want no verdict", tt.name, status, err)
			}
		} else {
			checkVerdict(t, tt.name+": judgeLost", status, err, tt.lost)
		}
		status, err = judgeUnverified(r, completed, nil)
		checkVerdict(t, tt.name+": judgeUnverified", status, err, tt.un)
	}
	// A run that failed or met another verdict keeps it: unverified adds nothing.
	r := runWithChecks(1000, 0, unverified)
	failed := results.Status{State: results.StateFailed, ExitCode: ExitFailed, Message: "boom"}
	if status, err := judgeUnverified(r, failed, nil); status != failed || err != nil {
		t.Errorf("a failed run: %+v, %v", status, err)
	}
	sloErr := &Failure{Err: errors.New("SLO not met"), Code: ExitFailed}
	if status, err := judgeUnverified(r, completed, sloErr); status != completed || err != sloErr {
		t.Errorf("a run that missed its SLO: %+v, %v", status, err)
	}
}

// TestJudgeRunAndPlan: a run fails when every request of a workload
// failed, not when all but one did; it is interrupted by a signal and
// failed by its store, whatever else; a plan fails on a failed cell, and
// on lost data only when nothing else already ended it.
func TestJudgeRunAndPlan(t *testing.T) {
	storeErr := errors.New("no space left on device")
	lost := driver.Check{Name: "samples", Expected: 100, Found: 90, Unit: "samples", State: driver.CheckLost}
	for _, tt := range []struct {
		name        string
		r           *view.Run
		interrupted bool
		store       error
		failed      []string // failed cells; nil judges as a single run (judgeRun)
		want        verdict
	}{
		{"every request failed", runWithChecks(500, 500), false, nil, nil,
			verdict{"failed", ExitFailed, `every request of workload "p/write" failed`, "check that http://127.0.0.1:1/ is up"}},
		{"all but one failed", runWithChecks(500, 499), false, nil, nil, verdict{state: "completed"}},
		{"no request", runWithChecks(0, 0), false, nil, nil, verdict{state: "completed"}},
		{"interrupted", runWithChecks(500, 500), true, nil, nil, verdict{"interrupted", ExitInterrupted, "run interrupted", ""}},
		{"store failed", runWithChecks(500, 0), true, storeErr, nil, verdict{"failed", ExitFailed, "could not write every interval", "free disk space"}},
		{"plan: a cell failed", runWithChecks(500, 0), false, nil, []string{"cell a: boom"}, verdict{"failed", ExitFailed, "1 cell failed: cell a: boom", "report.md"}},
		{"plan: no cell failed", runWithChecks(500, 0), false, nil, []string{}, verdict{state: "completed"}},
		{"plan: lost data", runWithChecks(500, 0, lost), false, nil, []string{}, verdict{"failed", ExitFailed, "lost data", lostHint}},
		{"plan: lost data, interrupted", runWithChecks(500, 0, lost), true, nil, []string{}, verdict{"interrupted", ExitInterrupted, "run interrupted", ""}},
		{"plan: lost data and a failed cell", runWithChecks(500, 0, lost), false, nil, []string{"cell a: boom"}, verdict{"failed", ExitFailed, "1 cell failed", ""}},
	} {
		var status results.Status
		var err error
		if tt.failed == nil {
			status, err = judgeRun(tt.r, tt.interrupted, tt.store)
		} else {
			status, err = JudgePlan(tt.r, tt.interrupted, tt.store, tt.failed)
		}
		checkVerdict(t, tt.name, status, err, tt.want)
	}
}

// gatewayRun is a run of one interleaved workload whose requests straight
// to the upstream and through the gateway failed as given (of 500 each).
func gatewayRun(directFailed, gatewayFailed int64) *view.Run {
	s := &analysis.Summary{Workload: analysis.Workload{Name: "p/chat", Target: "http://127.0.0.1:1/"},
		RequestsTotal: 1000, ErrorsTotal: directFailed + gatewayFailed,
		OpTotals: []analysis.OpTotal{{Name: "direct: chat", Requests: 500, Errors: directFailed}, {Name: "gateway: chat", Requests: 500, Errors: gatewayFailed}}}
	if gatewayFailed > 0 {
		s.Ops = append(s.Ops, analysis.Op{Name: "gateway: chat", Errors: []analysis.ErrorCount{{Class: stats.Status5xx.String(), Count: gatewayFailed, Sample: "HTTP 500 Internal Server Error"}}})
	}
	return &view.Run{Workloads: []*analysis.Summary{s}}
}

// TestJudgeFailedSide: a gateway every request through which failed
// fails the run (before: exit 0, with an overhead of −449.5 ms), as does
// a dead upstream; a side with one success left does not.
func TestJudgeFailedSide(t *testing.T) {
	for _, tt := range []struct {
		name string
		r    *view.Run
		want verdict
	}{
		{"gateway failed", gatewayRun(0, 500), verdict{"failed", ExitFailed,
			`every request of workload "p/chat" through the gateway failed (500 requests; in the window, 500 × status_5xx: HTTP 500 Internal Server Error)`,
			"the gateway (params gateway.url) answers, but fails every request (5xx)"}},
		{"direct failed", gatewayRun(500, 0), verdict{"failed", ExitFailed, "straight to the upstream failed (500 requests", "check that http://127.0.0.1:1/ is up"}},
		{"one gateway success", gatewayRun(0, 499), verdict{state: "completed"}},
		{"every request failed", gatewayRun(500, 500), verdict{"failed", ExitFailed, `every request of workload "p/chat" failed`, ""}},
	} {
		status, err := judgeRun(tt.r, false, nil)
		checkVerdict(t, tt.name, status, err, tt.want)
		status, err = JudgePlan(tt.r, false, nil, []string{})
		checkVerdict(t, tt.name+" (plan)", status, err, tt.want)
	}
}

// TestJudgeSLOExit: a completed run exits 1 when a gate failed or had
// insufficient data, and 0 only when every gate passed; a run already
// ended by something else keeps its verdict.
func TestJudgeSLOExit(t *testing.T) {
	gate := func(expr string, s analysis.GateState) view.Gate {
		return view.Gate{Verdict: analysis.Verdict{Expr: expr, Workload: "p/write", State: s, Pass: s == analysis.GatePass}}
	}
	completed := results.Status{State: results.StateCompleted, ExitCode: ExitOK}
	for _, tt := range []struct {
		name  string
		gates []view.Gate
		want  verdict
	}{
		{"every gate passed", []view.Gate{gate("p99 < 1s", analysis.GatePass), gate("dropped == 0", analysis.GatePass)}, verdict{state: "completed"}},
		{"no gates", nil, verdict{state: "completed"}},
		{"a gate failed", []view.Gate{gate("p99 < 1s", analysis.GatePass), gate("dropped == 0", analysis.GateFail)},
			verdict{"completed", ExitFailed, "SLO not met: dropped == 0 failed on p/write", "SLO section"}},
		{"insufficient data", []view.Gate{gate("p99 < 1s", analysis.GateInsufficient)},
			verdict{"completed", ExitFailed, "SLO not met: p99 < 1s had insufficient data on p/write", "SLO section"}},
	} {
		r := runWithChecks(500, 0)
		r.SLO = tt.gates
		status, err := judgeSLO(r, completed, nil)
		checkVerdict(t, tt.name, status, err, tt.want)
	}
	r := runWithChecks(500, 0)
	r.SLO = []view.Gate{gate("p99 < 1s", analysis.GateFail)}
	interrupted := results.Status{State: results.StateInterrupted, ExitCode: ExitInterrupted}
	if status, err := judgeSLO(r, interrupted, nil); status != interrupted || err != nil {
		t.Errorf("an interrupted run: %+v, %v", status, err)
	}
}

// TestAllFailedHintByClass (issue 16, item 16): the hint of a run whose
// every request failed follows the class most failed with: a timeout is
// not "check that it is up" alone (--timeout 1ns was told so), a name
// that does not resolve is not a refused connection.
func TestAllFailedHintByClass(t *testing.T) {
	for _, c := range []struct{ class, sample, want, not string }{
		{"timeout", "", "raise --timeout", ""},
		{"dns", "", "does not resolve", "up and reachable"},
		{"connect", "", "up and reachable", "--timeout"},
		{"status_4xx", "", "4xx status", "up and reachable"},
		{"rate_limited", "HTTP 429 Too Many Requests", "for its rate (429)", "4xx"},
		{"status_other", "HTTP 302 Found (not an expected status: 200-299)", "--expect-status", "--proto"},
		// issue 27: a truncated body is not "check --proto"
		{"protocol", "answer cut short: the connection ended in the body, after 4 of 100 bytes", "before their end", "--proto"},
		{"protocol", "response headers larger than 64 KiB (perflab's bound)", "bounds", "--proto"},
		{"protocol", `malformed HTTP response "SSH-2.0"`, "--proto", "bound"},
	} {
		s := &analysis.Summary{Workload: analysis.Workload{Name: "w", Target: "GET http://127.0.0.1:1/"},
			Ops: []analysis.Op{{Name: "GET /", Requests: 10, Errors: []analysis.ErrorCount{{Class: c.class, Count: 10, Sample: c.sample}}}}}
		got := allFailedHint(s)
		if !strings.Contains(got, c.want) || c.not != "" && strings.Contains(got, c.not) {
			t.Errorf("%s: hint %q, want %q and not %q", c.class, got, c.want, c.not)
		}
	}
}

// TestShortfallFailsTheRun (issue 16, item 11): a run whose generator
// issued under half of a workload's arrivals due measured the generator,
// not the target: it fails, saying so; one that issued half does not.
func TestShortfallFailsTheRun(t *testing.T) {
	completed := results.Status{State: results.StateCompleted}
	run := func(scheduled, unissued uint64) *view.Run {
		return &view.Run{Workloads: []*analysis.Summary{{Workload: analysis.Workload{Name: "http", Model: "open",
			Scheduled: scheduled, Unissued: unissued}}}}
	}
	status, err := judgeShortfall(run(6_600_000, 1_999_993_400_000), completed, nil)
	var f *Failure
	if status.State != results.StateFailed || !errors.As(err, &f) || f.Code != ExitFailed ||
		!strings.Contains(err.Error(), "the generator issued 6600000 of the 2000000000000 arrivals due") ||
		!strings.Contains(err.Error(), "measured the generator, not the target") {
		t.Errorf("status %+v, err %v", status, err)
	}
	if status, err := judgeShortfall(run(500, 500), completed, nil); err != nil || status.State != results.StateCompleted {
		t.Errorf("half issued: status %+v, err %v", status, err)
	}
}

package run

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/driver"
	"github.com/perflab/perflab/internal/driver/interleave"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/view"
)

// lostHint is what a run that lost data tells its user.
const lostHint = "the system under test acknowledged writes it does not return: " +
	"report.md's read-back checks say how much of what is missing"

// noneFoundHint is lostHint when no check found anything of what was
// written: then a visibility delay longer than the read-back's wait, or a
// query_url that reads elsewhere, is as likely as a loss.
const noneFoundHint = "none of what was written was found: either the system lost it all, or it shows writes later " +
	"than the read-back waited (raise verify_wait: VictoriaMetrics hides the last 30 s by default), or query_url reads " +
	"another system or tenant than url writes to"

// noneFound reports whether every check that lost data found nothing.
func noneFound(checks [][]driver.Check) bool {
	for _, cs := range checks {
		for _, c := range cs {
			if c.Found > 0 {
				return false
			}
		}
	}
	return true
}

// judgeLost fails a run in which a read-back check found acknowledged data
// missing, naming each workload and its shortfall. The error is nil when
// no check lost data.
func judgeLost(r *view.Run) (results.Status, error) {
	names, checks := r.LostChecks()
	if len(names) == 0 {
		return results.Status{}, nil
	}
	var parts []string
	for i, name := range names {
		var short []string
		for _, c := range checks[i] {
			short = append(short, fmt.Sprintf("%s: %s of %s found, %s short", c.Name, figure(c.Found), withUnit(c.Expected, c.Unit),
				withUnit(c.Shortfall(), c.Unit)))
		}
		parts = append(parts, fmt.Sprintf("workload %s lost data (%s)", name, strings.Join(short, "; ")))
	}
	msg := strings.Join(parts, "; ")
	hint := lostHint
	if noneFound(checks) {
		hint = noneFoundHint
	}
	return results.Status{State: results.StateFailed, Ended: time.Now(), Message: msg, ExitCode: ExitFailed},
		failed(errors.New(msg), hint)
}

// unverifiedHint is what a run whose read-back got no answer tells its
// user.
const unverifiedHint = "it is not known whether the system under test lost data: report.md's read-back checks " +
	"give each reason; fix the query URL or its credentials, or leave query_url out to run without a read-back"

// judgeUnverified makes a run that completed, and met its SLO if it has
// one, exit 1 when a read-back check got no answer: a check that could
// not be made is no pass, as an SLO gate with insufficient data is not.
// The run stays completed; its message names each unverified check.
func judgeUnverified(r *view.Run, status results.Status, runErr error) (results.Status, error) {
	names, checks := r.ChecksIn(driver.CheckUnverified)
	if runErr != nil || status.State != results.StateCompleted || len(names) == 0 {
		return status, runErr
	}
	var parts []string
	for i, name := range names {
		for _, c := range checks[i] {
			parts = append(parts, fmt.Sprintf("workload %s: %s: %s", name, c.Name, c.Reason))
		}
	}
	status.Message = "read-back unverified: " + strings.Join(parts, "; ")
	status.ExitCode = ExitFailed
	return status, failed(errors.New(status.Message), unverifiedHint)
}

func withUnit(v float64, unit string) string {
	if unit == "" {
		return figure(v)
	}
	return figure(v) + " " + unit
}

// judgeSLO turns a run that completed but did not meet its SLO into exit
// status 1 with a hint; a run that failed for another reason keeps that.
func judgeSLO(r *view.Run, status results.Status, runErr error) (results.Status, error) {
	if runErr != nil || status.State != results.StateCompleted || view.SLOMet(r.SLO) {
		return status, runErr
	}
	var missed []string
	for _, g := range r.SLO {
		if g.State == analysis.GatePass {
			continue
		}
		what := "failed"
		if g.State == analysis.GateInsufficient {
			what = "had insufficient data"
		}
		m := fmt.Sprintf("%s %s", g.Expr, what)
		if g.Workload != "" {
			m += " on " + g.Workload
		}
		if g.Measured != "" {
			m += " (" + g.Measured + ")"
		}
		missed = append(missed, m)
	}
	if len(missed) > 3 {
		missed = append(missed[:3], fmt.Sprintf("and %d more", len(missed)-3))
	}
	status.Message = "SLO not met: " + strings.Join(missed, "; ")
	status.ExitCode = ExitFailed
	return status, failed(errors.New(status.Message),
		"the report's SLO section lists every gate with its measured value; insufficient data needs a longer window or more load")
}

// failedSide finds the first workload that ran straight to an upstream
// and through a gateway (internal/driver/interleave) one of whose sides
// had every request fail over the whole run, though the other's did not
// all fail: that side measured nothing, and the overhead has no figure.
// It returns the run's failure message and hint, or "" when there is no
// such workload.
func failedSide(sums []*analysis.Summary) (msg, hint string) {
	for _, s := range sums {
		var requests, errs [2]int64
		for _, t := range s.OpTotals {
			if side, _, ok := interleave.Split(t.Name); ok {
				requests[side] += t.Requests
				errs[side] += t.Errors
			}
		}
		for _, side := range []interleave.Side{interleave.Gateway, interleave.Direct} {
			if requests[side] == 0 || errs[side] < requests[side] {
				continue
			}
			onSide := func(op string) bool { sd, _, ok := interleave.Split(op); return ok && sd == side }
			way, target := "through the gateway", "the gateway (params gateway.url)"
			if side == interleave.Direct {
				way, target = "straight to the upstream", s.Workload.Target
			}
			msg = fmt.Sprintf("every request of workload %q %s failed (%d requests; in the window, %s): there is no overhead figure",
				s.Workload.Name, way, requests[side], errorsOf(s, onSide))
			top := topClass(s, onSide)
			return msg, failedHint(top, sampleOf(s, top), target)
		}
	}
	return "", ""
}

package remotewrite

import (
	"fmt"
	"strconv"

	"github.com/perflab/perflab/internal/driver"
)

// protocolFact names the protocol the run spoke, and why it fell back.
func (d *Driver) protocolFact(f ackFigures) string {
	switch {
	case f.fellBack != "":
		return "remote write 1.0 (version auto fell back from 2.0: " + f.fellBack + ")"
	case d.proto.v2.Load():
		return "remote write 2.0 (spec 2.0-rc.4)"
	}
	return "remote write 1.0"
}

// ackFacts say what was sent and what the receiver said it wrote; with a
// 1.0 receiver that it does not say.
func ackFacts(f ackFigures) []driver.Fact {
	facts := []driver.Fact{
		{Name: "samples sent", Value: strconv.FormatInt(f.sent.samples, 10)},
		{Name: "histograms sent", Value: strconv.FormatInt(f.sent.histograms, 10)},
		{Name: "exemplars sent", Value: strconv.FormatInt(f.sent.exemplars, 10)},
	}
	if f.okSent == (counts{}) {
		return append(facts, driver.Fact{Name: "written by the receiver (its count)",
			Value: "not available: a remote write 1.0 receiver does not say what it wrote; the read-back is the check"})
	}
	facts = append(facts,
		driver.Fact{Name: "samples written by the receiver (its count)", Value: strconv.FormatInt(f.acked.samples, 10)},
		driver.Fact{Name: "histograms written by the receiver (its count)", Value: strconv.FormatInt(f.acked.histograms, 10)},
		driver.Fact{Name: "exemplars written by the receiver (its count)", Value: strconv.FormatInt(f.acked.exemplars, 10)})
	if f.okBare > 0 {
		facts = append(facts, driver.Fact{Name: "2xx answers without written counts", Value: strconv.FormatInt(f.okBare, 10)})
	}
	return facts
}

// ackChecks compare what was sent in requests answered 2xx with what the
// receiver's written headers said it wrote of them: a receiver that
// answers 2xx but wrote fewer lost data silently (partial loss), which a
// sender that trusts the status never sees. None when no answer had the
// headers (remote write 1.0).
func ackChecks(f ackFigures) []driver.Check {
	if f.okSent == (counts{}) {
		return nil
	}
	var out []driver.Check
	for _, c := range []struct {
		unit       string
		sent, said int64
	}{{"samples", f.okSent.samples, f.acked.samples}, {"histograms", f.okSent.histograms, f.acked.histograms},
		{"exemplars", f.okSent.exemplars, f.acked.exemplars}} {
		if c.sent == 0 && c.said == 0 {
			continue
		}
		ch := driver.Check{Name: c.unit + " acknowledged", Expected: float64(c.sent), Found: float64(c.said), Unit: c.unit}
		ch.Settle(c.said < c.sent, false, "")
		ch.Note = fmt.Sprintf("sent %d %s in requests answered 2xx; the receiver's %s header said it wrote %d",
			c.sent, c.unit, headerOf(c.unit), c.said)
		if c.said < c.sent {
			ch.Note = fmt.Sprintf("silent partial loss: the receiver answered 2xx to %d requests but wrote fewer than they carried (%s); ",
				f.short, f.shortNote) + ch.Note
		}
		out = append(out, ch)
	}
	return out
}

func headerOf(unit string) string {
	switch unit {
	case "histograms":
		return hdrHistogramsWritten
	case "exemplars":
		return hdrExemplarsWritten
	}
	return hdrSamplesWritten
}

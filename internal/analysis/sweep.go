package analysis

// The kinds of step of a sweep.
const (
	SweepSynchronous = "synchronous" // one request at a time: the closed model with one VU
	SweepThroughput  = "throughput"  // as fast as it goes: the closed model with many VUs
	SweepConstant    = "constant"    // a constant rate: the open model
)

// SaturationShare is the share of its rate a constant-rate step of a sweep
// must achieve: under it requests arrived faster than the target answered
// them, so they queued (or found no free VU) and the target was
// over-saturated.
const SaturationShare = 0.95

// Sweep chooses the steps of a sweep as guidellm makes one: one request at
// a time, to find the synchronous rate; then as fast as it goes, to find
// the throughput; then Size − 2 constant rates evenly spaced from the
// synchronous rate to the throughput (SweepRates), lowest first, until one
// is over-saturated (it achieved under SaturationShare of its rate) or
// the generator was the limit. Like CapacitySearch it is a pure state
// machine: Next says what to run, Record what the step achieved.
type Sweep struct {
	Size int // steps in all, >= 2

	Sync       float64 // the synchronous step's achieved rate; 0 until it ran
	Throughput float64 // the throughput step's; 0 until it ran
	Saturated  float64 // the first constant rate that was over-saturated; 0 if none
	Client     float64 // the constant rate at which the generator was the limit; 0 if none
	Rates      []float64
	steps      int
}

// Next is the next step: its kind and, for a constant step, its rate; done
// when the sweep is over.
func (s *Sweep) Next() (kind string, rate float64, done bool) {
	switch {
	case s.steps == 0:
		return SweepSynchronous, 0, false
	case s.Sync <= 0:
		return "", 0, true // nothing completed: nothing to sweep
	case s.steps == 1:
		return SweepThroughput, 0, false
	case s.Saturated > 0 || s.Client > 0 || s.steps-2 >= len(s.Rates):
		return "", 0, true
	}
	return SweepConstant, s.Rates[s.steps-2], false
}

// Record takes what the step Next gave achieved (operations completed per
// second of its window), and whether the generator was its limit.
func (s *Sweep) Record(achieved float64, clientBound bool) {
	switch s.steps {
	case 0:
		s.Sync = achieved
	case 1:
		s.Throughput = achieved
		if achieved > s.Sync {
			s.Rates = SweepRates(s.Sync, achieved, s.Size)
		}
	default:
		rate := s.Rates[s.steps-2]
		switch {
		case clientBound:
			s.Client = rate
		case achieved < SaturationShare*rate:
			s.Saturated = rate
		}
	}
	s.steps++
}

// Limit says how the sweep ended: "saturated" (a constant rate was
// over-saturated), "generator" (perflab was the limit), "flat" (the
// throughput was no more than the synchronous rate: nothing lies between),
// "nothing" (one request at a time completed nothing), or "size" (every
// step ran).
func (s *Sweep) Limit() string {
	switch {
	case s.Saturated > 0:
		return "saturated"
	case s.Client > 0:
		return "generator"
	case s.Sync <= 0:
		return "nothing"
	case s.steps >= 2 && s.Throughput <= s.Sync && s.Size > 2:
		return "flat"
	}
	return "size"
}

// SweepRates are the constant rates of a sweep of size steps from the
// synchronous rate to the throughput: size − 2 rates, evenly spaced, the
// first one spacing above sync and the last the throughput itself
// (guidellm's linspace(sync, throughput, size − 1) without its first),
// each to three significant digits.
func SweepRates(sync, throughput float64, size int) []float64 {
	n := size - 2
	var rates []float64
	for i := 1; i <= n; i++ {
		rates = append(rates, roundRate(sync+(throughput-sync)*float64(i)/float64(n)))
	}
	return rates
}

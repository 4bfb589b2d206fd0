package analysis

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Resource is what a Quantity measures.
type Resource uint8

// The resources sizing recommends requests and limits for.
const (
	ResourceCPU    Resource = iota + 1 // cores; a Quantity holds millicores
	ResourceMemory                     // bytes
)

func (r Resource) String() string {
	switch r {
	case ResourceCPU:
		return "cpu"
	case ResourceMemory:
		return "memory"
	}
	return "unknown"
}

const (
	mi = 1 << 20
	gi = 1 << 30
)

// Quantity is a Kubernetes resource quantity: an amount of CPU in
// millicores or of memory in bytes. The zero Quantity is "no figure".
type Quantity struct {
	Resource Resource
	Amount   int64 // millicores for CPU, bytes for memory
}

// IsZero reports whether q holds no figure.
func (q Quantity) IsZero() bool { return q.Amount == 0 }

// Value is q in cores (CPU) or bytes (memory).
func (q Quantity) Value() float64 {
	if q.Resource == ResourceCPU {
		return float64(q.Amount) / 1000
	}
	return float64(q.Amount)
}

// String writes q the way people write Kubernetes manifests: CPU below one
// core in millicores ("250m"), from one core up in cores with up to three
// decimals ("1", "1.05", "4051.5"); memory below 1Gi in Mi ("512Mi"), from
// 1Gi up in Gi with up to three decimals when that is exact ("2Gi",
// "1.25Gi"; any multiple of 128Mi), else in Mi ("8288Mi"); an amount that
// is no whole Mi in Ki, or bytes. The zero Quantity is "".
func (q Quantity) String() string {
	if q.IsZero() {
		return ""
	}
	a := q.Amount
	if q.Resource == ResourceCPU {
		if a < 1000 {
			return strconv.FormatInt(a, 10) + "m"
		}
		return thousandths(a, "")
	}
	switch {
	case a >= gi && a%(gi/8) == 0:
		return thousandths(a/(gi/8)*125, "Gi")
	case a%mi == 0:
		return strconv.FormatInt(a/mi, 10) + "Mi"
	case a%1024 == 0:
		return strconv.FormatInt(a/1024, 10) + "Ki"
	}
	return strconv.FormatInt(a, 10)
}

// thousandths writes n/1000 with up to three decimals and no trailing
// zeros, then suffix: thousandths(1250, "Gi") is "1.25Gi".
func thousandths(n int64, suffix string) string {
	s := strconv.FormatInt(n/1000, 10)
	if frac := n % 1000; frac != 0 {
		s += strings.TrimRight("."+fmt.Sprintf("%03d", frac), "0")
	}
	return s + suffix
}

// CPUStep is the step a CPU figure of v cores is rounded up to: 10m up to
// one core, 50m above (rounding adds less than 5 % above one core).
func CPUStep(cores float64) int64 {
	if cores <= 1 { // equivalent mutant: cores < 1; one core rounds to 1000m on either step
		return 10
	}
	return 50
}

// MemoryStep is the step a memory figure of v bytes is rounded up to, so
// that the result reads like a hand-written manifest ("192Mi", "2Gi") and
// rounding adds less than a quarter of the figure from 128Mi up:
//
//	up to 256Mi   32Mi   (32Mi, 64Mi, 96Mi, 128Mi, …)
//	up to 1Gi     64Mi   (320Mi, 384Mi, …, 1Gi)
//	up to 4Gi     256Mi  (1.25Gi, 1.5Gi, 1.75Gi, 2Gi, …)
//	up to 16Gi    512Mi  (4.5Gi, 5Gi, …)
//	above         1Gi
func MemoryStep(bytes float64) int64 {
	switch {
	case bytes <= 256*mi:
		return 32 * mi
	case bytes <= gi:
		return 64 * mi
	case bytes <= 4*gi:
		return 256 * mi
	case bytes <= 16*gi:
		return 512 * mi
	}
	return gi
}

// RoundUp rounds v (cores or bytes) up to the resource's step (CPUStep,
// MemoryStep). Any figure at or below zero becomes one step: a request of
// nothing is never recommended. A figure within 1e-9 of a step counts as on
// it, so 1.2 cores is 1200m, not 1250m after floating-point error. NaN and
// ±Inf give the zero Quantity.
func RoundUp(r Resource, v float64) Quantity {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return Quantity{}
	}
	var amount float64
	var step int64
	switch r {
	case ResourceCPU:
		amount, step = v*1000, CPUStep(v)
	case ResourceMemory:
		amount, step = v, MemoryStep(v)
	default:
		return Quantity{}
	}
	steps := max(1, int64(math.Ceil(amount/float64(step)-1e-9)))
	return Quantity{Resource: r, Amount: steps * step}
}

package stats

import (
	"math"
	"math/bits"
	"time"
)

// Resolution is the width of the histogram bucket d falls in: two
// latencies that close may be recorded as the same value, so a difference
// of quantiles is only known to about this much. It is 1 µs below 2.048 ms
// and doubles with every doubling of d above it (64 µs near 100 ms).
func Resolution(d time.Duration) time.Duration {
	v := min(max(int64(d/time.Microsecond), histLowest), histHighest)
	// As in the HDR histogram: a bucket holds subBucketCount values of one
	// width, and the width doubles from one bucket to the next.
	shift := bits.Len64(uint64(v)|uint64(subBucketCount-1)) - bits.Len64(uint64(subBucketCount-1))
	return time.Duration(int64(1)<<shift) * time.Microsecond
}

// subBucketCount is the HDR histogram's sub-bucket count for histSigFigs:
// the power of two at or above 2 × 10^histSigFigs (2048 for 3).
var subBucketCount = int64(1) << int(math.Ceil(math.Log2(2*math.Pow10(histSigFigs))))

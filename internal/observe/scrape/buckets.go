package scrape

import (
	"bytes"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/perflab/perflab/internal/observe"
)

// BucketMetric is the stored name of the bucket of histogram name (its
// _bucket name) with upper bound le.
func BucketMetric(name string, le float64) string {
	return observe.BucketPrefix + name + " le=" + strconv.FormatFloat(le, 'g', -1, 64)
}

// ParseBucketMetric reads a name BucketMetric made; ok is false for any
// other.
func ParseBucketMetric(stored string) (name string, le float64, ok bool) {
	rest, ok := strings.CutPrefix(stored, observe.BucketPrefix)
	if !ok {
		return "", 0, false
	}
	name, bound, ok := strings.Cut(rest, " le=")
	if !ok {
		return "", 0, false
	}
	le, err := strconv.ParseFloat(bound, 64)
	return name, le, err == nil
}

// splitBuckets parts the names a plan lists into those of histograms'
// buckets (ending in _bucket) and the others.
func splitBuckets(names []string) (plain, buckets []string) {
	for _, n := range names {
		if strings.HasSuffix(n, "_bucket") {
			buckets = append(buckets, n)
		} else {
			plain = append(plain, n)
		}
	}
	return plain, buckets
}

// bucketPoints reads, from the last response, the buckets of each
// histogram named: one point per upper bound (+Inf included), its
// cumulative count summed over the series. The scanner does not read
// labels, so expfmt parses the response: only plans that ask for buckets
// pay for it.
func (s *Scraper) bucketPoints(format expfmt.Format) ([]observe.Point, error) {
	var families map[string]*dto.MetricFamily
	var err error
	if format.FormatType() == expfmt.TypeProtoDelim {
		families, err = decodeProto(bytes.NewReader(s.body.Bytes()), format)
	} else {
		p := expfmt.NewTextParser(model.UTF8Validation)
		families, err = p.TextToMetricFamilies(bytes.NewReader(s.body.Bytes()))
	}
	if err != nil {
		return nil, err
	}
	var points []observe.Point
	for _, name := range s.buckets {
		mf := families[strings.TrimSuffix(name, "_bucket")]
		if mf.GetType() != dto.MetricType_HISTOGRAM {
			continue
		}
		counts := map[float64]float64{}
		var bounds []float64
		for _, m := range mf.GetMetric() {
			h := m.GetHistogram()
			for _, b := range h.GetBucket() {
				if _, ok := counts[b.GetUpperBound()]; !ok {
					bounds = append(bounds, b.GetUpperBound())
				}
				counts[b.GetUpperBound()] += float64(b.GetCumulativeCount())
			}
		}
		for _, le := range bounds {
			points = append(points, observe.Point{Metric: BucketMetric(name, le), Value: counts[le]})
		}
	}
	return points, nil
}

package analysis

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// insightPhase is a profile of 20 one-second samples in which every sample
// of each component is the same: app uses appCPU cores and 100 MiB, db 0.05
// cores and dbMiB MiB; workload get ran at rate/s sending 1 KiB each.
func insightPhase(t *testing.T, profile string, start time.Time, rate, appCPU, dbMiB float64) PhaseData {
	t.Helper()
	w := Window{Start: start, End: start.Add(20 * time.Second)}
	series := map[string]map[string][]Point{}
	for _, c := range []struct {
		name     string
		cpu, mem float64
	}{{"app", appCPU, 100 * mi}, {"db", 0.05, dbMiB * mi}, {"perflab", 0.1, 30 * mi}} {
		series[c.name] = map[string][]Point{}
		for i := 1; i <= 20; i++ {
			at := start.Add(time.Duration(i) * time.Second)
			series[c.name]["cpu_cores"] = append(series[c.name]["cpu_cores"], Point{at, c.cpu})
			series[c.name]["rss_bytes"] = append(series[c.name]["rss_bytes"], Point{at, c.mem})
		}
	}
	in := ResourceInput{Window: w, Series: series, Components: []Component{
		{Name: "app", Kind: "run"}, {Name: "db", Kind: "run"}, {Name: "perflab", Kind: KindGenerator}}}
	sum := &Summary{Workload: Workload{Name: profile + "/get", Short: "get"}, Rate: rate,
		Ops: []Op{{Name: "GET /", Rate: rate, BytesSentPS: 1024 * rate}}}
	return PhaseData{Profile: profile, Resources: SummarizeResources(in), Summaries: []*Summary{sum},
		Sizing: SizingInputs(in, 0)}
}

func threePhases(t *testing.T) []PhaseData {
	t0 := time.Date(2026, 11, 21, 17, 0, 0, 0, time.UTC)
	// app CPU = 0.1 + 0.001 × rate; db memory = 200 + 0.5 × rate MiB.
	return []PhaseData{
		insightPhase(t, "s", t0, 100, 0.2, 250),
		insightPhase(t, "m", t0.Add(time.Minute), 200, 0.3, 300),
		insightPhase(t, "l", t0.Add(2*time.Minute), 400, 0.5, 400),
	}
}

func TestCellInsights(t *testing.T) {
	in, err := CellInsights(threePhases(t), DefaultInsightOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Sizes) != 3 || in.LoadWorkload != "get" || !slices.Equal(in.Loads, []float64{100, 200, 400}) || len(in.Warnings) > 0 {
		t.Fatalf("insights %+v", in)
	}
	s := in.Sizes[0]
	// app: 0.2 × 1.25 = 250m, limit 375m → 380m; 100 MiB × 1.25 = 125 → 128Mi, limit 192Mi.
	// db: 0.05 × 1.25 = 62.5m → 70m, limit 105m → 110m; 250 MiB × 1.25 = 312.5 → 320Mi, limit 480 → 512Mi.
	// total: 320m, 490m, 448Mi, 704Mi. The generator is not sized.
	var got []string
	for _, r := range append(slices.Clone(s.Components), s.Total) {
		got = append(got, r.Component, r.CPURequest.String(), r.CPULimit.String(), r.MemoryRequest.String(), r.MemoryLimit.String())
	}
	want := []string{"app", "250m", "380m", "128Mi", "192Mi", "db", "70m", "110m", "320Mi", "512Mi", "total", "320m", "490m", "448Mi", "704Mi"}
	if !slices.Equal(got, want) {
		t.Errorf("size s: %q\nwant %q", got, want)
	}
	if s.Size != "s" || s.Load != "get 100/s (100 KiB/s sent)" || s.Strategy != "p99" {
		t.Errorf("size s: %q %q %q", s.Size, s.Load, s.Strategy)
	}
	// cpu: app, db, total; memory: app, db, total.
	if len(in.Scaling) != 6 {
		t.Fatalf("%d fits", len(in.Scaling))
	}
	app := in.Scaling[0].Fit
	if in.Scaling[0].Component != "app" || !closeTo(app.Slope, 0.001, 1e-9) || !closeTo(app.Intercept, 0.1, 1e-9) || app.Poor {
		t.Errorf("app CPU fit %+v", app)
	}
	if db := in.Scaling[1].Fit; !db.Constant {
		t.Errorf("db CPU fit %+v is not constant", db)
	}
	var kinds []string
	for _, o := range in.Observations {
		kinds = append(kinds, o.Kind+" "+o.Component+" "+o.Metric)
	}
	wantKinds := []string{"share db memory", "share app cpu", "linear app cpu", "linear total cpu", "linear db memory",
		"linear total memory", "constant db cpu", "constant app memory"}
	if !slices.Equal(kinds, wantKinds) {
		t.Errorf("observations %q\nwant %q", kinds, wantKinds)
	}
}

func TestPredictAt(t *testing.T) {
	in, err := CellInsights(threePhases(t), DefaultInsightOptions())
	if err != nil {
		t.Fatal(err)
	}
	ps := in.PredictAt(800)
	if len(ps) != 6 {
		t.Fatalf("%d predictions", len(ps))
	}
	// app CPU at 800/s: 0.1 + 0.8 = 0.9 cores, outside 100–400; request 0.9 × 1.25 = 1.125 → 1150m, limit 1725 → 1750m.
	p := ps[0]
	if !closeTo(p.Prediction.Value, 0.9, 1e-9) || !p.Prediction.Extrapolation || p.Request.String() != "1.15" || p.Limit.String() != "1.75" {
		t.Errorf("app CPU at 800/s: %+v, request %s, limit %s", p.Prediction, p.Request, p.Limit)
	}
	// db memory at 800/s: 200 + 400 = 600 MiB; request 750 MiB → 768Mi, limit 1152 MiB → 1280Mi (1.25Gi).
	p = ps[4]
	if p.Scaling.Component != "db" || !closeTo(p.Prediction.Value, 600*mi, 1e-3) || p.Request.String() != "768Mi" || p.Limit.String() != "1.25Gi" {
		t.Errorf("db memory at 800/s: %+v, request %s, limit %s", p.Prediction, p.Request, p.Limit)
	}
	if in := in.PredictAt(300)[0]; in.Prediction.Extrapolation || math.IsNaN(in.Prediction.Low) {
		t.Errorf("app CPU at 300/s: %+v", in.Prediction)
	}
}

func TestCellInsightsBytesAndTooFew(t *testing.T) {
	phases := threePhases(t)
	o := DefaultInsightOptions()
	o.Load = LoadBytes
	in, err := CellInsights(phases, o)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(in.Loads, []float64{102400, 204800, 409600}) || in.Scaling[0].LoadUnit != "bytes/s" {
		t.Errorf("loads %v, unit %q", in.Loads, in.Scaling[0].LoadUnit)
	}
	// One profile: a size, no fits.
	one, err := CellInsights(phases[:1], DefaultInsightOptions())
	if err != nil || len(one.Sizes) != 1 || one.Scaling != nil {
		t.Errorf("one profile: %+v, %v", one, err)
	}
	// No samples: nothing.
	if none, err := CellInsights([]PhaseData{{Profile: "x"}}, DefaultInsightOptions()); none != nil || err != nil {
		t.Errorf("no samples: %+v, %v", none, err)
	}
	// A client-bound, failed phase says so.
	phases[2].Resources.ClientBound, phases[2].State = true, "failed"
	in, _ = CellInsights(phases, DefaultInsightOptions())
	if len(in.Warnings) != 2 || !strings.Contains(in.Warnings[0], "profile l did not complete (failed)") ||
		!strings.Contains(in.Warnings[1], "profile l was client-bound") {
		t.Errorf("warnings %q", in.Warnings)
	}
	// So does one whose workload's schedule the generator could not keep.
	phases[2].Resources.ClientBound, phases[2].State = false, "completed"
	phases[1].Summaries[0].markClientBound(unissuedWhy(Workload{Model: "open", Scheduled: 50, Unissued: 50}))
	in, _ = CellInsights(phases, DefaultInsightOptions())
	if len(in.Warnings) != 1 || !strings.Contains(in.Warnings[0], "profile m was client-bound") {
		t.Errorf("warnings %q", in.Warnings)
	}
}

// Requests of 1 KiB in one profile and 1 MiB in the others are not the same
// load: the fits follow bytes/s and say why; sizes within SizeSpread of
// each other stay requests/s.
func TestCellInsightsLoadFollowsBytesWhenRequestsDiffer(t *testing.T) {
	phases := threePhases(t)
	for i, per := range []float64{1 << 10, 1 << 20, 1 << 20} {
		op := &phases[i].Summaries[0].Ops[0]
		op.BytesSentPS, op.BytesRecvPS = 100, per*op.Rate-100
	}
	in, err := CellInsights(phases, DefaultInsightOptions())
	if err != nil {
		t.Fatal(err)
	}
	if in.Load != LoadBytes || !slices.Equal(in.Loads, []float64{100 << 10, 200 << 20, 400 << 20}) || in.Scaling[0].LoadUnit != "bytes/s" ||
		!strings.Contains(in.LoadNote, "from 1 KiB to 1 MiB each") {
		t.Errorf("load %v %v, unit %q, note %q", in.Load, in.Loads, in.Scaling[0].LoadUnit, in.LoadNote)
	}
	for i, per := range []float64{1000, 1500, 1999} {
		op := &phases[i].Summaries[0].Ops[0]
		op.BytesSentPS, op.BytesRecvPS = 0, per*op.Rate
	}
	if in, _ := CellInsights(phases, DefaultInsightOptions()); in.Load != LoadRequests || in.LoadNote != "" {
		t.Errorf("sizes within 2x: load %v, note %q", in.Load, in.LoadNote)
	}
}

// A load given in the other unit than the fits': a byte rate becomes
// requests/s at the mean bytes per request, said in the note; a rate is
// refused where the fits follow bytes/s, and a byte rate where the
// requests moved no bytes, each naming the unit to give.
func TestLoadIn(t *testing.T) {
	phases := threePhases(t) // 1 KiB sent per request
	in, err := CellInsights(phases, DefaultInsightOptions())
	if err != nil {
		t.Fatal(err)
	}
	if load, note, err := in.LoadIn(LoadRequests, 300); load != 300 || note != "" || err != nil {
		t.Errorf("a rate against requests/s fits: %v %q %v", load, note, err)
	}
	load, note, err := in.LoadIn(LoadBytes, 300<<10)
	if err != nil || !closeTo(load, 300, 1e-9) || note != "300 KiB/s is 300 requests/s of workload get: the fits follow its requests/s, "+
		"and its requests moved 1 KiB each on average (sent and received) over the 3 profiles measured" {
		t.Errorf("a byte rate against requests/s fits: %v %q %v", load, note, err)
	}
	for i, per := range []float64{1 << 10, 1 << 20, 1 << 20} {
		op := &phases[i].Summaries[0].Ops[0]
		op.BytesSentPS, op.BytesRecvPS = 100, per*op.Rate-100
	}
	in, _ = CellInsights(phases, DefaultInsightOptions())
	if _, _, err := in.LoadIn(LoadRequests, 5000); err == nil ||
		!strings.Contains(err.Error(), "the scaling fits follow the bytes/s of workload get, not its requests/s (the requests of workload get move from 1 KiB to 1 MiB") ||
		!strings.HasSuffix(err.Error(), "give the load as a byte rate, e.g. 400MiB/s") {
		t.Errorf("a rate against bytes/s fits: %v", err)
	}
	for i := range phases {
		op := &phases[i].Summaries[0].Ops[0]
		op.BytesSentPS, op.BytesRecvPS = 0, 0
	}
	in, _ = CellInsights(phases, DefaultInsightOptions())
	if _, _, err := in.LoadIn(LoadBytes, 1<<20); err == nil || !strings.Contains(err.Error(), "whose requests moved no bytes") ||
		!strings.HasSuffix(err.Error(), "give the load as a rate, e.g. 400/s") {
		t.Errorf("a byte rate against requests that moved no bytes: %v", err)
	}
}

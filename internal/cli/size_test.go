package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/readback"
	"github.com/perflab/perflab/internal/report"
	"github.com/perflab/perflab/internal/results"
	"github.com/perflab/perflab/internal/results/resultstest"
	"github.com/perflab/perflab/internal/stats"
)

// writeSizingStore writes a plan run of one cell and profiles s, m and l,
// each 36 one-second intervals of "get" at 100, 200 and 400 requests/s
// (1000 bytes sent each) with a 36 s window sampled every second: app uses
// 0.1 + 0.001 × rate cores and 100 + 0.25 × rate MiB, the generator 0.1
// cores.
func writeSizingStore(t *testing.T, dir string) string { return writeScaledStore(t, dir, 1, 1) }

// writeScaledStore is writeSizingStore with app's CPU × cpu and every rate
// × rate.
func writeScaledStore(t *testing.T, dir string, cpu float64, rate int) string {
	return writeStoreOf(t, dir, cpu, rate, [3]int{1000, 1000, 1000})
}

// writeStoreOf is writeScaledStore with the bytes each request of s, m and
// l sends.
func writeStoreOf(t *testing.T, dir string, cpu float64, rate int, sent [3]int) string {
	store, err := results.Create(dir, results.Meta{Name: "sizing", Started: resultstest.T0, GoMaxProcs: 2})
	resultstest.Must(t, err)
	defer store.Close()
	resultstest.Must(t, store.AddCell(results.Cell{Index: 0, Name: "default", Started: resultstest.T0}))
	resultstest.Must(t, store.AddComponent(results.Component{Name: "app", Kind: results.KindRun, PID: 42}))
	resultstest.Must(t, store.AddComponent(results.Component{Name: "perflab", Kind: results.KindGenerator}))
	for i, p := range []struct {
		name string
		rate int
	}{{"s", 100 * rate}, {"m", 200 * rate}, {"l", 400 * rate}} {
		start := resultstest.T0.Add(time.Duration(i) * time.Minute)
		end := start.Add(36 * time.Second)
		resultstest.Must(t, store.AddPhase(results.Phase{Profile: p.name, Start: start}))
		w := "default/" + p.name + "/get"
		resultstest.Must(t, store.AddWorkload(results.Workload{Name: w, Short: "get", Profile: p.name, Driver: "http",
			Model: results.ModelOpen, Target: "GET http://app", Rate: float64(p.rate), VUsMin: 1, VUsMax: 50, Duration: 36 * time.Second}))
		for k := range 36 {
			st := stats.NewOpStats()
			for range p.rate {
				st.Latency.Record(time.Millisecond)
				st.Service.Record(time.Millisecond)
			}
			st.Classes[stats.OK], st.BytesSent = int64(p.rate), int64(sent[i]*p.rate)
			resultstest.Must(t, store.WriteInterval(w, &stats.Interval{Index: k, Start: start.Add(time.Duration(k) * time.Second),
				End: start.Add(time.Duration(k+1) * time.Second), Ops: map[string]*stats.OpStats{"GET /": st}, Lag: stats.NewHist()}))
			resultstest.Must(t, store.WriteSamples(0, start.Add(time.Duration(k+1)*time.Second), map[string][]results.Sample{
				"app":     {{Metric: "cpu_cores", Value: cpu * (0.1 + 0.001*float64(p.rate))}, {Metric: "rss_bytes", Value: (100 + 0.25*float64(p.rate)) * resultstest.MiB}},
				"perflab": {{Metric: "cpu_cores", Value: 0.1}, {Metric: "cores_available", Value: 2}}}))
		}
		resultstest.Must(t, store.EndWorkload(w, results.WorkloadEnd{Start: start, LoadEnd: end, End: end, Scheduled: uint64(36 * p.rate),
			WindowStart: start, WindowEnd: end, WindowRule: "whole load"}))
		resultstest.Must(t, store.EndPhase(results.Phase{Profile: p.name, LoadEnd: end, WindowStart: start, WindowEnd: end,
			WindowRule: "whole load", State: "completed"}))
	}
	resultstest.Must(t, store.EndCell(0, "completed", "", resultstest.T0.Add(3*time.Minute)))
	resultstest.Must(t, store.Finish(results.Status{State: "completed"}))
	return store.Dir()
}

func mainOut(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestSize(t *testing.T) {
	dir := writeSizingStore(t, t.TempDir())
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		// s: 0.2 cores × 1.25 = 250m, limit 375 → 380m; 125 MiB × 1.25 = 156.25 → 160Mi, limit 240 → 256Mi.
		{"default", nil, []string{"Strategy `p99`", "here headroom 25 %, limit factor 1.5",
			"| s | get 100/s (97.7 KiB/s sent) | app | 160Mi | 256Mi | 250m | 380m |", "```yaml\napp:\n  resources:\n"}},
		// s with 50 % and 2: 0.3 → 300m, limit 600m; 187.5 MiB → 192Mi, limit 384Mi.
		{"settings", []string{"--headroom", "50%", "--limit-factor", "2"}, []string{"| s | get 100/s (97.7 KiB/s sent) | app | 192Mi | 384Mi | 300m | 600m |"}},
		// krr: CPU request P95 = 0.2 → 200m, no limit; memory Max × 1.15 = 143.75 → 160Mi for both.
		{"krr", []string{"--strategy", "krr"}, []string{"Strategy `krr`", "| s | get 100/s (97.7 KiB/s sent) | app | 160Mi | 160Mi | 200m | none |"}},
		// vpa: every sample of a profile is the same, so P50 = P90 = P95 and each bound is the target:
		// CPU 0.2 × 1.15 = 0.23 → 230m, limit 345 → 350m; memory 125 MiB × 1.15 = 143.75 → 160Mi, limit 240 → 256Mi.
		{"vpa", []string{"--strategy", "vpa"}, []string{"Strategy `vpa`", "| s | get 100/s (97.7 KiB/s sent) | app | 160Mi | 256Mi | 230m | 350m |",
			"| Size | Component | Memory lower bound | Memory target | Memory upper bound | CPU lower bound | CPU target | CPU upper bound |",
			"| s | app | 160Mi | 160Mi | 160Mi | 230m | 230m | 230m |"}},
		// At 800/s: app CPU 0.9 cores → 1150m ("1.15"), limit 1750m ("1.75"); memory 300 MiB → 384Mi (64Mi steps), limit 576Mi.
		{"at rate", []string{"--at", "800/s"}, []string{"## Prediction at 800/s (cell `default`)", "**Extrapolation:**",
			"| app | CPU | 0.90 cores |", "| 1.15 | 1.75 | linear (R² 1.00) |", "| app | memory | 300 MiB |", "| 384Mi | 576Mi |",
			"```yaml\napp:\n  resources:\n    requests:\n      cpu: \"1.15\"\n      memory: 384Mi\n"}},
		// 200 KB/s sent at the 1000 B of each request is 200/s, profile m:
		// no extrapolation; CPU 0.3 cores, from the fits against requests/s.
		{"at bytes", []string{"--at", "200KB/s"}, []string{"## Prediction at 200/s", "requests/s of workload `get`",
			"**Load converted:** 195 KiB/s is 200 requests/s of workload get: the fits follow its requests/s, and its requests moved 1000 B each on average (sent and received) over the 3 profiles measured.",
			"| app | CPU | 0.30 cores |"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := mainOut(append([]string{"size", dir}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q", w)
				}
			}
			if strings.Contains(out, "Extrapolation") && tt.name == "at bytes" {
				t.Error("a load inside the fitted range is called an extrapolation")
			}
			if t.Failed() {
				t.Log(out)
			}
		})
	}
}

// TestSizeAtInTheFitsUnit: where the requests differ in size between
// profiles (1000 B, 10 kB, 100 kB), the fits follow bytes/s; --at with a
// byte rate predicts from them, and --at with a rate is refused (exit 2)
// naming the unit to give, rather than fitted again against requests/s.
func TestSizeAtInTheFitsUnit(t *testing.T) {
	dir := writeStoreOf(t, t.TempDir(), 1, 1, [3]int{1000, 10000, 100000})
	code, out, errs := mainOut("size", dir, "--at", "20MB/s")
	if code != 0 || !strings.Contains(out, "## Prediction at 19.1 MiB/s (cell `default`)") ||
		!strings.Contains(out, "against the bytes/s of workload `get`") || strings.Contains(out, "Load converted") {
		t.Errorf("--at 20MB/s: exit %d: %s\n%s", code, errs, out)
	}
	code, out, errs = mainOut("size", dir, "--at", "5000/s")
	if code != ExitUsage || out != "" || !strings.Contains(errs, "cannot predict at 5000/s: the scaling fits follow the bytes/s of workload get, not its requests/s") ||
		!strings.Contains(errs, "give the load as a byte rate, e.g. 38.1MiB/s") {
		t.Errorf("--at 5000/s: exit %d: %s\n%s", code, errs, out)
	}
}

func TestSizeRefusesBadFlags(t *testing.T) {
	code, _, errs := mainOut("size", "--strategy", "p95", "--headroom", "lots", "--limit-factor", "0.5", "--at", "fast")
	if code != ExitUsage {
		t.Fatalf("exit %d, want %d", code, ExitUsage)
	}
	for _, w := range []string{`--strategy: cannot find sizing strategy "p95": known strategies are krr, p99, vpa`,
		`--headroom: "lots"`, "limit factor 0.5: want 1 or more", `--at: "fast"`, "needs one run directory, got 0"} {
		if !strings.Contains(errs, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errs)
		}
	}
	// A run whose cells have one profile each has nothing to predict from.
	code, _, errs = mainOut("size", resultstest.WritePlanRun(t, t.TempDir()), "--at", "100/s")
	if code != ExitFailed || !strings.Contains(errs, "no cell of the run has scaling fits") || !strings.Contains(errs, "hint: a fit needs two or more profiles") {
		t.Errorf("exit %d: %s", code, errs)
	}
}

// TestWriteFilesWritesSizes: the run directory holds a YAML file per
// suggested size.
func TestWriteFilesWritesSizes(t *testing.T) {
	store, err := results.Open(writeSizingStore(t, t.TempDir()))
	resultstest.Must(t, err)
	defer store.Close()
	r, err := readback.Load(store)
	resultstest.Must(t, err)
	_, err = report.WriteFiles(store.Dir(), r)
	resultstest.Must(t, err)
	for _, name := range []string{"s", "m", "l"} {
		b, err := os.ReadFile(store.Path("sizes/default-" + name + ".yaml"))
		if err != nil || !strings.Contains(string(b), "app:\n  resources:\n") {
			t.Errorf("sizes/default-%s.yaml: %v\n%s", name, err, b)
		}
	}
	md, err := os.ReadFile(store.Path("report.md"))
	resultstest.Must(t, err)
	if !strings.Contains(string(md), "## Scaling") || !strings.Contains(string(md), "The run directory holds this size as `sizes/default-l.yaml`") {
		t.Errorf("report.md lacks the sizes and scaling:\n%s", md)
	}
}

// TestReportOfADamagedStore (issue 16, item 16): a run directory whose
// results.db is damaged is said to be so, exit 1; not told to give the
// directory perflab printed, which is what was given.
func TestReportOfADamagedStore(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, results.DBName), bytes.Repeat([]byte("not sqlite "), 100), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := mainOut("report", dir)
	if code != ExitFailed || !strings.Contains(errs, "cannot be read as a run store") || strings.Contains(errs, "printed as 'run directory'") {
		t.Errorf("exit %d, want %d with a hint about the damaged store:\n%s", code, ExitFailed, errs)
	}
	code, _, errs = mainOut("report", t.TempDir())
	if code != ExitUsage || !strings.Contains(errs, "printed as 'run directory'") {
		t.Errorf("an empty directory: exit %d, want %d:\n%s", code, ExitUsage, errs)
	}
}

// TestSizeLeavesUnsustainedOut: a profile the system did not hold (xl:
// 500 of the 800/s asked, app's CPU pegged at l's 0.5 cores) is marked in
// the sizes, and --at predicts from the three profiles it held: app's CPU
// at 600/s is 0.1 + 0.001 × 600 = 0.70 cores (from all four, 0.62),
// saying the load is beyond the capacity measured. With only one profile
// held there is no fit, and the refusal says why.
func TestSizeLeavesUnsustainedOut(t *testing.T) {
	ms := time.Millisecond
	profiles := []resultstest.Profile{
		{Name: "s", Target: 100, Achieved: 100, Latency: 2 * ms, AppCPU: 0.2, GenCPU: 0.1},
		{Name: "m", Target: 200, Achieved: 200, Latency: 2 * ms, AppCPU: 0.3, GenCPU: 0.1},
		{Name: "l", Target: 400, Achieved: 400, Latency: 2 * ms, AppCPU: 0.5, GenCPU: 0.1},
		{Name: "xl", Target: 800, Achieved: 500, Latency: 2 * ms, AppCPU: 0.5, GenCPU: 0.1},
	}
	dir := resultstest.WriteProfiles(t, t.TempDir(), profiles)
	code, out, errs := mainOut("size", dir)
	if code != 0 || !strings.Contains(out, "| xl (unsustained) | get 500/s | app |") || !strings.Contains(out, "| l | get 400/s | app |") ||
		!strings.Contains(out, "size xl is unsustained: the system did not hold its load: workload get achieved 500/s of the 800/s asked (37.5 % short)") {
		t.Errorf("size: exit %d: %s\n%s", code, errs, out)
	}
	code, out, errs = mainOut("size", dir, "--at", "600/s")
	for _, want := range []string{"over 3 profiles (100/s to 400/s)", "**Left out of the fits:** `xl` (unsustained)",
		"**Beyond the capacity measured:** the system did not hold the load of profile `xl`, of which it achieved 500/s", "| app | CPU | 0.70 cores |"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("--at 600/s: exit %d, output lacks %q: %s\n%s", code, want, errs, out)
		}
	}
	code, out, _ = mainOut("size", dir, "--at", "300/s")
	if code != 0 || strings.Contains(out, "Beyond the capacity") || !strings.Contains(out, "| app | CPU | 0.40 cores |") {
		t.Errorf("--at 300/s: exit %d:\n%s", code, out)
	}
	for i := range profiles[1:] {
		profiles[i+1].Achieved = profiles[i+1].Target / 2
	}
	dir = resultstest.WriteProfiles(t, t.TempDir(), profiles)
	code, out, errs = mainOut("size", dir, "--at", "600/s")
	if code != ExitFailed || out != "" || !strings.Contains(errs, "no cell of the run has scaling fits: profile m is left out of the scaling fits: the system did not hold its load (unsustained): its capacity was reached below that load (workload get achieved 100/s of the 200/s asked") {
		t.Errorf("one profile held: exit %d: %s\n%s", code, errs, out)
	}
}

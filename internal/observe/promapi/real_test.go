package promapi

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/builtin"
	"github.com/perflab/perflab/internal/observe"
	"github.com/perflab/perflab/internal/observe/proc"
	"github.com/perflab/perflab/internal/testutil"
)

// childEnv makes the test binary serve perflab's built-in HTTP target;
// childArg is on its command line, for process-exporter to find it by.
// It names the test process: process-exporter matches every process on
// the machine, and a target child of the same package's tests in another
// line of make test (the race detector's) added its memory to this one's.
const childEnv = "PERFLAB_PROMAPI_TEST_CHILD"

var childArg = fmt.Sprintf("perflab-target-child-of-%d", os.Getpid())

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "target" {
		serveTarget()
		return
	}
	os.Exit(m.Run())
}

// serveTarget serves the built-in target, each request burning 2 ms of
// CPU, on a loopback port it prints, until its stdin is closed.
func serveTarget() {
	ln, err := builtin.ListenLoopback("127.0.0.1:0")
	if err != nil {
		fmt.Println("error", err)
		return
	}
	fmt.Println("listening", ln.Addr())
	ctx, stop := context.WithCancel(context.Background())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	_ = builtin.Serve(ctx, ln, builtin.NewHTTP(builtin.HTTPConfig{CPUWork: 2 * time.Millisecond}, time.Now))
}

// startTarget runs serveTarget in a child and returns its address and pid.
func startTarget(t *testing.T) (addr string, pid int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], childArg)
	cmd.Env = append(os.Environ(), childEnv+"=target")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if !ok {
		t.Fatalf("the target child said %q", line)
	}
	return addr, cmd.Process.Pid
}

// TestAgreesWithProcSampling has a real Prometheus scrape the built-in
// target, Debian's process-exporter (watching the target and nginx) and
// nginx-exporter at 1 s while both serve load, samples the same processes
// through /proc as perflab does locally, and checks that the figures read
// back from Prometheus agree: CPU within 10 %, memory within 5 %.
func TestAgreesWithProcSampling(t *testing.T) {
	targetAddr, targetPID := startTarget(t)
	nginx := testutil.StartNginxWithStatus(t)
	nginxExp := testutil.StartNginxExporter(t, nginx.URL+"/stub_status")
	procExp := testutil.StartProcessExporter(t, fmt.Sprintf("process_names:\n  - name: target\n    cmdline: [%q]\n  - name: nginx\n    cmdline: [%q]\n",
		childArg+"$", "nginx: master process.*"+regexp.QuoteMeta(nginx.Dir)))
	hostPort := func(u string) string { return strings.TrimPrefix(u, "http://") }
	promURL := testutil.StartPrometheusScraping(t, testutil.PrometheusConfig(time.Second,
		testutil.ScrapeJob{Name: "target", Targets: []string{targetAddr}},
		testutil.ScrapeJob{Name: "process-exporter", Targets: []string{hostPort(procExp.URL)}},
		testutil.ScrapeJob{Name: "nginx-exporter", Targets: []string{hostPort(nginxExp.URL)}}))
	self := realSource(t, Config{Name: "target", URL: promURL, Preset: "self", Selector: Selector{Instance: regexp.QuoteMeta(targetAddr)}})
	procs := realSource(t, Config{Name: "pe", URL: promURL, Preset: "process-exporter", Selector: Selector{GroupName: "(target|nginx)"}})
	requests := realSource(t, Config{Name: "nginx", URL: promURL,
		Queries: map[string]string{"metric:requests_per_s": "sum(rate(nginx_http_requests_total[4s]))"}})
	waitFor(t, promURL, `count(up == 1) == 3 and on() count(namedprocess_namegroup_num_procs{groupname=~"target|nginx"} > 0) == 2`)

	local := sampleLocally(t, map[string]int{"target": targetPID, "nginx": nginx.PID})
	start := time.Now()
	served := load(map[string]int{"http://" + targetAddr + "/": 200, nginx.URL + "/": 2000}, 16*time.Second)
	from, to := start.Add(5*time.Second), start.Add(15*time.Second)
	localSeries := local.stop()
	waitFor(t, promURL, fmt.Sprintf("min(timestamp(up)) > %d", to.Add(2*time.Second).Unix()))

	for _, c := range []struct {
		src                   *Source
		comp, cpu, mem, local string
	}{
		{self, "target", observe.ProcessCPUCores, observe.ProcessRSSBytes, "target"},
		{procs, "pe-target", observe.CPUCores, observe.RSSBytes, "target"},
		{procs, "pe-nginx", observe.CPUCores, observe.RSSBytes, "nginx"},
	} {
		res, err := c.src.Query(context.Background(), from, to)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Warnings) > 0 {
			t.Errorf("%s: warnings %q", c.comp, res.Warnings)
		}
		agree(t, c.comp+" CPU", avgIn(res.Series[c.comp][c.cpu], from, to), avgOf(localSeries[c.local][observe.CPUCores], from, to), 0.10)
		agree(t, c.comp+" memory", avgIn(res.Series[c.comp][c.mem], from, to), avgOf(localSeries[c.local][observe.RSSBytes], from, to), 0.05)
	}
	res, err := requests.Query(context.Background(), from, to)
	if err != nil {
		t.Fatal(err)
	}
	agree(t, "nginx requests/s", avgIn(res.Series["nginx"]["metric:requests_per_s"], from, to), served.rate(nginx.URL+"/", from, to), 0.10)
}

func realSource(t *testing.T, cfg Config) *Source {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if note := s.Resolve(context.Background()); s.Step() != time.Second {
		t.Fatalf("step %v (%s), want the scrape interval, 1s", s.Step(), note)
	}
	return s
}

// agree checks that got is within tol (relative) of want, and logs both.
func agree(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	diff := (got - want) / want
	t.Logf("%-16s from Prometheus %.4g, measured here %.4g: %+.2f %%", what, got, want, 100*diff)
	if want <= 0 || math.IsNaN(diff) || math.Abs(diff) > tol {
		t.Errorf("%s: %.4g from Prometheus, %.4g measured here: off by more than %.0f %%", what, got, want, 100*tol)
	}
}

func avgIn(pts []Point, from, to time.Time) float64 {
	var vs []float64
	for _, p := range inWindow(pts, from, to) {
		vs = append(vs, p.V)
	}
	return analysis.StatOf(vs).Avg
}

func avgOf(pts []analysis.Point, from, to time.Time) float64 {
	var vs []float64
	for _, p := range pts {
		if !p.T.Before(from) && !p.T.After(to) {
			vs = append(vs, p.V)
		}
	}
	return analysis.StatOf(vs).Avg
}

// waitFor polls Prometheus until the PromQL condition returns a value:
// the targets are up, or it has scraped past a time.
func waitFor(t *testing.T, promURL, cond string) {
	t.Helper()
	s, err := New(Config{Name: "wait", URL: promURL, Queries: map[string]string{"metric:x": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		vec, err := s.instant(context.Background(), query{metric: "wait"}, cond, time.Now())
		if err == nil && len(vec) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus never answered %s: %v", cond, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// localSampling samples processes through /proc as perflab does for a
// local component: its process tree every second.
type localSampling struct {
	mu     sync.Mutex
	series map[string]map[string][]analysis.Point
	cancel context.CancelFunc
	done   chan struct{}
}

func sampleLocally(t *testing.T, pids map[string]int) *localSampling {
	t.Helper()
	ls := &localSampling{series: map[string]map[string][]analysis.Point{}, done: make(chan struct{})}
	comps := map[string][]observe.Source{}
	for name, pid := range pids {
		src, err := proc.New("", pid)
		if err != nil {
			t.Fatal(err)
		}
		comps[name] = []observe.Source{src}
		ls.series[name] = map[string][]analysis.Point{}
	}
	s := &observe.Sampler{Interval: time.Second, Components: comps, Sink: func(at time.Time, points map[string][]observe.Point) {
		ls.mu.Lock()
		defer ls.mu.Unlock()
		for name, ps := range points {
			for _, p := range ps {
				ls.series[name][p.Metric] = append(ls.series[name][p.Metric], analysis.Point{T: at, V: p.Value})
			}
		}
	}}
	ctx, cancel := context.WithCancel(context.Background())
	ls.cancel = cancel
	go func() {
		defer close(ls.done)
		_ = s.Run(ctx)
	}()
	return ls
}

func (ls *localSampling) stop() map[string]map[string][]analysis.Point {
	ls.cancel()
	<-ls.done
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.series
}

// served is when each request to each URL completed.
type served struct {
	mu   sync.Mutex
	done map[string][]time.Time
}

func (s *served) rate(u string, from, to time.Time) float64 {
	n := 0
	for _, t := range s.done[u] {
		if !t.Before(from) && !t.After(to) {
			n++
		}
	}
	return float64(n) / to.Sub(from).Seconds()
}

// load sends requests to each URL at its rate per second for d, on 16
// connections each: a bounded load, on loopback only.
func load(rates map[string]int, d time.Duration) *served {
	out := &served{done: map[string][]time.Time{}}
	var wg sync.WaitGroup
	for u, perS := range rates {
		wg.Go(func() { loadOne(u, perS, d, out) })
	}
	wg.Wait()
	return out
}

func loadOne(u string, perS int, d time.Duration, out *served) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}, Timeout: 5 * time.Second}
	arrivals := make(chan struct{}, perS)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range arrivals {
				resp, err := client.Get(u)
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				out.mu.Lock()
				out.done[u] = append(out.done[u], time.Now())
				out.mu.Unlock()
			}
		})
	}
	start, n := time.Now(), int(d.Seconds())*perS
	for i := range n {
		time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(perS))))
		select {
		case arrivals <- struct{}{}:
		default: // every connection busy and the queue full: dropped, the load stays bounded
		}
	}
	close(arrivals)
	wg.Wait()
}

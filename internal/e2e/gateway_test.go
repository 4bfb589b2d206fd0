//go:build linux

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/testutil"
)

// gatewaySummary is summary.json's gateway_overhead, as the tests read it.
type gatewaySummary struct {
	Gateway []struct {
		Workload  string `json:"workload"`
		Component string `json:"component"`
		Intervals int    `json:"intervals"`
		Direct    side   `json:"direct"`
		Through   side   `json:"gateway"`
		Added     []struct {
			Quantile    float64  `json:"quantile"`
			Value       float64  `json:"value"`
			Low         *float64 `json:"low"`
			High        *float64 `json:"high"`
			Significant bool     `json:"significant"`
		} `json:"added_latency_ms"`
		CPU      *stat    `json:"gateway_cpu_cores"`
		Memory   *stat    `json:"gateway_memory_bytes"`
		Warnings []string `json:"warnings"`
	} `json:"gateway_overhead"`
}

type side struct {
	Requests          int64   `json:"requests"`
	SuccessRate       float64 `json:"success_rate"`
	MeanRequestBytes  float64 `json:"mean_request_bytes"`
	MeanResponseBytes float64 `json:"mean_response_bytes"`
}

// gatewayProfile is an 8 s profile of the given workloads, its results
// in intervals of 250 ms: 31 in the window, so a busy machine that trims
// one or two still leaves the 21 the bootstrap's 5 batches need.
const gatewayProfile = `
result_interval: 250ms
sample_interval: 250ms
profiles:
  - name: load
    duration: 8s
    workloads:
`

// gatewayWindow is how long gatewayProfile's window lasts: its load less
// its first interval.
const gatewayWindow = 7.75

// requestsOf is that share of the requests a rate (per second) sends over a
// window (seconds).
func requestsOf(of, rate, window float64) int64 { return int64(of * rate * window) }

// gatewayWorkload is an http workload at 200 requests/s, half each way.
func gatewayWorkload(name, params string) string {
	return fmt.Sprintf(`      - name: %s
        driver: http
        rate: 200/s
        params:
%s`, name, params)
}

// runGateway runs a gateway plan and returns its overhead figures (one
// per workload), report.md and the run directory. A component that was
// not ready in its time is judged against what the machine gave: beside
// 16 CPU hogs LiteLLM did not start in 90 s.
func runGateway(t *testing.T, machine *testutil.Machine, plan string, workloads int, env ...string) (gatewaySummary, string, string) {
	t.Helper()
	r := runEnv(t, env, "run", writePlan(t, plan), "--out", t.TempDir())
	if r.code != 0 {
		machine.Check(t, !strings.Contains(r.stderr, "to become ready: not ready after"), testutil.Need{}, "exit %d\n%s", r.code, r.stderr)
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	s, md, dir := readRunAs[gatewaySummary](t, r)
	if len(s.Gateway) != workloads {
		t.Fatalf("gateway_overhead: %+v\n%s", s, md)
	}
	for _, g := range s.Gateway {
		if len(g.Added) != 3 || g.Added[0].Low == nil {
			t.Fatalf("%s: added latency %+v, warnings %q", g.Workload, g.Added, g.Warnings)
		}
		t.Logf("%s: overhead p50 %.3f ms [%.3f, %.3f], p90 %.3f ms, p99 %.3f ms; gateway CPU max %.3f cores, memory max %.1f MiB",
			g.Workload, g.Added[0].Value, *g.Added[0].Low, *g.Added[0].High, g.Added[1].Value, g.Added[2].Value,
			maxOf(g.CPU), maxOf(g.Memory)/(1<<20))
	}
	return s, md, dir
}

func maxOf(s *stat) float64 {
	if s == nil {
		return -1
	}
	return s.Max
}

// builtinGateway is a component running the built-in gateway on port in
// front of upstream, adding delay. It runs at a higher priority (nice -10,
// where allowed; nice goes on at the same one where not): beside CPU hogs
// a gateway at the hogs' priority woke late from its delay, up to 0.7 ms,
// and the delay the test knows was not the delay it measured.
func builtinGateway(name string, port, upstream int, delay string) string {
	return fmt.Sprintf(`  - name: %[1]s
    group: gateway
    run:
      command: nice
      args: [-n, "-10", "{{perflab}}", target, gateway, --addr, "127.0.0.1:%[2]d", --upstream, "http://127.0.0.1:%[3]d", --delay, %[4]s]
      ready: {http: "http://127.0.0.1:%[2]d/health", timeout: 10s}
    metrics: http://127.0.0.1:%[2]d/metrics
`, name, port, upstream, delay)
}

// The built-in gateway adding 2 ms in front of the built-in target (5 ms),
// and the same gateway adding nothing, in one run: the delay alone (the
// delayed gateway's overhead above the undelayed one's) is measured at
// 2 ms ± 0.3 ms, the undelayed gateway's overhead (one loopback hop
// through a proxy: 0.2–0.34 ms seen, as through nginx) is above 0 and at
// most 0.5 ms, and the delayed gateway's, significant, is the sum of the
// two (2.08–2.32 ms seen). It runs alone, not in parallel: beside other
// tests' load even the undelayed gateway added 0.7 ms; and its figures are
// judged against what the machine gave (testutil.Measure): beside four
// CPU hogs the delay measured 2.7 ms.
func TestGatewayOverheadBuiltin(t *testing.T) {
	up, plain, delayed := testutil.FreePort(t), testutil.FreePort(t), testutil.FreePort(t)
	params := func(gw int, component string) string {
		return fmt.Sprintf(`          url: "http://127.0.0.1:%d/"
          method: POST
          body: "hello"
          gateway: {url: "http://127.0.0.1:%d/", component: %s}
`, up, gw, component)
	}
	plan := fmt.Sprintf(`name: gateway-builtin
components:
  - name: upstream
    run:
      command: "{{perflab}}"
      args: [target, http, --addr, "127.0.0.1:%[1]d", --latency, 5ms, --size, 1KiB]
      ready: {http: "http://127.0.0.1:%[1]d/health", timeout: 10s}
`, up) + builtinGateway("gw0", plain, up, "0s") + builtinGateway("gw2", delayed, up, "2ms") + gatewayProfile +
		gatewayWorkload("plain", params(plain, "gw0")) + gatewayWorkload("delayed", params(delayed, "gw2"))
	machine := testutil.Measure(t)
	s, md, _ := runGateway(t, machine, plan, 2)
	p0, p2 := s.Gateway[0].Added[0], s.Gateway[1].Added[0]
	var missed []string
	if d := p2.Value - p0.Value; d < 1.7 || d > 2.3 {
		missed = append(missed, fmt.Sprintf("the 2 ms delay measured %.3f ms (%.3f − %.3f ms at p50), want 2 ± 0.3 ms", d, p2.Value, p0.Value))
	}
	if !p2.Significant || p2.Value < 1.7 || p2.Value > 2.3+0.5 || p0.Value <= 0 || p0.Value > 0.5 {
		missed = append(missed, fmt.Sprintf("p50 overheads %.3f ms [%.3f, %.3f] with the delay, want 2 ± 0.3 ms and a hop of at most 0.5; %.3f ms without, want (0, 0.5]",
			p2.Value, *p2.Low, *p2.High, p0.Value))
	}
	g := s.Gateway[1]
	if g.Component != "gw2" || g.CPU == nil || g.Memory == nil || g.Memory.Max < 1<<20 {
		t.Errorf("gateway component %q: CPU %+v, memory %+v", g.Component, g.CPU, g.Memory)
	}
	d, v := g.Direct, g.Through
	if d.SuccessRate != 1 || v.SuccessRate != 1 || d.MeanRequestBytes != 5 || v.MeanResponseBytes != 1024 ||
		v.Requests < d.Requests-2 || v.Requests > d.Requests+2 {
		t.Errorf("sides %+v and %+v", d, v)
	}
	if want := requestsOf(0.9, 100, gatewayWindow); d.Requests < want {
		missed = append(missed, fmt.Sprintf("%d requests each way, want %d or more", d.Requests, want))
	}
	for _, want := range []string{"## Gateway overhead", "**Gateway overhead at p50: +", "| Peak memory of `gw2` |", "direct; POST http://127.0.0.1:"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	machine.Check(t, len(missed) == 0, testutil.Need{}, "%s", strings.Join(missed, "\n"))
}

// nginx in front of the mock provider: its overhead is positive, below
// 2 ms, and the same in two runs (their intervals overlap, or miss each
// other by less than the machine's run-to-run variation). It runs alone,
// not in parallel: other tests starting and ending between its two runs
// would move its overhead from one run to the other, as other work on the
// machine does (beside four CPU hogs one run's overhead was 1.16 ms, the
// other's 0.10 ms): its figures are judged against what the machine gave
// (testutil.Measure).
func TestGatewayOverheadNginx(t *testing.T) {
	llm := testutil.FreePort(t)
	proxy := testutil.NewNginxProxy(t, fmt.Sprintf("http://127.0.0.1:%d", llm))
	args, _ := json.Marshal(proxy.Args)
	plan := fmt.Sprintf(`name: gateway-nginx
components:
  - name: provider
    run:
      command: "{{perflab}}"
      args: [target, llm, --addr, "127.0.0.1:%[1]d", --latency, 5ms, --tokens, "32"]
      ready: {http: "http://127.0.0.1:%[1]d/health", timeout: 10s}
  - name: nginx
    run:
      command: %[2]s
      args: %[3]s
      ready: {tcp: "127.0.0.1:%[4]d", timeout: 10s}
`, llm, proxy.Bin, args, proxy.Port) + gatewayProfile + gatewayWorkload("chat", fmt.Sprintf(`          url: "http://127.0.0.1:%d/v1/chat/completions"
          method: POST
          headers: {Content-Type: application/json}
          body: '{"model":"perflab-mock","messages":[{"role":"user","content":"How much does the gateway add?"}]}'
          gateway: {url: "http://127.0.0.1:%d/v1/chat/completions", component: nginx}
`, llm, proxy.Port))
	var lows, highs []float64
	var missed []string
	machine := testutil.Measure(t)
	for i := range 2 {
		s, _, _ := runGateway(t, machine, plan, 1)
		g := s.Gateway[0]
		p50 := g.Added[0]
		if g.Direct.SuccessRate != 1 || g.Through.SuccessRate != 1 || g.Memory == nil {
			t.Errorf("run %d: success %v and %v, memory %+v", i+1, g.Direct.SuccessRate, g.Through.SuccessRate, g.Memory)
		}
		if !p50.Significant || p50.Value <= 0 || *p50.High >= 2 {
			missed = append(missed, fmt.Sprintf("run %d: p50 overhead %.3f ms [%.3f, %.3f]; want positive, below 2 ms", i+1, p50.Value, *p50.Low, *p50.High))
		}
		lows, highs = append(lows, *p50.Low), append(highs, *p50.High)
	}
	// An interval covers the variation within its run only. On a shared
	// 2-core machine nginx's overhead also moves from run to run, between
	// about 0.15 and 0.21 ms at p50 (seen in 2 of 4 pairs of runs): two
	// intervals that miss each other by less than that still agree.
	if gap := max(lows[0]-highs[1], lows[1]-highs[0]); gap > 0.1 {
		missed = append(missed, fmt.Sprintf("the two runs' intervals [%.3f, %.3f] and [%.3f, %.3f] are %.3f ms apart", lows[0], highs[0], lows[1], highs[1], gap))
	} else if gap > 0 {
		t.Logf("the two runs' intervals [%.3f, %.3f] and [%.3f, %.3f] are %.3f ms apart: run-to-run variation the intervals do not see",
			lows[0], highs[0], lows[1], highs[1], gap)
	}
	machine.Check(t, len(missed) == 0, testutil.Need{}, "%s", strings.Join(missed, "\n"))
}

// LiteLLM's proxy, a real LLM gateway in Python, in front of the mock
// provider, both started by the plan: its overhead is positive and
// significant, every request succeeds both ways, its CPU and memory are
// observed, and its master key (read from the environment by the plan)
// appears nowhere in the run directory.
//
// It runs alone, not in parallel. LiteLLM is Python: at 30 requests/s it
// needs about a quarter of a core, and among the other e2e tests (8 at a
// time on 2 cores) it got less: one request of 374 failed and the overhead
// was 583 ms at p50, where alone it is about 15 ms. Asking only for what
// LiteLLM could give at that moment would measure its neighbours, not
// LiteLLM. Alone, what the machine's other work takes from it is judged
// (testutil.Measure): a request through LiteLLM that failed, fewer
// requests than the rate, or a LiteLLM not ready in 90 s, on a machine too
// busy for them, is a skip.
func TestGatewayOverheadLiteLLM(t *testing.T) {
	plan, proxy := litellmPlan(t, "gateway-litellm", `"64"`, 30, `prompts: ["How much does the gateway add?"]`)
	machine := testutil.Measure(t)
	s, md, dir := runGateway(t, machine, plan, 1, proxy.KeyEnv+"="+proxy.Key)
	g := s.Gateway[0]
	p50 := g.Added[0]
	if g.Direct.SuccessRate != 1 {
		t.Errorf("direct side %+v: want every request answered", g.Direct)
	}
	want := requestsOf(0.8, 15, litellmWindow) // 30/s, half each way
	timely := p50.Significant && p50.Value > 0 && g.Through.SuccessRate == 1 && g.Direct.Requests >= want && g.Through.Requests >= want
	overhead := fmt.Sprintf("p50 overhead %.3f ms [%.3f, %.3f], sides %+v and %+v; want a positive overhead and every request answered",
		p50.Value, *p50.Low, *p50.High, g.Direct, g.Through)
	if g.Component != "litellm" || g.CPU == nil || g.CPU.Max <= 0 || g.Memory == nil || g.Memory.Max < 50<<20 {
		t.Errorf("gateway component %q: CPU %+v, memory %+v", g.Component, g.CPU, g.Memory)
	}
	if !strings.Contains(md, "| Peak memory of `litellm` |") {
		t.Errorf("report.md lacks the gateway's peak memory")
	}
	key := proxy.Key
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(key)) {
			t.Errorf("%s holds LiteLLM's master key", p)
		}
		return err
	})
	if err != nil {
		t.Error(err)
	}
	machine.Check(t, timely, testutil.Need{}, "%s", overhead)
}

// TestGatewayOverheadLiteLLMStreams measures LiteLLM's proxy under
// streamed chat, as a chat user feels it: the report gives the time to
// first token it adds (p50 and p99, with intervals) beside the whole
// request's, and the proxy's CPU per 1,000 requests/s. What LiteLLM adds
// is its own; the test holds that both are measured, each with an
// interval where the window's data support one, and that every request was
// answered.
func TestGatewayOverheadLiteLLMStreams(t *testing.T) {
	plan, proxy := litellmPlan(t, "gateway-litellm-stream", `"32", --tokens-per-second, "400"`, 20,
		`stream: true
          prompts: ["How much does the gateway add to the first token?"]`)
	machine := testutil.Measure(t)
	r := runEnv(t, []string{proxy.KeyEnv + "=" + proxy.Key}, "run", writePlan(t, plan), "--out", t.TempDir())
	if r.code != 0 {
		machine.Check(t, !strings.Contains(r.stderr, "to become ready: not ready after"), testutil.Need{}, "exit %d\n%s", r.code, r.stderr)
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	s, md, _ := readRunAs[sweepSummary](t, r)
	if len(s.Gateway) != 1 {
		t.Fatalf("gateway_overhead %+v", s.Gateway)
	}
	g := s.Gateway[0]
	if len(g.TTFT) != 3 || g.TTFT[0].Value == nil || g.TTFT[0].Low == nil || g.Added[0].Low == nil || g.CPUPerKRPS == nil {
		t.Fatalf("TTFT overhead %+v, latency %+v, CPU per 1k/s %v: want both with an interval at p50, and the CPU", g.TTFT, g.Added, g.CPUPerKRPS)
	}
	t.Logf("LiteLLM streams: TTFT p50 %+.2f ms [%.2f, %.2f], p99 %v; latency p50 %+.2f ms [%.2f, %.2f]; %.2f cores per 1,000/s",
		*g.TTFT[0].Value, *g.TTFT[0].Low, *g.TTFT[0].High, deref(g.TTFT[2].Value), *g.Added[0].Value, *g.Added[0].Low, *g.Added[0].High, *g.CPUPerKRPS)
	if !strings.Contains(md, "; time to first token p50 ") || !strings.Contains(md, "| p99 time to first token |") {
		t.Errorf("report.md lacks the time to first token's overhead")
	}
	if g.Direct.SuccessRate != 1 || g.Through.SuccessRate != 1 {
		t.Errorf("sides %+v and %+v: want every request answered", g.Direct, g.Through)
	}
	// LiteLLM is Python: on a machine busy with other work it answers
	// fewer streams in the window (162 of 240 in 24 s beside four CPU hogs).
	want := requestsOf(0.8, 10, litellmWindow) // 20/s, half each way
	machine.Check(t, g.Direct.Requests >= want && g.Through.Requests >= want, testutil.Need{},
		"sides %+v and %+v: want about %.0f requests each way in the window", g.Direct, g.Through, 10*litellmWindow)
}

// litellmWindow is how long litellmPlan's window lasts, in seconds.
const litellmWindow = 12.5

// litellmPlan is a plan named name of the mock provider (perflab target
// llm, 20 ms before its first token, tokens its --tokens and what
// follows) behind LiteLLM's proxy, both started by the plan, and one chat
// workload at rate/s for 13 s, straight and through the proxy, with the
// extra params (YAML at the params' indent); and the proxy. Its results
// are in intervals of 500 ms: at 10 to 15 requests/s each way, a few
// requests each, and 25 in the window, more than the 21 the bootstrap
// needs.
func litellmPlan(t *testing.T, name, tokens string, rate int, params string) (string, testutil.LiteLLMProxy) {
	llm := testutil.FreePort(t)
	proxy := testutil.NewLiteLLMProxy(t, fmt.Sprintf("http://127.0.0.1:%d", llm), "perflab-mock")
	args, _ := json.Marshal(proxy.Args)
	env, _ := json.Marshal(proxy.Env)
	return fmt.Sprintf(`name: %[7]s
components:
  - name: provider
    run:
      command: "{{perflab}}"
      args: [target, llm, --addr, "127.0.0.1:%[1]d", --latency, 20ms, --tokens, %[8]s]
      ready: {http: "http://127.0.0.1:%[1]d/health", timeout: 10s}
  - name: litellm
    group: gateway
    run:
      command: %[2]s
      args: %[3]s
      env: %[4]s
      ready: {http: "http://127.0.0.1:%[5]d/health/liveliness", timeout: 90s}
result_interval: 500ms
sample_interval: 500ms
profiles:
  - name: load
    duration: 13s
    workloads:
      - name: chat
        driver: openai
        rate: %[9]d/s
        params:
          url: http://127.0.0.1:%[1]d
          model: perflab-mock
          api_key: ${%[6]s}
          %[10]s
          gateway: {url: "http://127.0.0.1:%[5]d", component: litellm}
`, llm, proxy.Bin, args, env, proxy.Port, proxy.KeyEnv, name, tokens, rate, params), proxy
}

package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/perflab/perflab/internal/plan"
	"github.com/perflab/perflab/internal/secret"
)

// llmWorkload names perflab llm's workload, and its implicit profile.
const llmWorkload = "llm"

// llmLoadFlags are the flags of perflab llm: a one-off load of an
// OpenAI-compatible API, as guidellm and AIPerf make one, through an
// implicit plan of one openai workload (as perflab http's is of one http
// workload), so that the plan's checks name the flags.
type llmLoadFlags struct {
	loadFlags
	model, endpoint, apiKeyEnv, promptsFile, goodput string
	isl, osl                                         int
	islStddev, oslStddev                             float64
	seed                                             int64
	timeout                                          time.Duration
	stream, ignoreEOS                                bool
}

func (f *llmLoadFlags) register(fs *flag.FlagSet) {
	f.loadFlags.register(fs, loadCommand{name: llmWorkload, duration: 30 * time.Second, rate: "request rate, e.g. 5/s",
		conc: "requests in flight at once", vusMax: "most requests in flight", quantum: quantumUsage,
		slo: "; LLM gates too: ttft_p99 < 500ms, itl_p99 < 50ms, goodput >= 90%"})
	fs.StringVar(&f.model, "model", "", "model to ask for (required)")
	fs.StringVar(&f.endpoint, "endpoint", "chat", "chat (/v1/chat/completions) or completions (/v1/completions)")
	fs.BoolVar(&f.stream, "stream", false, "stream the answers (server-sent events): measures the time to first token, inter-token latency and time per output token")
	fs.IntVar(&f.isl, "isl", 0, "input sequence length: synthetic prompts of about N tokens (one a common English word)")
	fs.Float64Var(&f.islStddev, "isl-stddev", 0, "spread of --isl: lengths drawn from a normal distribution")
	fs.IntVar(&f.osl, "osl", 0, "output sequence length: ask for N tokens per answer (max_tokens; 0: the server's choice)")
	fs.Float64Var(&f.oslStddev, "osl-stddev", 0, "spread of --osl: lengths drawn from a normal distribution")
	fs.BoolVar(&f.ignoreEOS, "ignore-eos", false, "also send min_tokens and ignore_eos (vLLM, SGLang) so that each answer has exactly --osl tokens")
	fs.StringVar(&f.promptsFile, "prompts-file", "", "send these prompts instead of synthetic ones: JSON lines, {\"prompt\": …} or {\"messages\": […]}")
	fs.Int64Var(&f.seed, "seed", 0, "draw the synthetic prompts and lengths with this seed (0: picked at random, told in the report)")
	fs.StringVar(&f.goodput, "goodput", "", "bounds a good request meets, e.g. ttft=200ms,itl=50ms,tpot=40ms,latency=20s (the report's goodput; gates goodput and goodput_rate)")
	fs.StringVar(&f.apiKeyEnv, "api-key-env", "", "environment variable holding the API key, sent as a bearer token (never recorded)")
	fs.DurationVar(&f.timeout, "timeout", 0, "per-request timeout, answer included (0: the driver's 2m)")
}

func (e *env) llmCmd(ctx context.Context, args []string) error {
	var f llmLoadFlags
	fs := newFlagSet("llm", e)
	f.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: perflab llm URL --model M [--rate 5/s | --concurrency 8] [--isl 200] [--osl 50] [--stream] [--duration 30s] [--goodput ttft=200ms,…] [--slo EXPR]… [--json] [--out DIR | --run-dir DIR] [--junit FILE] [--csv FILE] [--export KIND=URL]…")
		fs.PrintDefaults()
	}
	return e.runImplicit(ctx, fs, args, implicitRun{cmd: "llm", needs: "exactly one URL, the API's base (http://127.0.0.1:8000)", out: &f.out, name: &f.name,
		slo: &f.slo, jsonOut: &f.jsonOut, export: &f.export, ci: &f.ci, plan: f.checkedPlan, scrubber: f.scrubber})
}

// checkedPlan is the plan of the flags, checked as perflab run checks a
// plan file, and its built-in values; every problem is listed at once,
// each naming its flag, and nothing is started.
func (f *llmLoadFlags) checkedPlan(rawURL string, given func(string) bool) (*plan.Plan, plan.Builtins, error) {
	return checkImplicit("llm", llmWorkload, f.out, f.slo, func(bad func(string, ...any)) (*plan.Plan, error) {
		return f.plan(rawURL, given, bad)
	})
}

// plan is the implicit plan of the flags: one workload of the openai
// driver, its load model set as perflab http sets its own.
func (f *llmLoadFlags) plan(rawURL string, given func(string) bool, bad func(string, ...any)) (*plan.Plan, error) {
	return f.implicitPlan(llmWorkload, "openai", f.params(rawURL, given, bad), given, bad)
}

// params are the openai driver's params of the flags, as a plan gives
// them; the driver's own checks judge their values.
func (f *llmLoadFlags) params(rawURL string, given func(string) bool, bad func(string, ...any)) []plan.Param {
	ps := []plan.Param{{Key: "url", Value: rawURL}, {Key: "model", Value: f.model, Flag: "--model"},
		{Key: "endpoint", Value: f.endpoint, Flag: "--endpoint"}, {Key: "stream", Value: f.stream, Flag: "--stream"}}
	switch {
	case given("isl"):
		ps = append(ps, plan.Param{Key: "input_tokens", Value: lengths(f.isl, f.islStddev), Flag: "--isl"})
	case f.promptsFile == "":
		bad("--isl: give --isl N (synthetic prompts of about N tokens) or --prompts-file FILE")
		// a stand-in, so that the plan's checks of the other flags still run
		ps = append(ps, plan.Param{Key: "input_tokens", Value: lengths(1, 0), Flag: "--isl"})
	}
	if f.promptsFile != "" {
		ps = append(ps, plan.Param{Key: "prompts_file", Value: f.promptsFile, Flag: "--prompts-file"})
	}
	if given("osl") {
		ps = append(ps, plan.Param{Key: "output_tokens", Value: lengths(f.osl, f.oslStddev), Flag: "--osl"})
	}
	if f.ignoreEOS {
		ps = append(ps, plan.Param{Key: "ignore_eos", Value: true, Flag: "--ignore-eos"})
	}
	if f.seed != 0 {
		ps = append(ps, plan.Param{Key: "seed", Value: f.seed, Flag: "--seed"})
	}
	if f.goodput != "" {
		ps = append(ps, plan.Param{Key: "goodput", Value: goodputBounds(f.goodput, bad), Flag: "--goodput"})
	}
	if f.timeout != 0 {
		ps = append(ps, plan.Param{Key: "timeout", Value: f.timeout.String(), Flag: "--timeout"})
	}
	if f.apiKeyEnv != "" {
		key, ok := os.LookupEnv(f.apiKeyEnv)
		if !ok || key == "" {
			bad("--api-key-env %s: the environment variable is not set", f.apiKeyEnv)
		}
		ps = append(ps, plan.Param{Key: "api_key", Value: key, Flag: "--api-key-env"})
	}
	if h := f.header(bad); len(h) > 0 {
		ps = append(ps, plan.Param{Key: "headers", Value: h, Flag: "-H"})
	}
	return ps
}

// lengths is a token length param: a mean, and a spread when given.
func lengths(mean int, stddev float64) map[string]any {
	l := map[string]any{"mean": mean}
	if stddev != 0 {
		l["stddev"] = stddev
	}
	return l
}

// goodputBounds reads --goodput, name=duration pairs separated by commas,
// into the goodput param; the driver checks the names and durations.
func goodputBounds(s string, bad func(string, ...any)) map[string]string {
	out := map[string]string{}
	for _, pair := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || k == "" || v == "" {
			bad("--goodput %q: want name=duration pairs, e.g. ttft=200ms,itl=50ms (names: ttft, itl, tpot, latency)", s)
			return nil
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out
}

// scrubber is the run's scrubber: the API key, the values of the
// environment variables the headers read, the credential-named headers'
// literal values and the credentials in the URL.
func (f *llmLoadFlags) scrubber(rawURL string) *secret.Scrubber {
	set := secret.Set{}
	if f.apiKeyEnv != "" {
		set.Env(os.Getenv(f.apiKeyEnv), "${"+f.apiKeyEnv+"}")
	}
	for _, line := range f.headers {
		set.Header(line)
	}
	set.URL(rawURL)
	f.export.secrets(set)
	return set.Scrubber()
}

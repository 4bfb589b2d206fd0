package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perflab/perflab/internal/analysis"
	"github.com/perflab/perflab/internal/view"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; got:\n%s", name, got)
	}
}

func TestGolden(t *testing.T) {
	for name, r := range map[string]*view.Run{"plan": planRun(), "single": singleRun(), "llm": llmRun()} {
		t.Run(name, func(t *testing.T) {
			goldenRun(t, name, r)
		})
	}
}

// TestRunWithoutCells renders a Run built the way callers built it before
// cells existed: only Workloads. Its report has the old shape, one section
// per workload and no resources.
func TestRunWithoutCells(t *testing.T) {
	r := singleRun()
	r.Cells = nil
	var md bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\n## Workload `low`\n", "\n### Throughput\n", "\n## Workload `high`\n"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(md.String(), "Resources") || strings.Contains(md.String(), "Matrix") {
		t.Errorf("report of a run without cells has resources or a matrix:\n%s", md.String())
	}
	var js bytes.Buffer
	if err := JSON(&js, r); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Version int `json:"version"`
		Cells   []struct {
			Implicit bool `json:"implicit"`
			Phases   []struct {
				Workloads []string `json:"workloads"`
			} `json:"phases"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(js.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.Version != JSONVersion || len(out.Cells) != 1 || !out.Cells[0].Implicit || len(out.Cells[0].Phases) != 2 ||
		out.Cells[0].Phases[1].Workloads[0] != "high" {
		t.Errorf("summary = %+v", out)
	}
}

func TestFormatting(t *testing.T) {
	for _, tt := range []struct {
		got, want string
	}{
		{num3(0), "0"}, {num3(0.0004), "<0.001"}, {num3(0.0052), "0.0052"}, {num3(0.052), "0.052"},
		{num3(0.52), "0.52"}, {num3(1.456), "1.46"}, {num3(10.62), "10.6"}, {num3(123.4), "123"},
		{num3(0.09999), "0.10"}, {num3(0.009999), "0.010"}, {num3(9.999), "10.0"}, {num3(99.97), "100"}, {num3(-0.09999), "-0.10"},
		{sizeText(64 * mib), "64 MiB"}, {sizeText(1000 * mib), "1000 MiB"}, {sizeText(1023.4 * mib), "1023 MiB"},
		{sizeText(1024 * mib), "1 GiB"}, {sizeText(1222 * mib), "1.19 GiB"}, {sizeText(512), "512 B"},
		{p99Text(analysis.Stat{N: 9, Max: 3}, num3), "–"}, {p99Text(analysis.Stat{N: 10, P99: 3}, num3), "3.00"},
		{windowText(&analysis.Resources{Window: analysis.Window{Start: t0, End: t0.Add(time.Minute)}, Ticks: 60, Step: time.Second}),
			"17:24:00–17:25:00 UTC, 60 samples at 1s"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// Byte rates read in bytes; from 1 Gbps up also in bits, as links are rated.
func TestBytesPS(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0, "0 B/s"},
		{5.56 * (1 << 20), "5.56 MiB/s"},
		{1e9/8 - 1, "119 MiB/s"},
		{1.48 * (1 << 30), "1.48 GiB/s (12.7 Gbps)"},
	} {
		if got := bytesPS(c.v); got != c.want {
			t.Errorf("bytesPS(%g) = %q, want %q", c.v, got, c.want)
		}
	}
}

// rendered is r in every format a run is written in.
type rendered struct{ md, html, js, term string }

// render renders r as Markdown, HTML, summary.json and terminal output.
func render(t *testing.T, r *view.Run) rendered {
	t.Helper()
	var md, page, js, term bytes.Buffer
	for _, f := range []func() error{func() error { return Markdown(&md, r) }, func() error { return HTML(&page, r) },
		func() error { return JSON(&js, r) }, func() error { return Terminal(&term, r) }} {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	return rendered{md: md.String(), html: page.String(), js: js.String(), term: term.String()}
}

// goldenRun renders r as Markdown, summary.json and terminal output,
// compares each with testdata/name.{md,json,txt} and checks the JSON is
// valid; it returns the three for further checks.
func goldenRun(t *testing.T, name string, r *view.Run) (md, js, term *bytes.Buffer) {
	t.Helper()
	md, js, term = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	if err := Markdown(md, r); err != nil {
		t.Fatal(err)
	}
	if err := JSON(js, r); err != nil {
		t.Fatal(err)
	}
	if err := Terminal(term, r); err != nil {
		t.Fatal(err)
	}
	golden(t, name+".md", md.Bytes())
	golden(t, name+".json", js.Bytes())
	golden(t, name+".txt", term.Bytes())
	if !json.Valid(js.Bytes()) {
		t.Error("summary is not valid JSON")
	}
	return md, js, term
}

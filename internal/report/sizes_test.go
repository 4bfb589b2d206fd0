package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestGoldenSizes renders the sizing fixture: the cross-profile tables,
// suggested sizes with their YAML, scaling fits and observations.
func TestGoldenSizes(t *testing.T) {
	r := sizesRun()
	var md, js, term bytes.Buffer
	if err := Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := JSON(&js, r); err != nil {
		t.Fatal(err)
	}
	if err := Terminal(&term, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "sizes.md", md.Bytes())
	golden(t, "sizes.json", js.Bytes())
	golden(t, "sizes.txt", term.Bytes())
	if !json.Valid(js.Bytes()) {
		t.Error("summary is not valid JSON")
	}
	// The sections come in the order of the seed reports.
	last := -1
	for _, h := range []string{"## Test configuration", "## Resource consumption summary", "## Resource usage by component (P99)",
		"## Throughput achieved", "## Suggested sizes", "## Scaling", "## Observations"} {
		i := strings.Index(md.String(), "\n"+h+"\n")
		if i < last {
			t.Errorf("%q is missing or out of order", h)
		}
		last = i
	}
}

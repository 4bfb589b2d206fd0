package otlpdriver

import (
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/testutil"
)

// TestShapeSizesAsDocumented: the mean spans and encoded sizes of each
// named shape's traces that docs/drivers/otlp.md gives are those the
// generator makes (seed 1, as the page says), to 1 %, alone and in
// batches of 10.
func TestShapeSizesAsDocumented(t *testing.T) {
	testutil.OneGoroutine(t)
	const page = "../../../docs/drivers/otlp.md"
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	rows := shapeRows(string(b))
	for _, name := range []string{ShapeSmall, ShapeMedium, ShapeLarge, ShapeXLarge} {
		row, ok := rows[name]
		if !ok {
			t.Errorf("%s: no row for shape %s in the table of trace shapes", page, name)
			continue
		}
		p, _ := NamedShape(name)
		for col, batch := range map[string]int{"mean trace (batch 1), B": 1, "mean trace (batch 10), B": 10} {
			bytes, spans, _ := measure(p, 1, batch)
			near(t, page, name, col, row[col], bytes)
			near(t, page, name, "mean spans", row["mean spans"], spans)
		}
	}
}

// near checks a documented figure against the measured one.
func near(t *testing.T, page, shape, col, doc string, measured float64) {
	t.Helper()
	v, err := strconv.ParseFloat(doc, 64)
	if err != nil || math.Abs(v-measured) > 0.01*measured {
		t.Errorf("%s: shape %s, %s: the page says %q, the generator makes %.1f", page, shape, col, doc, measured)
	}
}

// shapeRows reads the table of trace shapes (its first column headed
// "shape", and one "mean spans"): each
// row's cells by their column's heading, by the shape's name.
func shapeRows(page string) map[string]map[string]string {
	rows := map[string]map[string]string{}
	var head []string
	for _, line := range strings.Split(page, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			if head != nil {
				return rows
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.Trim(strings.TrimSpace(cells[i]), "`")
		}
		switch {
		case head == nil && cells[0] == "shape" && slices.Contains(cells, "mean spans"):
			head = cells
		case head != nil && strings.Trim(cells[0], "-: ") != "":
			row := map[string]string{}
			for i, c := range cells {
				if i < len(head) {
					row[head[i]] = c
				}
			}
			rows[cells[0]] = row
		}
	}
	return rows
}

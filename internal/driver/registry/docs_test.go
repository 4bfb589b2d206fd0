package registry

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// docsDir holds a page per driver, docs/drivers/<name>.md.
const docsDir = "../../../docs/drivers"

// docRow is a row of a driver page's param table: the key as its first
// column writes it (top-level, or dotted for a key inside a block) and
// the words of its last column (place, secret, headers).
type docRow struct {
	key   string
	kinds []string
	line  int
}

// paramTable returns the rows of the first table of a page whose header's
// first column is "key".
func paramTable(page string) []docRow {
	var rows []docRow
	in := false
	for i, line := range strings.Split(page, "\n") {
		cells := tableCells(line)
		switch {
		case !in && len(cells) > 1 && cells[0] == "key":
			in = true
		case in && cells == nil:
			return rows
		case in && strings.Trim(cells[0], "-: ") == "":
			// the header's separator
		case in:
			var kinds []string
			for _, k := range strings.Split(cells[len(cells)-1], ",") {
				if k = strings.Trim(strings.TrimSpace(k), "`"); k != "" && k != "—" {
					kinds = append(kinds, k)
				}
			}
			slices.Sort(kinds)
			rows = append(rows, docRow{key: strings.Trim(cells[0], "`"), kinds: kinds, line: i + 1})
		}
	}
	return rows
}

// tableCells splits a Markdown table row into its trimmed cells; nil for
// a line that is not one.
func tableCells(line string) []string {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "|") {
		return nil
	}
	cells := strings.Split(strings.Trim(line, "|"), "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

// docKeys are the top-level keys a plan may give a workload of the driver
// called name, with the types they decode into: its params' yaml keys,
// and the gateway block for a driver that takes one.
func docKeys(name string) map[string]reflect.Type {
	d := drivers[name]
	keys := yamlKeys(reflect.TypeOf(d.params))
	if d.gateway {
		keys["gateway"] = reflect.TypeOf(gatewayParams{})
	}
	return keys
}

// blockType is the struct a param of type t holds keys of, unwrapping
// pointers, lists (promql's queries) and located values; nil when it
// holds none.
func blockType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct && strings.HasPrefix(t.Name(), "located[") {
		t = t.Field(0).Type
	}
	if t.Kind() != reflect.Struct || t.PkgPath() == "time" {
		return nil
	}
	return t
}

// hasKey reports whether a dotted key (search.query, custom.spans.min) is
// one a plan may give under top.
func hasKey(top map[string]reflect.Type, key string) bool {
	keys := top
	for part := range strings.SplitSeq(key, ".") {
		t, ok := keys[part]
		if !ok {
			return false
		}
		keys = nil
		if b := blockType(t); b != nil {
			keys = yamlKeys(b)
		}
	}
	return true
}

// declared are the words a driver's param table says of key, from its
// declared ParamKeys.
func declared(name, key string) []string {
	k := drivers[name].keys()
	var out []string
	for word, keys := range map[string][]string{"place": k.Place, "secret": k.Secret, "headers": k.Headers} {
		if slices.Contains(keys, key) {
			out = append(out, word)
		}
	}
	slices.Sort(out)
	return out
}

// TestEveryDriverHasAPage: every driver a plan can name has its page,
// docs/drivers/<name>.md, linked from docs/drivers/README.md, whose param
// table documents each of its top-level params, says of each whether it
// is a place, a secret or a mapping of headers as the driver declares,
// and documents no key the driver does not take; and the page shows a
// plan with a workload of the driver. A param added to a driver fails
// here, naming the key and the page, until the page has its row.
func TestEveryDriverHasAPage(t *testing.T) {
	index, err := os.ReadFile(filepath.Join(docsDir, "README.md"))
	if err != nil {
		t.Fatalf("the index of the driver pages: %v", err)
	}
	for _, name := range slices.Sorted(maps.Keys(drivers)) {
		page := "docs/drivers/" + name + ".md"
		if !strings.Contains(string(index), "("+name+".md)") {
			t.Errorf("docs/drivers/README.md does not link %s (%s.md)", page, name)
		}
		b, err := os.ReadFile(filepath.Join(docsDir, name+".md"))
		if err != nil {
			t.Errorf("driver %s has no page %s: write one with a param table (| key | type | default | meaning | place / secret |)", name, page)
			continue
		}
		checkPage(t, name, page, string(b))
	}
}

// checkPage checks the page of the driver called name.
func checkPage(t *testing.T, name, page, text string) {
	t.Helper()
	rows := paramTable(text)
	if len(rows) == 0 {
		t.Errorf("%s has no param table (a table whose first column is headed key)", page)
		return
	}
	keys := docKeys(name)
	documented := map[string]bool{}
	for _, r := range rows {
		top, _, nested := strings.Cut(r.key, ".")
		documented[top] = true
		switch {
		case !hasKey(keys, r.key):
			t.Errorf("%s:%d documents param %q, which driver %s does not take (its params: %s); remove the row or fix the key",
				page, r.line, r.key, name, strings.Join(slices.Sorted(maps.Keys(keys)), ", "))
		case !nested && !slices.Equal(r.kinds, declared(name, r.key)):
			t.Errorf("%s:%d: param %q is %q in the place / secret column, but driver %s declares it %q (ParamKeys)",
				page, r.line, r.key, strings.Join(r.kinds, ", "), name, strings.Join(declared(name, r.key), ", "))
		}
	}
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		if !documented[key] {
			t.Errorf("%s does not document param %q of driver %s: add a row | `%s` | type | default | meaning | %s | to its param table",
				page, key, name, key, strings.Join(declared(name, key), ", "))
		}
	}
	if !strings.Contains(text, "driver: "+name) {
		t.Errorf("%s shows no plan with a workload of the driver (driver: %s)", page, name)
	}
}

// TestParamTable: the rows of a page's param table, from the header to
// the first line that is not a row, and only that table.
func TestParamTable(t *testing.T) {
	page := "| shape | spans |\n|---|---|\n| `small` | 8 |\n\n" +
		"| key | type | default | meaning | place / secret |\n|---|---|---|---|---|\n" +
		"| `url` | string | — | where | place |\n| `search.query` | string | | TraceQL | |\n" +
		"| `headers` | map | | sent | headers, place |\n\n| key | x |\n|---|---|\n| `later` | y |\n"
	got := paramTable(page)
	want := []docRow{{"url", []string{"place"}, 7}, {"search.query", nil, 8}, {"headers", []string{"headers", "place"}, 9}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("paramTable = %+v, want %+v", got, want)
	}
	keys := docKeys("otlp")
	for key, want := range map[string]bool{"search.query": true, "custom.spans.min": true, "search.nope": false, "timeout.x": false, "nope": false} {
		if hasKey(keys, key) != want {
			t.Errorf("hasKey(otlp, %q) = %v, want %v", key, !want, want)
		}
	}
	if !hasKey(docKeys("promql"), "queries.expr") || hasKey(docKeys("promql"), "queries.nope") {
		t.Errorf("keys inside a list of blocks")
	}
	if !hasKey(docKeys("http"), "gateway.component") || hasKey(docKeys("otlp"), "gateway") {
		t.Errorf("the gateway block is http's and openai's only")
	}
}

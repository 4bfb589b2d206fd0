package readback

import (
	"strings"
	"testing"

	"github.com/perflab/perflab/internal/analysis"
)

func TestOverheadPairs(t *testing.T) {
	ops := func(names ...string) []analysis.Op {
		var out []analysis.Op
		for _, n := range names {
			out = append(out, analysis.Op{Name: n})
		}
		return out
	}
	for _, c := range []struct {
		ops  []analysis.Op
		want string
	}{
		{ops("direct: chat", "gateway: chat", "direct: embed", "gateway: embed"), "direct: chat|gateway: chat direct: embed|gateway: embed"},
		{ops("direct: GET /", "gateway: GET /gw/"), "direct: GET /|gateway: GET /gw/"},
		{ops("direct: a", "direct: b", "gateway: c"), ""},
		{ops("get"), ""},
	} {
		var got []string
		for _, p := range overheadPairs(c.ops) {
			got = append(got, p[0]+"|"+p[1])
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("pairs %q, want %q", got, c.want)
		}
	}
	if c, ok := storedGateway([]byte(`{"url":"x","gateway":{"url":"y","component":"gw"}}`)); !ok || c != "gw" {
		t.Errorf("storedGateway: %q, %v", c, ok)
	}
	if _, ok := storedGateway([]byte(`{"url":"x"}`)); ok {
		t.Error("storedGateway found a gateway in params without one")
	}
	comps := []analysis.Component{{Name: "a", Group: "gateway"}, {Name: "b"}}
	if groupComponent(comps, "gateway") != "a" || groupComponent(append(comps, analysis.Component{Name: "c", Group: "gateway"}), "gateway") != "" {
		t.Error("groupComponent")
	}
}

package cli

import "testing"

func TestShellJoin(t *testing.T) {
	got := shellJoin([]string{"perflab", "run", "plan.yaml", "--slo", "p99 < 200ms", "-H", "Authorization: Bearer ${T}", "", "it's"})
	want := `perflab run plan.yaml --slo 'p99 < 200ms' -H 'Authorization: Bearer ${T}' '' 'it'\''s'`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

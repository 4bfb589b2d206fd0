package secret

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"
)

// TestMaskParams: literal credentials are masked, references kept, URLs
// shown as URL shows them, other strings (not URLs) left.
func TestMaskParams(t *testing.T) {
	var params map[string]any
	if err := json.Unmarshal([]byte(`{"secret_key": "abc", "access_key": "${AK}", "headers": {"Authorization": "Bearer ${T}",
		"X-Api-Key": "literal", "X-Trace": "t"}, "url": "http://u:pw-long@h/x?token=tk-long", "query_url": "http://u:${P}@h/",
		"prompts": ["see http://[::1 broken", {"u": "https://h/?sig=s"}]}`), &params); err != nil {
		t.Fatal(err)
	}
	set := Set{}
	set.Params(params, Keys{Secret: []string{"secret_key", "access_key"}, Headers: []string{"headers"}})
	MaskParams(params, Keys{Secret: []string{"secret_key", "access_key"}, Headers: []string{"headers"}})
	want := map[string]any{"secret_key": "[redacted]", "access_key": "${AK}",
		"headers":   map[string]any{"Authorization": "Bearer ${T}", "X-Api-Key": "[redacted]", "X-Trace": "t"},
		"url":       "http://u:xxxxx@h/x?token=xxxxx",
		"query_url": "http://u:${P}@h/",
		"prompts":   []any{"see http://[::1 broken", map[string]any{"u": "https://h/?sig=xxxxx"}}}
	if !reflect.DeepEqual(params, want) {
		t.Errorf("masked %v\nwant %v", params, want)
	}
	if got := set.Scrubber().String("abc literal pw-long tk-long s"); got != "abc [redacted] [redacted] [redacted] s" {
		t.Errorf("params' scrubber: %q", got) // "abc" and "s" are too short to tell from other text
	}
}

func TestHeadersAndArgs(t *testing.T) {
	h := http.Header{"Authorization": {"Bearer x"}, "Accept": {"a", "b"}}
	if got := Headers(h); !reflect.DeepEqual(got, map[string]string{"Authorization": "[redacted]", "Accept": "a, b"}) {
		t.Errorf("Headers = %v", got)
	}
	args := []string{"perflab", "http", "-H", "Authorization: Bearer lit", "-H", "X-Api-Key: ${K}", "-H", "Referer: http://x/?a",
		"--H=Cookie: c", "--store=s3://b/x?endpoint=http://127.0.0.1:9000&secret_key=sk", "http://u:pw@127.0.0.1:1/?key=k", "--rate", "5/s"}
	want := []string{"perflab", "http", "-H", "Authorization: [redacted]", "-H", "X-Api-Key: ${K}", "-H", "Referer: http://x/?a",
		"--H=Cookie: [redacted]", "--store=s3://b/x?endpoint=http://127.0.0.1:9000&secret_key=xxxxx", "http://u:xxxxx@127.0.0.1:1/?key=xxxxx",
		"--rate", "5/s"}
	if got := Args(args); !reflect.DeepEqual(got, want) {
		t.Errorf("Args =\n%q\nwant\n%q", got, want)
	}
}

func TestArgsExport(t *testing.T) {
	args := []string{"perflab", "run", "p.yaml", "--export", "remote-write=http://u:pw@127.0.0.1:1/api/v1/write", "--export=otlp=grpc://127.0.0.1:4317",
		"--export-header", "Authorization: Bearer lit", "--export-header=X-Token: t", "-export-header", "X-Key: ${K}"}
	want := []string{"perflab", "run", "p.yaml", "--export", "remote-write=http://u:xxxxx@127.0.0.1:1/api/v1/write", "--export=otlp=grpc://127.0.0.1:4317",
		"--export-header", "Authorization: [redacted]", "--export-header=X-Token: [redacted]", "-export-header", "X-Key: ${K}"}
	if got := Args(args); !reflect.DeepEqual(got, want) {
		t.Errorf("Args =\n%q\nwant\n%q", got, want)
	}
}

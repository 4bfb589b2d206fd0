package promql

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

type parsed struct {
	status, errorType, error, resultType string
	partial                              bool
	series, points                       int64
}

// parseString parses body, read through a buffer of size bufSize and, when
// oneByte, a reader that returns one byte at a time.
func parseString(body string, bufSize int, oneByte bool) (parsed, int64, error) {
	var r = strings.NewReader(body)
	var s scanner
	if oneByte {
		s.reset(iotest.OneByteReader(r), make([]byte, bufSize))
	} else {
		s.reset(r, make([]byte, bufSize))
	}
	var a answer
	err := a.parse(&s)
	return parsed{string(a.status), string(a.errorType), string(a.error), string(a.resultType), a.partial, a.series, a.points}, s.read, err
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       parsed
	}{
		{"vector", `{"status":"success","data":{"resultType":"vector","result":[
			{"metric":{"__name__":"up","job":"a"},"value":[1700000000.123,"1"]},
			{"metric":{"__name__":"up","job":"b"},"value":[1700000000.123,"0"]}]}}`,
			parsed{status: "success", resultType: "vector", series: 2, points: 2}},
		{"matrix", `{"status":"success","data":{"resultType":"matrix","result":[
			{"metric":{},"values":[[1,"1"],[2,"2"],[3,"3"]]},{"metric":{"a":"b"},"values":[[1,"1e3"]]}]}}`,
			parsed{status: "success", resultType: "matrix", series: 2, points: 4}},
		{"native histograms", `{"status":"success","data":{"resultType":"matrix","result":[
			{"metric":{},"histograms":[[1,{"count":"2","sum":"3","buckets":[[0,"0.5","1","2"]]}],[2,{"count":"3"}]]}]}}`,
			parsed{status: "success", resultType: "matrix", series: 1, points: 2}},
		{"scalar", `{"status":"success","data":{"resultType":"scalar","result":[1700000000,"42"]}}`,
			parsed{status: "success", resultType: "scalar", points: 1}},
		{"empty", `{"status":"success","data":{"resultType":"vector","result":[]},"stats":{"seriesFetched":"0"}}`,
			parsed{status: "success", resultType: "vector"}},
		{"error", `{"status":"error","errorType":"bad_data","error":"1:5: parse error: unexpected \"}\" in label matching\n"}`,
			parsed{status: "error", errorType: "bad_data", error: "1:5: parse error: unexpected \"}\" in label matching\n"}},
		{"partial, data first, escapes, spaces", " {\n\t\"data\" : {\"result\":[{\"metric\":{\"k\\\"\":\"v\\u00e9[{\"},\"value\":[1,\"1\"]}],\"resultType\":\"vector\"} ,\"isPartial\":true, \"st\\u0061tus\":\"success\",\"warnings\":[\"w\"]}\n",
			parsed{status: "success", resultType: "vector", partial: true, series: 1, points: 1}},
		{"isPartial false, nulls", `{"status":"success","isPartial":false,"data":{"resultType":"vector","result":null},"x":[null,true,false,-1.5e-3]}`,
			parsed{status: "success", resultType: "vector"}},
		{"repeated keys: the last counts", `{"status":"error","status":"success","data":{"result":[{}],"result":[]}}`,
			parsed{status: "success"}},
	} {
		for _, buf := range []int{1, 7, 32 << 10} {
			got, read, err := parseString(tc.body, buf, buf == 7)
			if err != nil || got != tc.want || read != int64(len(tc.body)) {
				t.Errorf("%s, buffer %d: %+v, read %d, %v\nwant %+v, read %d", tc.name, buf, got, read, err, tc.want, len(tc.body))
			}
		}
	}
}

func TestParseMalformed(t *testing.T) {
	for _, body := range []string{
		``, ` `, `[]`, `"success"`, `{`, `{"status":"success"`, `{"status":"success",}`, `{"status" "success"}`,
		`{"status":"success"}x`, `{"status":"success"}{}`, `{"data":{"result":[1,]}}`, `{"data":{"result":[1 2]}}`,
		`{"status":tru}`, `{"status":truex}`, `{"a":01x}`, `{"a":"unterminated}`, "{\"a\":\"ctl\x01\"}", `{"a":{]}`,
		`<html>502 Bad Gateway</html>`, strings.Repeat("[", maxDepth+10),
	} {
		if got, _, err := parseString(body, 16, false); err == nil || !errors.Is(err, errSyntax) {
			t.Errorf("%.40q: %+v, err %v; want a syntax error", body, got, err)
		}
	}
}

// reference computes what parse should find with encoding/json.
func reference(body []byte) (parsed, bool) {
	var top map[string]any
	if json.Unmarshal(body, &top) != nil || top == nil {
		return parsed{}, false
	}
	str := func(v any) string { s, _ := v.(string); return s }
	p := parsed{status: str(top["status"]), errorType: str(top["errorType"]), error: str(top["error"])}
	p.partial, _ = top["isPartial"].(bool)
	data, _ := top["data"].(map[string]any)
	p.resultType = str(data["resultType"])
	result, _ := data["result"].([]any)
	other := 0
	for _, e := range result {
		s, ok := e.(map[string]any)
		if !ok {
			other++
			continue
		}
		p.series++
		for _, k := range []string{"value", "histogram"} {
			if _, ok := s[k].([]any); ok {
				p.points++
			}
		}
		for _, k := range []string{"values", "histograms"} {
			vs, _ := s[k].([]any)
			p.points += int64(len(vs))
		}
	}
	if p.series == 0 && other > 0 {
		p.points = 1
	}
	return p, true
}

// FuzzParse: on any valid JSON object, parse finds what encoding/json
// finds; on anything else it fails or not, but never panics or hangs.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":"b"},"value":[1,"1"]}]}}`,
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"1"],[2,"2"]]}]}}`,
		`{"status":"error","errorType":"bad_data","error":"parse error"}`,
		`{"status":"success","isPartial":true,"data":{"resultType":"scalar","result":[1,"2"]}}`,
		`{"st\u0061tus":"succ\u0065ss","data":{"result":[{"histograms":[[1,{}]],"histogram":[]}]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, _, err := parseString(string(body), 5, true)
		want, ok := reference(body)
		if !ok || !utf8.Valid(body) {
			return
		}
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		if len(want.error) > maxError || len(want.errorType) > maxErrorType || strings.Contains(string(body), `\`) {
			got.error, want.error, got.errorType, want.errorType = "", "", "", "" // cut or unescaped differently
		}
		if got != want {
			t.Fatalf("%q:\n got %+v\nwant %+v", body, got, want)
		}
	})
}

// BenchmarkParse walks a range query answer of 100 series × 240 points.
func BenchmarkParse(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"status":"success","data":{"resultType":"matrix","result":[`)
	for i := range 100 {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"metric":{"__name__":"node_cpu_seconds_total","cpu":"` + strings.Repeat("1", i%3+1) +
			`","instance":"10.0.0.1:9100","job":"node","mode":"idle"},"values":[`)
		for j := range 240 {
			if j > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(`[1700000000.5,"12345.67"]`)
		}
		sb.WriteString("]}")
	}
	sb.WriteString("]}}")
	body := sb.String()
	buf := make([]byte, readBufSize)
	var a answer
	var s scanner
	r := strings.NewReader(body)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		r.Reset(body)
		s.reset(r, buf)
		if err := a.parse(&s); err != nil || a.series != 100 || a.points != 24000 {
			b.Fatal(err, a.series, a.points)
		}
	}
}

package secret

import (
	"net/url"
	"slices"
	"testing"
)

// TestURLKeepsTheUserName: the user name stays, the password is xxxxx as
// url.URL.Redacted shows it (perflab once recorded http://%5Bredacted%5D@…,
// the user name lost).
func TestURLKeepsTheUserName(t *testing.T) {
	for _, raw := range []string{"http://u:s3cr3t@127.0.0.1:1/x", "https://user:p%40ss@mimir.example/prometheus"} {
		u, _ := url.Parse(raw)
		if got, want := URL(raw), u.Redacted(); got != want {
			t.Errorf("URL(%q) = %q, want %q", raw, got, want)
		}
	}
	if got := URL("http://u:s3cr3t@127.0.0.1:1/x"); got != "http://u:xxxxx@127.0.0.1:1/x" {
		t.Errorf("URL = %q", got)
	}
}

// TestURLHidesQueryCredentials: the values of query parameters named like
// credentials are hidden, in any case, the rest kept as written.
func TestURLHidesQueryCredentials(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"http://h/v1?key=sk-1", "http://h/v1?key=xxxxx"},
		{"https://h/x?model=m&api-key=a1&API_KEY=a2&token=t&access_token=t2&b=2",
			"https://h/x?model=m&api-key=xxxxx&API_KEY=xxxxx&token=xxxxx&access_token=xxxxx&b=2"},
		{"https://b.s3.amazonaws.com/o?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F2024&X-Amz-Signature=abcd&X-Amz-Security-Token=tk",
			"https://b.s3.amazonaws.com/o?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=xxxxx&X-Amz-Signature=xxxxx&X-Amz-Security-Token=xxxxx"},
		{"https://acct.blob.core.windows.net/c?sv=2022&sig=abc%3D&se=1", "https://acct.blob.core.windows.net/c?sv=2022&sig=xxxxx&se=1"},
		{"s3://b/x?endpoint=http://127.0.0.1:9000&secret_key=abc&password=p", "s3://b/x?endpoint=http://127.0.0.1:9000&secret_key=xxxxx&password=xxxxx"},
		{"s3://b/x?endpoint=http%3A%2F%2Fu%3Apw%40minio%3A9000", "s3://b/x?endpoint=http%3A%2F%2Fu%3Axxxxx%40minio%3A9000"},
		{"http://u:pw@h/?key=", "http://u:xxxxx@h/?key="},
	}
	for _, tt := range tests {
		if got := URL(tt.raw); got != tt.want {
			t.Errorf("URL(%q) =\n%s\nwant\n%s", tt.raw, got, tt.want)
		}
	}
}

// TestURLElse: what has nothing to hide is kept as written; ${VAR}
// references are kept; an address without a scheme is read as host:port;
// what does not parse is never shown.
func TestURLElse(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"", ""},
		{"http://127.0.0.1:8080/a b/${P}?q=1&q=2", "http://127.0.0.1:8080/a b/${P}?q=1&q=2"},
		{"http://u@h/", "http://u@h/"},
		{"http://u:${TOKEN}@h/x?key=${KEY}", "http://u:${TOKEN}@h/x?key=${KEY}"},
		{"http://u:${A}@${HOST}:1/${P}?token=lit", "http://u:${A}@${HOST}:1/${P}?token=xxxxx"},
		{"http://u:pre${A}@h/", "http://u:xxxxx@h/"},
		{"127.0.0.1:4317", "127.0.0.1:4317"},
		{"u:pw@127.0.0.1:4317", "u:xxxxx@127.0.0.1:4317"},
		{"http://[::1", Unparsable},
		{"http://u:p{w@h/", Unparsable},
	}
	for _, tt := range tests {
		if got := URL(tt.raw); got != tt.want {
			t.Errorf("URL(%q) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}

// TestURLSecrets: what URL hides is what a Scrubber must replace.
func TestURLSecrets(t *testing.T) {
	got := urlSecrets("http://u:p%40ss@h/?key=a%2Bb&model=m&token=${T}")
	if want := []string{"p@ss", "a%2Bb", "a+b"}; !slices.Equal(got, want) {
		t.Errorf("urlSecrets = %q, want %q", got, want)
	}
	if got := urlSecrets("u:pw@127.0.0.1:4317"); got != nil {
		t.Errorf("urlSecrets of an address = %q: params' strings are read only when they have ://", got)
	}
}

func TestSensitiveName(t *testing.T) {
	for _, n := range []string{"Authorization", "X-Api-Key", "key", "API_KEY", "access_token", "Secret_Key", "password", "PASSWD",
		"Cookie", "X-Session", "X-Amz-Credential", "X-Amz-Signature", "X-Amz-Security-Token", "sig", "SIG"} {
		if !SensitiveName(n) {
			t.Errorf("%s is not sensitive", n)
		}
	}
	for _, n := range []string{"X-Scope-OrgID", "Content-Type", "model", "endpoint", "signal", "X-Amz-Algorithm", "MODE"} {
		if SensitiveName(n) {
			t.Errorf("%s is sensitive", n)
		}
	}
}

package secret

import "testing"

// TestHeaderAddsItsCredentials: a credential-named header's literal value
// and the variables any header reads are scrubbed; an ordinary header's
// literal value is not.
func TestHeaderAddsItsCredentials(t *testing.T) {
	t.Setenv("PERFLAB_TEST_HEADER_VAR", "from-the-environment-42")
	set := Set{}
	set.Header("Authorization: Bearer sk-literal-123456")
	set.Header("X-Trace: ${PERFLAB_TEST_HEADER_VAR}")
	set.Header("Accept: application/json-whatever")
	got := set.Scrubber().String("sk-literal-123456 from-the-environment-42 application/json-whatever")
	if want := Redacted + " ${PERFLAB_TEST_HEADER_VAR} application/json-whatever"; got != want {
		t.Errorf("scrubbed %q, want %q", got, want)
	}
}

package testutil

import "testing"

// VersityGWBinary returns the path of versitygw, as StartVersityGW finds
// it, for tests that start it themselves (as a plan's component); when it
// is missing the test is skipped (or fails, see Unavailable).
func VersityGWBinary(t testing.TB) string {
	t.Helper()
	return goBinary(t, "versitygw", versityInstall)
}

// JaegerBinary returns the path of Jaeger's all-in-one, as StartJaeger
// finds it; when it is missing the test is skipped (or fails, see
// Unavailable).
func JaegerBinary(t testing.TB) string {
	t.Helper()
	return jaegerBinary(t)
}

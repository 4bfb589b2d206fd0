//go:build !unix

package run

// Outside Unix there is no rlimit to read or descriptor table to grow:
// perflab runs on Linux only (internal/cli says so at start), and these
// let the package build elsewhere.

// OpenFiles cannot read the limit: 0, 0.
func OpenFiles() (soft, hard uint64) { return 0, 0 }

// ReserveFiles does nothing.
func ReserveFiles(int) {}

// storeDiagnosis cannot tell.
func storeDiagnosis(string) string { return "" }

package cli

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

// profileEnv names a file perflab writes a CPU profile of itself to, for
// finding where the generator spends its time (go tool pprof FILE).
const profileEnv = "PERFLAB_CPUPROFILE"

// startProfile starts the CPU profile PERFLAB_CPUPROFILE asks for; the
// returned function stops it. A profile that cannot start is reported and
// the run goes on without it.
func startProfile(stderr io.Writer) (stop func()) {
	path := os.Getenv(profileEnv)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(stderr, "perflab: cannot profile to %s: %v\n", path, err)
		if f != nil {
			f.Close()
		}
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

package testutil

import (
	"flag"
	"strconv"
)

// Parallel sets how many of a package's parallel tests run at once to n
// (go test's default is GOMAXPROCS), unless the command line gave
// -parallel: for a package whose tests spend their time waiting for loads
// of a set length, not on the CPU. Call it in TestMain before m.Run.
func Parallel(n int) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}

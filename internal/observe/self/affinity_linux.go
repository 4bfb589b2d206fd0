package self

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// affinity is how many CPUs this process's scheduler affinity mask holds.
func affinity() (int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return 0, fmt.Errorf("cannot read the CPU affinity: %w", err)
	}
	return set.Count(), nil
}

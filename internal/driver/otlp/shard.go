package otlpdriver

import (
	"fmt"

	"github.com/perflab/perflab/internal/driver"
)

var _ driver.Sharder = (*Driver)(nil)

// Shard makes the driver worker index's part of of in a distributed run:
// its VUs draw traces from random streams no other worker uses, so that
// with the plan's seed the workers do not send the same trace IDs. Call it
// before the first Do.
func (d *Driver) Shard(index, of int) error {
	if of < 1 || index < 0 || index >= of {
		return fmt.Errorf("cannot make otlp worker %d of %d", index, of)
	}
	d.streams = uint64(index) << 32
	return nil
}

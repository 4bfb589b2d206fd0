package s3driver

import (
	"fmt"
	"strings"

	"github.com/minio/minio-go/v7/pkg/s3utils"

	"github.com/perflab/perflab/internal/driver"
)

var (
	_ driver.Sharder = (*Driver)(nil)
	_ driver.Handoff = (*Driver)(nil)
)

// Shard makes the driver worker index's part of of in a distributed run:
// its new objects are named "put-w<index>-<vu>-<n>", so no two workers
// write one key; a DELETE of prepared objects takes the indexes
// index, index+of, … so no two workers delete one; its VUs draw from
// random streams of their own (with a seed, the workers would otherwise
// read the same objects in the same order); and Cleanup leaves the
// prepared objects to the coordinator, which uploaded them. Call it
// before the first Do.
func (d *Driver) Shard(index, of int) error {
	if of < 1 || index < 0 || index >= of {
		return fmt.Errorf("cannot make s3 worker %d of %d", index, of)
	}
	if of > 1 {
		d.worker, d.workers = index, of
		d.streams = uint64(index) << 32
	}
	return nil
}

// fixedIndex is the prepared object the n-th DELETE of this driver (or
// of this worker) removes.
func (d *Driver) fixedIndex(n int64) int64 {
	if d.workers <= 1 {
		return n
	}
	return n*int64(d.workers) + int64(d.worker)
}

// handoffPrefix is the Handoff key of the key prefix.
const handoffPrefix = "key_prefix"

// Handoff is the key prefix the driver's objects are under, chosen when it
// was built unless the config set one: the workers read the objects the
// coordinator's driver prepared.
func (d *Driver) Handoff() map[string]string {
	return map[string]string{handoffPrefix: d.prefix}
}

// Adopt takes the coordinator's key prefix. Call it before the first Do.
func (d *Driver) Adopt(h map[string]string) error {
	p, ok := h[handoffPrefix]
	if !ok {
		return nil
	}
	if p != "" && (s3utils.CheckValidObjectNamePrefix(p) != nil || strings.HasPrefix(p, "/")) {
		return fmt.Errorf("cannot take key prefix %q from the coordinator: not a valid key prefix", p)
	}
	d.prefix, d.cfg.KeyPrefix = p, p
	return nil
}

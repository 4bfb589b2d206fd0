package s3driver

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/perflab/perflab/internal/driver"
)

// progressEvery is how often Prepare and Cleanup report progress.
const progressEvery = 250 * time.Millisecond

// deleteBatch is the number of keys one multi-object DELETE removes (S3's
// maximum).
const deleteBatch = 1000

// Prepare creates the bucket when CreateBucket asks and it is missing, then
// uploads the Objects fixed-name objects, PrepareConcurrency at a time,
// telling progress how many are done. It stops at the first failed upload
// and returns its error; Cleanup removes whatever it may have written.
func (d *Driver) Prepare(ctx context.Context, progress driver.Progress) error {
	if d.cfg.CreateBucket {
		if err := d.ensureBucket(ctx); err != nil {
			return err
		}
	}
	total := int64(d.objects)
	if total == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next, done atomic.Int64
		once       sync.Once
		firstErr   error
		wg         sync.WaitGroup
	)
	fail := func(err error) { once.Do(func() { firstErr = err; cancel() }) }
	for range min(d.spec.prepConc, d.objects) {
		wg.Go(func() {
			var body payloadReader
			for {
				i := next.Add(1) - 1
				if i >= total || ctx.Err() != nil {
					return
				}
				d.markFixed(i + 1)
				if err := d.upload(ctx, &body, int(i)); err != nil {
					fail(err)
					return
				}
				done.Add(1)
			}
		})
	}
	report(&wg, progress, &done, total)
	if firstErr == nil {
		firstErr = ctx.Err() // the caller cancelled
	}
	if firstErr != nil {
		return fmt.Errorf("cannot prepare objects: %d of %d uploaded: %w", done.Load(), total, firstErr)
	}
	return nil
}

// upload PUTs prepared object i with the driver's timeout.
func (d *Driver) upload(ctx context.Context, body *payloadReader, i int) error {
	size := d.fixedSize(i)
	body.reset(d.body(size, i))
	octx, cancel := context.WithTimeout(ctx, d.spec.timeout)
	defer cancel()
	key := d.fixedName(i)
	if _, err := d.client.PutObject(octx, d.bucket, key, body, size, d.putOpts); err != nil {
		_, msg := classify(err, ctx, d.spec.timeout)
		return fmt.Errorf("cannot upload %s: %s", key, msg)
	}
	return nil
}

// report calls progress every progressEvery until wg is done, then once
// more with the final count.
func report(wg *sync.WaitGroup, progress driver.Progress, done *atomic.Int64, total int64) {
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if progress != nil {
				progress(done.Load(), total)
			}
		case <-finished:
			if progress != nil {
				progress(done.Load(), total)
			}
			return
		}
	}
}

// ensureBucket creates the bucket unless it exists, and remembers that it
// did so Cleanup removes it.
func (d *Driver) ensureBucket(ctx context.Context) error {
	octx, cancel := context.WithTimeout(ctx, d.spec.timeout)
	defer cancel()
	ok, err := d.client.BucketExists(octx, d.bucket)
	if err != nil {
		_, msg := classify(err, ctx, d.spec.timeout)
		return fmt.Errorf("cannot check bucket %s: %s", d.bucket, msg)
	}
	if ok {
		return nil
	}
	err = d.client.MakeBucket(octx, d.bucket, minio.MakeBucketOptions{Region: d.cfg.Region})
	if err != nil && minio.ToErrorResponse(err).Code != "BucketAlreadyOwnedByYou" {
		_, msg := classify(err, ctx, d.spec.timeout)
		return fmt.Errorf("cannot create bucket %s: %s", d.bucket, msg)
	}
	d.createdBucket.Store(err == nil)
	return nil
}

// keyRange is the names [lo, hi) of one kind: fixed (vu < 0) or the fresh
// names of VU vu.
type keyRange struct {
	vu     int
	lo, hi int64
}

// written lists every name the driver may have written, as ranges of at
// most deleteBatch names.
func (d *Driver) written() (ranges []keyRange, total int64) {
	add := func(vu int, n int64) {
		for lo := int64(0); lo < n; lo += deleteBatch {
			ranges = append(ranges, keyRange{vu: vu, lo: lo, hi: min(lo+deleteBatch, n)})
		}
		total += n
	}
	if d.workers <= 1 { // a worker's fixed names are the coordinator's to remove
		add(-1, d.fixedHigh.Load())
	}
	d.states.Each(func(st *vuState) { add(st.vu, st.next.Load()) })
	return ranges, total
}

// Cleanup deletes every object the driver may have written (the prepared
// objects, each VU's new names) and nothing else, in multi-object DELETE
// batches, PrepareConcurrency at a time, then the bucket if Prepare created
// it. Keys already gone count as deleted. It returns every failure, joined.
func (d *Driver) Cleanup(ctx context.Context, progress driver.Progress) error {
	ranges, total := d.written()
	work := make(chan keyRange)
	var (
		done atomic.Int64
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	for range min(d.spec.prepConc, max(len(ranges), 1)) {
		wg.Go(func() {
			for kr := range work {
				if err := d.deleteRange(ctx, kr, &done); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	go func() {
		defer close(work)
		for _, kr := range ranges {
			select {
			case work <- kr:
			case <-ctx.Done():
				return
			}
		}
	}()
	report(&wg, progress, &done, total)
	if err := ctx.Err(); err != nil {
		errs = append(errs, fmt.Errorf("cannot finish cleanup: %d of %d objects deleted: %w", done.Load(), total, err))
	}
	if len(errs) == 0 && d.createdBucket.Load() {
		octx, cancel := context.WithTimeout(ctx, d.spec.timeout)
		defer cancel()
		if err := d.client.RemoveBucket(octx, d.bucket); err != nil {
			_, msg := classify(err, ctx, d.spec.timeout)
			errs = append(errs, fmt.Errorf("cannot remove bucket %s, which perflab created: %s", d.bucket, msg))
		} else {
			d.createdBucket.Store(false)
		}
	}
	return errors.Join(errs...)
}

// deleteRange removes the names of kr in one multi-object DELETE.
func (d *Driver) deleteRange(ctx context.Context, kr keyRange, done *atomic.Int64) error {
	names := func(yield func(minio.ObjectInfo) bool) {
		for i := kr.lo; i < kr.hi; i++ {
			var key string
			if kr.vu < 0 {
				key = d.fixedName(int(i))
			} else {
				key = d.freshName(kr.vu, i)
			}
			if !yield(minio.ObjectInfo{Key: key}) {
				return
			}
		}
	}
	octx, cancel := context.WithTimeout(ctx, d.spec.timeout)
	defer cancel()
	results, err := d.client.RemoveObjectsWithIter(octx, d.bucket, iter.Seq[minio.ObjectInfo](names), minio.RemoveObjectsOptions{})
	if err != nil {
		return fmt.Errorf("cannot delete objects: %w", err)
	}
	var failed int
	var first error
	for res := range results {
		if res.Err != nil && minio.ToErrorResponse(res.Err).Code != "NoSuchKey" {
			if failed++; first == nil {
				_, msg := classify(res.Err, ctx, d.spec.timeout)
				first = fmt.Errorf("cannot delete %s: %s", res.ObjectName, msg)
			}
			continue
		}
		done.Add(1)
	}
	if failed > 1 {
		return fmt.Errorf("%w (and %d more in its batch)", first, failed-1)
	}
	return first
}

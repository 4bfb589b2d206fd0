package builtin

import (
	"container/list"
	"context"
	"hash/fnv"
	"sync"
)

// servingEngine is the mock provider's model of an inference server's
// scheduler: a running batch of at most maxRunning requests, fed first
// come first served from a waiting queue, and, with a KV cache
// (kvBlocks > 0), a pool of blocks of blockSize tokens that the running
// requests hold (prompt and answer) and a prefix cache over the blocks'
// contents. A request is admitted when the batch has room and its blocks
// fit beside those held, or when nothing runs (so that one larger than
// the pool still runs, alone). The waiting requests stay in line: one
// that does not fit holds back those behind it, as vLLM's FCFS scheduler
// does.
//
// The prefix cache remembers the last kvBlocks blocks used, least
// recently used evicted first, whether or not a running request holds
// them (a simplification of vLLM, where a free block keeps its contents
// until it is reused). A block is known by the hash of every token up to
// its end, so that a hit on block k means the whole prefix up to it is
// cached, and only full blocks are cached.
type servingEngine struct {
	maxRunning int // 0: no limit
	kvBlocks   int // 0: no KV cache model
	blockSize  int
	metrics    *llmMetrics

	mu      sync.Mutex
	running int
	held    int        // KV blocks held by the running requests
	queue   *list.List // of *ticket, first come first
	cache   *prefixCache
}

// ticket is a request waiting for admission.
type ticket struct {
	blocks   int
	hashes   []uint64
	admitted chan int // receives the prompt tokens found in the cache
}

// admission is what an admitted request learns and gives back.
type admission struct {
	cached  int    // prompt tokens found in the prefix cache
	release func() // call once when the request is done
}

func newServingEngine(cfg LLMConfig, m *llmMetrics) *servingEngine {
	e := &servingEngine{maxRunning: cfg.MaxConcurrency, kvBlocks: cfg.KVBlocks, blockSize: cfg.blockSize(),
		metrics: m, queue: list.New()}
	if cfg.KVBlocks > 0 {
		e.cache = newPrefixCache(cfg.KVBlocks)
	}
	return e
}

// blocksFor is how many KV blocks a request of prompt and answer tokens
// holds while it runs; 0 without a KV cache model.
func (e *servingEngine) blocksFor(prompt, answer int) int {
	if e.kvBlocks == 0 {
		return 0
	}
	return (prompt + answer + e.blockSize - 1) / e.blockSize
}

// admit waits for the request's turn: blocks it will hold, hashes of its
// prompt's full blocks (blockHashes). ok is false when ctx ended the wait.
func (e *servingEngine) admit(ctx context.Context, blocks int, hashes []uint64) (admission, bool) {
	t, el := e.enqueue(blocks, hashes)
	select {
	case cached := <-t.admitted:
		return admission{cached: cached, release: func() { e.done(blocks) }}, true
	case <-ctx.Done():
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	select {
	case <-t.admitted: // admitted as ctx ended: give the place back
		e.running--
		e.held -= blocks
		e.schedule()
	default:
		e.queue.Remove(el)
		e.schedule() // one held back by this one may fit now
	}
	return admission{}, false
}

// enqueue puts a request in line and admits what fits.
func (e *servingEngine) enqueue(blocks int, hashes []uint64) (*ticket, *list.Element) {
	t := &ticket{blocks: blocks, hashes: hashes, admitted: make(chan int, 1)}
	e.mu.Lock()
	defer e.mu.Unlock()
	el := e.queue.PushBack(t)
	e.schedule()
	return t, el
}

// done gives back a finished request's place and blocks.
func (e *servingEngine) done(blocks int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.running--
	e.held -= blocks
	e.schedule()
}

// schedule admits the waiting requests, in order, while the next fits,
// and updates the gauges. Called with mu held.
func (e *servingEngine) schedule() {
	for el := e.queue.Front(); el != nil; el = e.queue.Front() {
		t := el.Value.(*ticket)
		if !e.fits(t.blocks) {
			break
		}
		e.queue.Remove(el)
		e.running++
		e.held += t.blocks
		t.admitted <- e.lookup(t.hashes)
	}
	e.metrics.running.Set(float64(e.running))
	e.metrics.waiting.Set(float64(e.queue.Len()))
	if e.kvBlocks > 0 {
		e.metrics.kvUsage.Set(min(float64(e.held)/float64(e.kvBlocks), 1))
	}
}

// fits says whether a request holding blocks may start now.
func (e *servingEngine) fits(blocks int) bool {
	if e.maxRunning > 0 && e.running >= e.maxRunning {
		return false
	}
	return e.kvBlocks == 0 || e.running == 0 || e.held+blocks <= e.kvBlocks
}

// lookup finds the prompt's cached prefix, in tokens, and caches its
// blocks. Called with mu held.
func (e *servingEngine) lookup(hashes []uint64) int {
	if e.cache == nil {
		return 0
	}
	return e.cache.use(hashes) * e.blockSize
}

// prefixCache is a set of block hashes, least recently used evicted first.
type prefixCache struct {
	capacity int
	order    *list.List // of uint64, most recently used first
	index    map[uint64]*list.Element
}

func newPrefixCache(capacity int) *prefixCache {
	return &prefixCache{capacity: capacity, order: list.New(), index: map[uint64]*list.Element{}}
}

// use returns how many of the leading hashes were cached, then marks them
// all used (caching those that were not), evicting beyond capacity.
func (c *prefixCache) use(hashes []uint64) int {
	hits := 0
	for hits < len(hashes) && c.index[hashes[hits]] != nil {
		hits++
	}
	for _, h := range hashes {
		if el := c.index[h]; el != nil {
			c.order.MoveToFront(el)
			continue
		}
		c.index[h] = c.order.PushFront(h)
		if c.order.Len() > c.capacity {
			last := c.order.Back()
			delete(c.index, last.Value.(uint64))
			c.order.Remove(last)
		}
	}
	return hits
}

// promptTokens reads a prompt's tokens (its words, as the mock counts
// them) and, with a block size, the hash of each full block: of every
// word from the start to the block's end, so equal hashes mean equal
// prefixes.
type promptTokens struct {
	n         int
	blockSize int // 0: no hashes
	h         hash64
	hashes    []uint64
}

// hash64 is the running hash of the words so far.
type hash64 interface {
	Write([]byte) (int, error)
	Sum64() uint64
}

func newPromptTokens(blockSize int) *promptTokens {
	return &promptTokens{blockSize: blockSize, h: fnv.New64a()}
}

// word adds one token.
func (p *promptTokens) word(w string) {
	p.n++
	if p.blockSize == 0 {
		return
	}
	_, _ = p.h.Write([]byte(w))
	_, _ = p.h.Write([]byte{' '})
	if p.n%p.blockSize == 0 {
		p.hashes = append(p.hashes, p.h.Sum64())
	}
}

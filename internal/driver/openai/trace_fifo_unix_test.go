//go:build unix

package openaidriver

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestTraceIsReadOnce: New reads the trace once, when it checks the
// config, and makes the requests of what it read. The trace is a FIFO
// written once: a second read would wait for a writer that never comes.
func TestTraceIsReadOnce(t *testing.T) {
	b, err := os.ReadFile(exampleTrace)
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("cannot make a FIFO: %v", err)
	}
	go func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			_, _ = f.Write(b)
			f.Close()
		}
	}()
	made := make(chan error, 1)
	go func() {
		_, err := New(Config{URL: "http://127.0.0.1:1", Model: "m", Trace: &Trace{File: fifo, BlockTokens: 64}})
		made <- err
	}()
	select {
	case err := <-made:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("New has not returned in 30 s: it waits to read the trace a second time")
	}
}

package sut

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSpecValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		spec Spec
		want []string // substrings, one per expected error
	}{
		{"valid", Spec{Name: "tempo-1", Command: "tempo"}, nil},
		{"valid http", Spec{Name: "a", Command: "a", Ready: Probe{HTTP: "https://127.0.0.1:1/ready"}}, nil},
		{"everything wrong", Spec{Name: "../x", StopGrace: -1, Ready: Probe{HTTP: "ftp://x", TCP: "nohost", Timeout: -1}},
			[]string{"component name", "command is empty", "negative", "both http and tcp", "http:// or https://", "host:port", "must not be negative"}},
		{"empty name", Spec{Command: "a"}, []string{"component name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := tt.spec.Validate()
			if len(errs) != len(tt.want) {
				t.Fatalf("Validate() = %v, want %d errors", errs, len(tt.want))
			}
			for i, want := range tt.want {
				if !strings.Contains(errs[i].Error(), want) {
					t.Errorf("error %d = %q, want it to mention %q", i, errs[i], want)
				}
			}
		})
	}
}

func TestStartErrors(t *testing.T) {
	t.Parallel()
	_, err := Start(context.Background(), Spec{Name: "api", Command: "perflab-no-such-binary", LogDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), `cannot start component "api"`) || !strings.Contains(err.Error(), "executable file not found") {
		t.Errorf("Start(missing binary) = %v", err)
	}
	_, err = Start(context.Background(), Spec{Name: "api", Command: "sh", Dir: filepath.Join(t.TempDir(), "nope")})
	if err == nil || !strings.Contains(err.Error(), "no such file or directory") {
		t.Errorf("Start(missing dir) = %v", err)
	}
	_, err = Start(context.Background(), Spec{Name: "a/b", Command: "sh"})
	if err == nil || !strings.Contains(err.Error(), "component name") {
		t.Errorf("Start(bad name) = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err = Start(ctx, Spec{Name: "api", Command: "sh"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Start(canceled) = %v", err)
	}
}

func TestStartEnvDirLogs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := shSpec(t, "api", `echo "$PERFLAB_X $(pwd)"; echo oops >&2; printf 'no newline'`)
	s.Env = []string{"PERFLAB_X=1", "PERFLAB_X=2"}
	s.Dir = dir
	logFile := filepath.Join(s.LogDir, "api.stdout.log")
	if err := os.WriteFile(logFile, []byte("previous run\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := start(t, s)
	within(t, p.Done(), 20*time.Second, "Done")
	stopNow(t, p)
	if got, want := readLog(t, s, "stdout"), "previous run\n2 "+dir+"\nno newline"; got != want {
		t.Errorf("stdout log = %q, want %q (appended)", got, want)
	}
	if got := readLog(t, s, "stderr"); got != "oops\n" {
		t.Errorf("stderr log = %q", got)
	}
	tail := strings.Join(p.Tail(10), "|")
	for _, want := range []string{"2 " + dir, "oops", "no newline"} {
		if !strings.Contains(tail, want) {
			t.Errorf("Tail = %q lacks %q", tail, want)
		}
	}
	if e := p.Exit(); e == nil || e.String() != "exited with status 0" || e.Stopped {
		t.Errorf("Exit() = %+v", e)
	}
}

func TestFloodDoesNotBlock(t *testing.T) {
	t.Parallel()
	s := helperSpec(t, "flood", "flood")
	p := start(t, s)
	within(t, p.Done(), time.Minute, "the flooding component finishing")
	stopNow(t, p)
	if e := p.Exit(); e.Code != 0 {
		t.Fatalf("Exit() = %v", e)
	}
	f, err := os.Open(filepath.Join(s.LogDir, "flood.stdout.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() != floodLines*floodLineBytes {
		t.Fatalf("stdout log: %v, %v; want %d bytes", fi.Size(), err, floodLines*floodLineBytes)
	}
	sc := bufio.NewScanner(f)
	n := 0
	for ; sc.Scan(); n++ {
		if want := fmt.Sprintf("line %08d ", n); !strings.HasPrefix(sc.Text(), want) || len(sc.Text()) != floodLineBytes-1 {
			t.Fatalf("line %d = %q", n, sc.Text())
		}
	}
	if n != floodLines || sc.Err() != nil {
		t.Fatalf("read %d lines (%v), want %d", n, sc.Err(), floodLines)
	}
	if got := readLog(t, s, "stderr"); got != "flood done\n" {
		t.Errorf("stderr log = %q", got)
	}
	last := fmt.Sprintf("line %08d ", floodLines-1)
	tail := p.Tail(1000)
	if len(tail) != ringLines || !strings.Contains(strings.Join(tail, "\n"), last) {
		t.Errorf("Tail(1000) has %d lines, want %d ending near %q", len(tail), ringLines, last)
	}
}

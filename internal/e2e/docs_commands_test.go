//go:build linux

package e2e

import (
	"context"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runnableFence opens a block of shell commands that TestDocsCommandsRun
// runs: "```sh runnable" (GitHub still highlights it as sh).
const runnableFence = "```sh runnable"

// runnableBlocks returns the runnable blocks of a Markdown text, each as
// its commands (a line continued by a backslash joined to the next).
func runnableBlocks(file, text string) []docBlock {
	var out []docBlock
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != runnableFence {
			continue
		}
		start := i + 1
		var b strings.Builder
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			l := strings.TrimSpace(lines[i])
			if cont, ok := strings.CutSuffix(l, "\\"); ok {
				b.WriteString(cont + " ")
				continue
			}
			b.WriteString(l + "\n")
		}
		out = append(out, docBlock{file: file, line: start + 1, text: b.String()})
	}
	return out
}

// addrFlag finds the address a server command listens on.
var addrFlag = regexp.MustCompile(`--addr[ =](\S+)`)

// TestDocsCommandsRun runs every runnable block of README.md and
// docs/**/*.md as a user would type it, with perflab on the PATH, in a
// directory of its own that has the repository's examples/: a command
// that exits non-zero fails the test, with its output. A line ending in
// & is a server: it runs in the background until the block ends, and the
// next line waits until its --addr answers (as a user reading the output
// would). Every address in the blocks is on 127.0.0.1.
func TestDocsCommandsRun(t *testing.T) {
	t.Parallel()
	docs := []string{"../../README.md"}
	_ = filepath.WalkDir("../../docs", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			docs = append(docs, path)
		}
		return nil
	})
	var blocks []docBlock
	for _, f := range docs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, runnableBlocks(f, string(b))...)
	}
	if len(blocks) == 0 {
		t.Fatal("no runnable block in README.md: its first-hour commands are run here")
	}
	bin := t.TempDir()
	if err := os.Symlink(perflab, filepath.Join(bin, "perflab")); err != nil {
		t.Fatal(err)
	}
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		t.Run(filepath.Base(b.file)+":"+strconv.Itoa(b.line), func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Symlink(examples, filepath.Join(dir, "examples")); err != nil {
				t.Fatal(err)
			}
			runBlock(t, b, dir, bin)
		})
	}
}

// runBlock runs a block's lines in turn in dir, perflab from bin.
func runBlock(t *testing.T, b docBlock, dir, bin string) {
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, line := range strings.Split(strings.TrimSpace(b.text), "\n") {
		cmdText, _, _ := strings.Cut(line, " #")
		cmdText = strings.TrimSpace(cmdText)
		if cmdText == "" || strings.HasPrefix(cmdText, "#") {
			continue
		}
		if server, ok := strings.CutSuffix(cmdText, "&"); ok {
			startServer(t, strings.TrimSpace(server), dir, env)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		c := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", cmdText)
		c.Dir, c.Env = dir, env
		out, err := c.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("%s:%d: %s\n%v\n%s", b.file, b.line, cmdText, err, out)
		}
	}
}

// startServer starts a block's background command in a process group of
// its own, waits until its --addr answers, and stops the group when the
// test ends.
func startServer(t *testing.T, cmdText, dir string, env []string) {
	m := addrFlag.FindStringSubmatch(cmdText)
	if m == nil {
		t.Fatalf("a background command without --addr: %s", cmdText)
	}
	addr := m[1]
	if host, _, err := net.SplitHostPort(addr); err != nil || !net.ParseIP(host).IsLoopback() {
		t.Fatalf("the docs' server listens on %s: their commands stay on 127.0.0.1", addr)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Skipf("%s is taken by another program on this machine: the docs' commands cannot run here", addr)
	}
	c := exec.Command("bash", "-c", "exec "+cmdText)
	c.Dir, c.Env = dir, env
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = c.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGTERM)
		<-exited
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return
		}
		select {
		case <-exited:
			t.Fatalf("%s ended before it listened: %v", cmdText, waitErr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not listen on %s within 20 s: %v", cmdText, addr, err)
		}
	}
}

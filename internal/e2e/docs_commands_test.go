//go:build linux

package e2e

import (
	"context"
	"fmt"
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

	"github.com/perflab/perflab/internal/testutil"
)

// The shell blocks of README.md and docs/**/*.md: each is one or the
// other, so that none drifts from the binary unseen.
const (
	// runnableFence opens a block that TestDocsCommandsRun runs as a
	// user would type it (GitHub still highlights it as sh).
	runnableFence = "```sh runnable"
	// checkedFence opens a block that needs what the suite has not got
	// (a Kubernetes cluster, a registry, a cloud bucket, a plan's real
	// systems) or shows a command's form with placeholders; the text
	// after the colon says which. TestDocsCommandsRun checks its
	// perflab lines against the binary: the command is one, and each
	// flag is one it takes.
	checkedFence = "```sh checked:"
)

// shellBlock is a shell block of a Markdown file: its commands (a line
// continued by a backslash joined to the next), the line it starts at,
// and whether it is run or checked.
type shellBlock struct {
	docBlock
	runnable bool
	why      string // a checked block's reason
}

// shellBlocks returns the shell blocks of a Markdown text; a block that is
// neither runnable nor checked is a problem, returned in bad.
func shellBlocks(file, text string) (blocks []shellBlock, bad []string) {
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		fence := strings.TrimSpace(lines[i])
		if fence != "```sh" && !strings.HasPrefix(fence, "```sh ") && fence != "```bash" && fence != "```console" {
			continue
		}
		b := shellBlock{docBlock: docBlock{file: file, line: i + 2}, runnable: fence == runnableFence}
		if why, ok := strings.CutPrefix(fence, checkedFence); ok {
			b.why = strings.TrimSpace(why)
		}
		if !b.runnable && b.why == "" {
			bad = append(bad, fmt.Sprintf("%s:%d: %q is neither %q nor %q: mark it, so that a test runs or checks it", file, i+1, fence, runnableFence, checkedFence+" WHY IT IS NOT RUN"))
		}
		var t strings.Builder
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			l := strings.TrimSpace(lines[i])
			if cont, ok := strings.CutSuffix(l, "\\"); ok {
				t.WriteString(cont + " ")
				continue
			}
			t.WriteString(l + "\n")
		}
		b.text = t.String()
		blocks = append(blocks, b)
	}
	return blocks, bad
}

// addrFlag finds the address a server command listens on: perflab's
// --addr, VictoriaMetrics' -httpListenAddr.
var addrFlag = regexp.MustCompile(`(?:--addr|-httpListenAddr)[ =](\S+)`)

// TestDocsCommandsRun runs every runnable block of README.md and
// docs/**/*.md as a user would type it, with perflab on the PATH: the
// blocks of one file in order, in one directory of their own that has
// the repository's examples/, as a user follows a page. A command that
// exits non-zero fails the test, with its output. A line ending in & is
// a server: it runs in the background until its block ends, and the next
// line waits until its --addr answers (as a user reading the output
// would). Every address in the blocks is on 127.0.0.1. The perflab lines
// of the checked blocks are checked against the binary.
func TestDocsCommandsRun(t *testing.T) {
	t.Parallel()
	docs := []string{"../../README.md"}
	_ = filepath.WalkDir("../../docs", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			docs = append(docs, path)
		}
		return nil
	})
	byFile := map[string][]shellBlock{}
	runnable := 0
	for _, f := range docs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		blocks, bad := shellBlocks(f, string(b))
		for _, msg := range bad {
			t.Error(msg)
		}
		byFile[f] = blocks
		for _, b := range blocks {
			if b.runnable {
				runnable++
			}
		}
	}
	if runnable == 0 {
		t.Fatal("no runnable block in README.md and docs/: their commands are run here")
	}
	bin := t.TempDir()
	if err := os.Symlink(perflab, filepath.Join(bin, "perflab")); err != nil {
		t.Fatal(err)
	}
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range docs {
		dir := t.TempDir()
		if err := os.Symlink(examples, filepath.Join(dir, "examples")); err != nil {
			t.Fatal(err)
		}
		for _, b := range byFile[f] {
			t.Run(filepath.Base(b.file)+":"+strconv.Itoa(b.line), func(t *testing.T) {
				if b.runnable {
					runBlock(t, b.docBlock, dir, bin)
					return
				}
				checkBlock(t, b)
			})
		}
	}
}

// checkBlock checks every perflab line of a block that is not run: its
// command is one of perflab's, and each --flag one that command takes.
func checkBlock(t *testing.T, b shellBlock) {
	for _, line := range strings.Split(b.text, "\n") {
		args := perflabArgs(line)
		if args == nil {
			continue
		}
		cmd := args[:1] // and a subcommand, which __flags tells from a plan or a URL
		if len(args) > 1 && !strings.HasPrefix(args[1], "-") {
			cmd = args[:2]
		}
		if r := run(t, cmd[0], "--help"); r.code != 0 {
			t.Errorf("%s:%d: perflab %s is not a command (--help exits %d)\n%s", b.file, b.line, cmd[0], r.code, line)
			continue
		}
		known := map[string]bool{}
		for _, f := range strings.Fields(run(t, append([]string{"__flags"}, cmd...)...).stdout) {
			known[f] = true
		}
		for _, a := range args[1:] {
			a = strings.TrimLeft(a, "[")
			if !strings.HasPrefix(a, "--") {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimRight(a, "]…"), "=")
			if !known[name] {
				t.Errorf("%s:%d: perflab %s takes no %s\n%s", b.file, b.line, cmd[0], name, line)
			}
		}
	}
}

// perflabArgs returns the arguments of a perflab command line (perflab,
// ./perflab, bin/perflab, or go run ./cmd/perflab, after any VAR=value),
// its comment cut; nil for a line of another command.
func perflabArgs(line string) []string {
	line, _, _ = strings.Cut(line, " #")
	words := strings.Fields(line)
	for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") {
		words = words[1:]
	}
	switch {
	case len(words) > 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/perflab":
		return words[3:]
	case len(words) > 1 && filepath.Base(words[0]) == "perflab":
		return words[1:]
	}
	return nil
}

// runBlock runs a block's lines in turn in dir, perflab from bin.
func runBlock(t *testing.T, b docBlock, dir, bin string) {
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	pending := ""
	for _, line := range strings.Split(strings.TrimSpace(b.text), "\n") {
		if pending != "" || !strings.HasPrefix(line, "#") {
			pending += line + "\n"
		}
		if !wholeCommand(pending) {
			continue // a quoted string goes on, as in a multi-line SQL query
		}
		cmdText := strings.TrimSpace(pending)
		pending = ""
		if !strings.ContainsRune(cmdText, '\n') {
			cmdText, _, _ = strings.Cut(cmdText, " #")
			cmdText = strings.TrimSpace(cmdText)
		}
		if cmdText == "" {
			continue
		}
		if word := strings.Fields(cmdText)[0]; word != "perflab" {
			testutil.RequireBinary(t, word) // a real server or tool the page uses: installed by make deps
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
	if pending != "" {
		t.Fatalf("%s:%d: the block ends inside a command: %s", b.file, b.line, pending)
	}
}

// wholeCommand reports whether bash reads text as whole commands: no
// quoted string or parenthesis left open.
func wholeCommand(text string) bool {
	return exec.Command("bash", "-n", "-c", text).Run() == nil
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

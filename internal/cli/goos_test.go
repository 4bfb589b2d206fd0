package cli

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"
)

func TestLinuxOnly(t *testing.T) {
	if msg := linuxOnly("linux"); msg != "" {
		t.Errorf("on Linux: %q", msg)
	}
	for _, goos := range []string{"darwin", "windows"} {
		msg := linuxOnly(goos)
		if !strings.HasPrefix(msg, "perflab runs on Linux only:") || !strings.HasSuffix(msg, "this is "+goos) {
			t.Errorf("on %s: %q", goos, msg)
		}
	}
}

// TestMainStartsOnLinux: on this system Main goes on to its usage.
func TestMainStartsOnLinux(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("on Linux only")
	}
	var stderr bytes.Buffer
	if code := Main(context.Background(), nil, &bytes.Buffer{}, &stderr); code != ExitUsage || !strings.Contains(stderr.String(), "Usage") {
		t.Errorf("exit %d:\n%s", code, stderr.String())
	}
}

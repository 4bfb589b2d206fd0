package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// version is perflab version: the release, and what the binary was built
// from, as the Go toolchain stamped it into the binary
// (debug.ReadBuildInfo).
func (e *env) version(args []string) error {
	fs := newFlagSet("version", e)
	if err := fs.Parse(args); err != nil {
		return e.flagError(fs, err)
	}
	if fs.NArg() > 0 {
		return usageErrorf("perflab version takes no arguments, got %q", fs.Args())
	}
	info, _ := debug.ReadBuildInfo()
	fmt.Fprint(e.stdout, versionText(info))
	return nil
}

// versionText is the version, the commit (with "modified" when the tree
// had changes), the commit's date and the Go version of a binary with
// info. The date is the commit's, not the build's: a build that stamped
// its own time would not be reproducible (perflab k8s image is
// byte-identical across builds). A binary built outside a git checkout
// (go install …@version) has no commit: its module version says it.
func versionText(info *debug.BuildInfo) string {
	commit, date, modified := "unknown", "unknown", false
	goVersion, module := runtime.Version(), ""
	if info != nil {
		goVersion = info.GoVersion
		if v := info.Main.Version; v != "" && v != "(devel)" {
			module = v
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.time":
				date = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "perflab %s\n", Version)
	if module != "" {
		fmt.Fprintf(&b, "  module:      %s\n", module)
	}
	if modified {
		commit += " (modified)"
	}
	fmt.Fprintf(&b, "  commit:      %s\n  commit date: %s\n  go:          %s %s/%s\n", commit, date, goVersion, runtime.GOOS, runtime.GOARCH)
	return b.String()
}

package cli

import (
	"flag"
	"fmt"
	"strings"
)

// errHelp is flag.ErrHelp: help was asked for and given, exit 0.
var errHelp = flag.ErrHelp

// isHelp reports whether arg asks for help, as the flag package takes it.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// commandUsage is the part of usage about the commands perflab NAME …:
// each entry whose command line starts so, with the lines that continue
// it; "" when there is none.
func commandUsage(name string) string {
	var b strings.Builder
	keep := false
	for _, line := range strings.Split(usage, "\n") {
		switch {
		case strings.HasPrefix(line, "  perflab "):
			rest := strings.TrimPrefix(line, "  perflab ")
			keep = rest == name || strings.HasPrefix(rest, name+" ")
		case !strings.HasPrefix(line, "    "):
			keep = false
		}
		if keep {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// groupHelp answers perflab NAME --help for a command whose subcommands
// have their own flags (k8s, plan, target): its entries of the usage, on
// stdout, and how to read a subcommand's flags.
func (e *env) groupHelp(name string, subs ...string) error {
	fmt.Fprintf(e.stdout, "Usage:\n%s\nEach takes --help: perflab %s %s --help.\n", commandUsage(name), name, subs[0])
	return flag.ErrHelp
}

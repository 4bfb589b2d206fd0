package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// commands are perflab's commands, for completion, each with its
// subcommands (those whose flags are their own).
var commands = []struct {
	name string
	subs []string
}{
	{"run", nil}, {"http", nil}, {"llm", nil}, {"search", nil}, {"demo", nil}, {"report", nil}, {"size", nil}, {"compare", nil},
	{"plan", []string{"check"}}, {"target", []string{"http", "llm", "gateway"}},
	{"k8s", []string{"manifest", "run", "image"}}, {"merge", nil}, {"worker", nil},
	{"completion", []string{"bash", "zsh", "fish"}}, {"version", nil}, {"help", nil},
}

// completion is perflab completion bash|zsh|fish: a script that
// completes perflab's commands, subcommands and flags. The flags are
// asked of perflab itself as the line is completed (perflab __flags),
// so that the script never lists a flag the binary lacks.
func (e *env) completion(args []string) error {
	if len(args) == 1 && isHelp(args[0]) {
		fmt.Fprint(e.stdout, "Usage: perflab completion bash|zsh|fish\n\n"+
			"  bash:  source <(perflab completion bash)          (or save it in /etc/bash_completion.d/perflab)\n"+
			"  zsh:   source <(perflab completion zsh)           (it uses zsh's bashcompinit)\n"+
			"  fish:  perflab completion fish > ~/.config/fish/completions/perflab.fish\n")
		return errHelp
	}
	if len(args) != 1 {
		return &usageError{msg: "perflab completion needs one shell: bash, zsh or fish", see: "perflab completion --help"}
	}
	switch args[0] {
	case "bash":
		fmt.Fprint(e.stdout, bashCompletion())
	case "zsh":
		fmt.Fprint(e.stdout, "#compdef perflab\n# zsh completion for perflab: source <(perflab completion zsh)\n"+
			"autoload -U +X bashcompinit && bashcompinit\n"+bashCompletion())
	case "fish":
		fmt.Fprint(e.stdout, fishCompletion())
	default:
		return &usageError{msg: fmt.Sprintf("perflab completion %s: want bash, zsh or fish", args[0]), see: "perflab completion --help"}
	}
	return nil
}

func commandNames() string {
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	return strings.Join(names, " ")
}

// bashCompletion is the bash script; zsh runs it through bashcompinit.
func bashCompletion() string {
	var b strings.Builder
	b.WriteString(`# bash completion for perflab: source <(perflab completion bash)
_perflab() {
  local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[1]} sub=
  if (( COMP_CWORD == 1 )); then
    COMPREPLY=($(compgen -W "` + commandNames() + `" -- "$cur"))
    return
  fi
  case $cmd in
`)
	for _, c := range commands {
		if len(c.subs) > 0 {
			fmt.Fprintf(&b, "    %s)\n      if (( COMP_CWORD == 2 )); then COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return; fi\n      sub=${COMP_WORDS[2]};;\n",
				c.name, strings.Join(c.subs, " "))
		}
	}
	b.WriteString(`  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" __flags "$cmd" $sub 2>/dev/null)" -- "$cur"))
    return
  fi
  COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _perflab perflab
`)
	return b.String()
}

// fishCompletion is the fish script.
func fishCompletion() string {
	var b strings.Builder
	b.WriteString("# fish completion for perflab: perflab completion fish > ~/.config/fish/completions/perflab.fish\n")
	b.WriteString("function __perflab_flags\n    set -l words (commandline -opc)\n    perflab __flags $words[2..3] 2>/dev/null\nend\n")
	fmt.Fprintf(&b, "complete -c perflab -n __fish_use_subcommand -f -a '%s'\n", commandNames())
	for _, c := range commands {
		if len(c.subs) > 0 {
			fmt.Fprintf(&b, "complete -c perflab -n '__fish_seen_subcommand_from %s; and test (count (commandline -opc)) -eq 2' -f -a '%s'\n",
				c.name, strings.Join(c.subs, " "))
		}
	}
	b.WriteString("complete -c perflab -n 'not __fish_use_subcommand; and string match -q -- \"-*\" (commandline -ct)' -f -a '(__perflab_flags)'\n")
	return b.String()
}

// flagLine matches a flag's line in a usage: "  -rate string".
var flagLine = regexp.MustCompile(`^  -([A-Za-z0-9][-A-Za-z0-9]*)`)

// flagsCmd is perflab __flags COMMAND [SUBCOMMAND]: the flags the command
// takes, one a line, as its --help lists them; nothing for one that has
// none or is not a command. A second word that is not a subcommand (a
// plan file) is left out.
func (e *env) flagsCmd(ctx context.Context, args []string) int {
	if len(args) == 0 {
		return ExitOK
	}
	i := slices.IndexFunc(commands, func(c struct {
		name string
		subs []string
	}) bool {
		return c.name == args[0]
	})
	if i < 0 || args[0] == "help" || args[0] == "completion" {
		return ExitOK
	}
	cmd := []string{args[0]}
	if subs := commands[i].subs; len(subs) > 0 {
		if len(args) < 2 || !slices.Contains(subs, args[1]) {
			return ExitOK
		}
		cmd = append(cmd, args[1])
	}
	var out bytes.Buffer
	quiet := &env{stdout: &out, stderr: io.Discard}
	quiet.main(ctx, append(cmd, "--help"))
	for _, line := range strings.Split(out.String(), "\n") {
		if m := flagLine.FindStringSubmatch(line); m != nil {
			fmt.Fprintln(e.stdout, dashed(m[1]))
		}
	}
	return ExitOK
}

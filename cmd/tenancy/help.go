package main

import (
	"fmt"
	"slices"

	"github.com/tenancy-dev/tenancy/generator/agreement"
)

// builtins are the words run answers itself, beside the commands.
var builtins = []string{"help", "version"}

// runHelp is "tenancy help [COMMAND]": the overview without an argument, a
// command's own help (the same text as "tenancy COMMAND --help") with one.
func runHelp(e *env, args []string) int {
	switch {
	case len(args) == 0 || len(args) == 1 && slices.Contains(builtins, args[0]):
		usage(e.stdout)
		return exitOK
	case len(args) > 1:
		fmt.Fprintf(e.stderr, "tenancy help: expected at most one COMMAND, got %d\nRun 'tenancy --help' for the commands.\n", len(args))
		return exitUsage
	}
	c := lookupCommand(args[0])
	if c == nil {
		fmt.Fprintf(e.stderr, "tenancy help: %s\nRun 'tenancy --help' for the commands.\n", unknownCommand(args[0]))
		return exitUsage
	}
	return c.run(e, []string{"--help"})
}

func lookupCommand(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

// unknownCommand says that name is no command, with the closest one when
// name looks like a typo of it. The distance is the one unknown keys of the
// agreement are judged by (agreement.Suggest), so both kinds of typo are
// caught alike.
func unknownCommand(name string) string {
	known := slices.Clone(builtins)
	for _, c := range commands {
		known = append(known, c.name)
	}
	msg := fmt.Sprintf("unknown command %q", name)
	if s := agreement.Suggest(name, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return msg
}

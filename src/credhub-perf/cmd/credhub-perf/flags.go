package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/credhub-perf/credhub-perf/config"
)

// parseFlags parses a subcommand's flags. -h prints the full list; any
// other problem (an unknown flag, a bad value) is one line naming it and
// saying how to get the list, not the list itself: 130 lines of flags bury
// the one that was wrong. It returns -1 to go on, else the exit status.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) int {
	fs.SetOutput(io.Discard)
	err := config.ParseFlags(fs, args)
	if err == nil {
		return -1
	}
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stderr)
		fmt.Fprintf(stderr, "usage of %s:\n", fs.Name())
		fs.PrintDefaults()
		return 0
	}
	var retired *config.RetiredError
	if errors.As(err, &retired) {
		fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
		return 2
	}
	hint := ""
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if c := config.Closest(strings.TrimLeft(name, "-"), names); c != "" {
			hint = "; did you mean --" + c + "?"
		}
	}
	fmt.Fprintf(stderr, "%s: %v%s ('%s -h' lists the flags)\n", fs.Name(), err, hint, fs.Name())
	return 2
}

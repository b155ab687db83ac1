package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/credhub-perf/credhub-perf/workload"
)

// workloadCmd reads CredHub audit logs and writes workload.json and
// workload-arrivals.csv into --out, with a summary on stdout.
func workloadCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("credhub-perf workload", flag.ContinueOnError)
	out := fs.String("out", ".", "directory that receives workload.json and workload-arrivals.csv (created if missing)")
	keep := fs.Bool("keep-names", false, "list the 100 most requested credential names in workload.json (names are private: off by default)")
	if code := parseFlags(fs, flagsFirst(args), stderr); code >= 0 {
		return code
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: credhub-perf workload [--out DIR] [--keep-names] LOG... (credhub_security_events.log*, plain or .gz, or `bosh logs` tarballs)")
		return 2
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintf(stderr, "credhub-perf workload: --out: %v\n", err)
		return 2
	}
	csvPath := filepath.Join(*out, "workload-arrivals.csv")
	csvFile, err := os.OpenFile(csvPath+".tmp", os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		fmt.Fprintf(stderr, "credhub-perf workload: %v\n", err)
		return 2
	}
	defer os.Remove(csvPath + ".tmp")
	w, err := workload.Analyze(workload.Options{Paths: fs.Args(), KeepNames: *keep, Arrivals: csvFile, Version: version})
	if cerr := csvFile.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(stderr, "credhub-perf workload: %s\n", oneLine(err))
		return 2
	}
	jsonPath := filepath.Join(*out, "workload.json")
	if err := workload.WriteJSON(jsonPath, w); err != nil {
		fmt.Fprintf(stderr, "credhub-perf workload: %v\n", err)
		return 1
	}
	if err := os.Rename(csvPath+".tmp", csvPath); err != nil {
		fmt.Fprintf(stderr, "credhub-perf workload: %v\n", err)
		return 1
	}
	workload.WriteSummary(stdout, w)
	fmt.Fprintf(stdout, "wrote %s and %s\n", jsonPath, csvPath)
	return 0
}

// flagsFirst moves the flags before the log files, so that
// `workload a.log --out d` works as `workload --out d a.log` does.
func flagsFirst(args []string) []string {
	var flags, rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			rest = append(rest, args[i+1:]...)
			i = len(args)
		case (a == "--out" || a == "-out") && i+1 < len(args):
			flags = append(flags, a, args[i+1])
			i++
		case strings.HasPrefix(a, "-") && a != "-":
			flags = append(flags, a)
		default:
			rest = append(rest, a)
		}
	}
	return append(append(flags, "--"), rest...)
}

// oneLine keeps an error to the one line the exit-2 contract promises.
func oneLine(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s: %v", pe.Path, pe.Err)
	}
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

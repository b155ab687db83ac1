package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/credhub-perf/credhub-perf/config"
	"github.com/credhub-perf/credhub-perf/ramp"
)

// cleanupCmd removes what a run left in CredHub when it could not clean up
// itself (kill -9, a lost VM, a failed cleanup).
func cleanupCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("credhub-perf cleanup", flag.ContinueOnError)
	configFile := fs.String("config", "", "the run's configuration file (YAML or JSON), for the target flags")
	over := config.BindFlags(fs)
	if code := parseFlags(fs, args, stderr); code >= 0 {
		return code
	}
	cfg := config.Default()
	if *configFile != "" {
		if err := config.LoadFile(&cfg, *configFile); err != nil {
			fmt.Fprintf(stderr, "credhub-perf: %v\n", err)
			return 2
		}
	}
	if errs := over.Apply(&cfg); len(errs) > 0 {
		for _, err := range errs {
			fmt.Fprintf(stderr, "credhub-perf: config: %v\n", err)
		}
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	return ramp.Cleanup(ctx, ramp.CleanupOptions{Config: cfg, RunDirs: fs.Args(), Stdout: stdout, Log: stderr})
}

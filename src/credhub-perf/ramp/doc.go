// Package ramp is what `credhub-perf run`, `capacity` and `cleanup` do
// around the load engine (package load): it checks the target and the
// output directory before any load, seeds each scenario, runs its steps
// (a concurrency or rate ramp, or a capacity search that doubles and then
// bisects) after an optional warm-up, records every request in the run
// directory's CSV with meta.json and summary.json, and cleans up what the
// run wrote, whatever stopped it.
//
// With several testers (tester.count > 1) each tester runs the same
// schedule, and they meet through the CredHub they load: testerGroup is
// one tester's side of that protocol.
//
// Execute and Cleanup report every problem on their log and return an exit
// status (ExitOK, ExitFailed, ExitUsage) rather than an error: a run that
// fails halfway still leaves its results and says what is left in CredHub.
package ramp

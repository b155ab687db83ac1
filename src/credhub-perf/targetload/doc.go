// Package targetload measures how busy the target was while a run loaded
// it, and says which resource ended capacity: the CredHub instances, their
// database, or neither.
//
// Three sources give one sample format (Sample): each sample is one
// resource instance's CPU share over an interval, and its resident memory
// where known.
//
//   - Processes on this machine (ProcSource): by PID or process name, read
//     from /proc. CPU is user+system time over the interval, as a share of
//     the cores the processes may use (their affinity, capped by a cgroup
//     v2 cpu.max quota); memory is VmRSS. Every process of a name counts
//     (PostgreSQL runs a process per connection), from the second sample it
//     is seen in: its CPU before that cannot be placed in time.
//   - A BOSH deployment (BoshSource): `bosh -d DEP vms --vitals --json`,
//     run as a subprocess under a timeout. The director asks each agent for
//     its state when called, but the agent's CPU figures are percentages
//     over its own collection interval: bosh-agent samples the CPU every
//     10 s (platform.SigarStatsCollectionInterval) and reports the last
//     window. A vitals sample therefore stands for the 10 s before it was
//     taken; a step shorter than about 20 s gets at most one window that
//     lies wholly within it, and its figure mixes in the step before.
//     The whole VM is measured (every process on it), not CredHub alone.
//   - credhub-sim (SimSource): its /utilisation endpoint reports the busy
//     time its capacity model gave each emulated instance and its database,
//     on the model's own clock.
//
// Samples carry offsets on the run's CSV origin (the run start, or
// tester.start_at with several testers), so they are attributed to steps
// by time exactly as the CSV rows are, by whichever program reads the run
// directory later. They are written to target-samples.csv in the run
// directory (docs/csv-format.md).
//
// Judge turns a step's samples into per-resource figures and names the
// busiest; JudgeRun gives the run's verdict over the steps that count as
// capacity (thresholds: Busy, Saturated).
package targetload

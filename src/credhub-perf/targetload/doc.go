// Package targetload measures how busy the target was while a run loaded
// it, and says which resource ended capacity: the CredHub instances, their
// database, or neither.
//
// Three sources give one sample format (Sample): each sample is one
// resource instance's CPU share over an interval, its resident memory
// where known, and the machine it ran on: the CPUs it may use, how busy
// they were in all, stolen by the hypervisor, in iowait, and busy with
// work other than the sampled resources' (procmachine.go). A resource
// alone never tells the limit where resources share cores: CredHub at
// 73 % and PostgreSQL at 24 % of one core are a core 97 % busy, and a
// neighbour or the hypervisor can take what CredHub would use.
//
//   - Processes on this machine (ProcSource): by PID or process name, read
//     from /proc (Root, for a fixture). CPU is user+system time over the
//     interval, as a share of the cores the processes may use (their
//     affinity within the cgroup's cpuset, capped by a cgroup v2 cpu.max
//     quota); memory is VmRSS. Every process of a name counts (PostgreSQL
//     runs a process per connection), from the second sample it is seen
//     in: its CPU before that cannot be placed in time. The previous
//     reading is kept per resource and process, so one PID named for two
//     resources counts for each (warned). The machine is the process's
//     CPU set; /proc/stat's per-CPU lines give its figures, and the other
//     work is its busy time less the sampled processes confined to it.
//   - A BOSH deployment (BoshSource): `bosh -d DEP vms --vitals --json`,
//     run as a subprocess under a timeout. The director asks each agent for
//     its state when called, but the agent's CPU figures are percentages
//     over its own collection interval: bosh-agent samples the CPU every
//     10 s (platform.SigarStatsCollectionInterval) and reports the last
//     window. A vitals sample therefore stands for the 10 s before it was
//     taken; a step shorter than about 20 s gets at most one window that
//     lies wholly within it, and its figure mixes in the step before.
//     The whole VM is measured (every process on it), not CredHub alone:
//     each instance is a machine, "vm GROUP/ID", and a group that runs
//     CredHub and its database colocated (named twice in bosh_groups)
//     gives both the VM's busy share and no CPU of their own.
//   - credhub-sim (SimSource): its /utilisation endpoint reports the busy
//     time its capacity model gave each emulated instance and its database,
//     on the model's own clock, and, when it models them on shared cores,
//     each machine's busy, neighbour and stolen core-seconds. A read is
//     bounded (SimTimeout), and a step's end does not wait for a read of
//     it already under way or one that was slow last time.
//
// Samples carry offsets on the run's CSV origin (the run start, or
// tester.start_at with several testers), so they are attributed to steps
// by time exactly as the CSV rows are, by whichever program reads the run
// directory later. They are written to target-samples.csv in the run
// directory (docs/csv-format.md).
//
// Judge turns a step's samples into per-resource and per-machine figures
// and names the busiest; JudgeRun gives the run's verdict over the steps
// that count as capacity (machinejudge.go, runverdict.go): a machine past
// Busy that resources share, or that other work (OtherWork) or steal
// (Steal) took part of, comes before any one resource; "add testers" only
// when the tester ran out of CPU itself. Settings records what was
// sampled, for meta.json. The samples file is read a bounded line at a
// time, and names from outside are clipped in messages.
package targetload

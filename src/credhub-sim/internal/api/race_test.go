//go:build race

package api

// raceEnabled: built with -race, which makes the closed-loop clients and
// the server in this one process several times slower; a throughput in
// real time then measures the race detector.
const raceEnabled = true

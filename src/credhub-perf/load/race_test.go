//go:build race

package load_test

// raceEnabled: built with -race, which makes the engine, its clients and
// the test servers in this one process several times slower; a rate in
// real time then measures the race detector.
const raceEnabled = true

// Package results turns the requests a run recorded into what is said
// about it. It writes and reads the results CSV files (the credhub-perf
// format, and hey's and the hey fork's), keeps a step's figures in bounded
// memory (Stats, a log-linear Histogram, TypeStats per request type, the
// Steadiness of its halves), and builds the Summary behind summary.json
// and summary.txt: the steps' figures, which steps count as capacity
// (steady, not tester-bound, complete), the knee and the maximum
// throughput at the SLO, and why a run has none.
//
// It holds the rules that every tool applies to results: the merge of
// several testers' steps by slot (SummarizeFiles, SummarizeDir), the advice
// for tester-bound steps and the no-capacity reason. headroom-plot takes
// them from `credhub-perf summary --json` rather than keeping a copy; the
// two CSV readers are held to the same fixtures in testdata.
package results

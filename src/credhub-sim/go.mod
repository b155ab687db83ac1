module github.com/credhub-perf/credhub-sim

go 1.22

module github.com/credhub-perf/credhub-perf

go 1.22

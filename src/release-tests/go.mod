module github.com/credhub-perf/release-tests

go 1.22

require (
	github.com/cloudfoundry/bosh-cli/v7 v7.4.0
	github.com/cloudfoundry/bosh-utils v0.0.383
	gopkg.in/yaml.v2 v2.4.0
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/bmatcuk/doublestar v1.3.4 // indirect
	github.com/charlievieth/fs v0.0.3 // indirect
	github.com/credhub-perf/credhub-perf v0.0.0
	github.com/nu7hatch/gouuid v0.0.0-20131221200532-179d4d0c4d8d // indirect
	github.com/rogpeppe/go-internal v1.8.1 // indirect
	gopkg.in/check.v1 v1.0.0-20201130134442-10cb98267c6c // indirect
)

replace github.com/credhub-perf/credhub-perf => ../credhub-perf

module credhub-cli-build

go 1.25.7

require code.cloudfoundry.org/credhub-cli v0.0.0-20260727130059-9e78db728bcf

require (
	github.com/bmatcuk/doublestar v1.3.4 // indirect
	github.com/cloudfoundry/bosh-cli/v7 v7.10.7 // indirect
	github.com/cloudfoundry/bosh-utils v0.0.630 // indirect
	github.com/cloudfoundry/go-socks5 v0.0.0-20250423223041-4ad5fea42851 // indirect
	github.com/cloudfoundry/socks5-proxy v0.2.183 // indirect
	github.com/cppforlife/go-patch v0.2.0 // indirect
	github.com/fatih/color v1.19.0 // indirect
	github.com/hashicorp/go-version v1.9.0 // indirect
	github.com/jessevdk/go-flags v1.6.1 // indirect
	github.com/kr/pretty v0.3.1 // indirect
	github.com/mattn/go-colorable v0.1.15 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/crypto v0.54.0 // indirect
	golang.org/x/net v0.57.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/term v0.45.0 // indirect
	gopkg.in/tomb.v1 v1.0.0-20141024135613-dd632973f1e7 // indirect
	gopkg.in/yaml.v2 v2.4.0 // indirect
)

replace github.com/cloudfoundry/bosh-cli/v7 => github.com/cloudfoundry/bosh-cli/v7 v7.4.0

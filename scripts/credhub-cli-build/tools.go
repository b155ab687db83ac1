//go:build tools

// The build module's only import: the CredHub CLI's main package, so that
// `go mod tidy` records in go.mod and go.sum every module it is built from.
package tools

import _ "code.cloudfoundry.org/credhub-cli"

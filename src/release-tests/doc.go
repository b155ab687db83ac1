// Package releasetests checks the BOSH release without a director: the
// release builds offline, the job's templates render with bosh-cli's own
// renderer, the manifests interpolate, and the rendered errand runs against
// credhub-sim inside a private mount namespace.
package releasetests

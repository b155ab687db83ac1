#!/usr/bin/env bash
# Compiles the release's packages the way the agent does on a compilation
# VM, into $WORK/vcap (see rehearse-common.sh).
# Environment: WORK (holds release/packages/NAME.tgz), PARENT_MNT_NS,
# GOLANG_VERSION, CREDHUB_PERF_VERSION, BOSH_CLI_VERSION, CREDHUB_CLI_VERSION
# (package fingerprints).
source "$(dirname "$0")/rehearse-common.sh"
: "${GOLANG_VERSION:?}" "${CREDHUB_PERF_VERSION:?}" "${BOSH_CLI_VERSION:?}" "${CREDHUB_CLI_VERSION:?}"

compile() {
  local name=$1 version=$2
  local target=/var/vcap/data/compile/$name install=/var/vcap/data/packages/$name/$version
  mkdir -p "$target" "$install"
  tar -xzf "$WORK/release/packages/$name.tgz" -C "$target"
  ln -sfn "$install" "/var/vcap/packages/$name"
  echo "rehearse: compiling $name" >&2
  if ! (cd "$target" && env -i PATH="$bare_path" \
          BOSH_COMPILE_TARGET="$target" BOSH_INSTALL_TARGET="$install" \
          BOSH_PACKAGE_NAME="$name" BOSH_PACKAGE_VERSION="$version" \
          bash -x packaging) > "$WORK/compile-$name.log" 2>&1; then
    echo "rehearse: packaging $name failed; tail of $WORK/compile-$name.log:" >&2
    tail -n 30 "$WORK/compile-$name.log" >&2
    exit 91
  fi
  rm -rf "$target"
}
compile golang-1-linux "$GOLANG_VERSION"
compile credhub-perf "$CREDHUB_PERF_VERSION"
compile bosh-cli "$BOSH_CLI_VERSION"
compile credhub-cli "$CREDHUB_CLI_VERSION"
/var/vcap/packages/golang-1-linux/bin/go version > "$WORK/go-version"
# The errand VM gets only its job's packages: no Go at run time.
rm -rf /var/vcap/packages/golang-1-linux /var/vcap/data/packages/golang-1-linux

#!/usr/bin/env bash
# Local errand rehearsal, run by z_rehearsal_test.go inside
#   unshare --mount --propagation private
# It lays out a BOSH VM's /var/vcap on a test directory (bind-mounted over a
# tmpfs that hides the real /var for this namespace only), compiles the
# release's packages the way the agent does, installs the rendered job and
# runs its bin/run. Nothing outside $WORK is written.
#
# Environment: WORK (test directory with release/ and rendered/),
# PARENT_MNT_NS (the test's mount namespace, to refuse running in it),
# GOLANG_VERSION, CREDHUB_PERF_VERSION (package fingerprints).
set -euo pipefail
: "${WORK:?}" "${PARENT_MNT_NS:?}" "${GOLANG_VERSION:?}" "${CREDHUB_PERF_VERSION:?}"

if [ "$(readlink /proc/self/ns/mnt)" = "$PARENT_MNT_NS" ]; then
  echo "rehearse: not in a private mount namespace; refusing to mount over /var" >&2
  exit 90
fi
mount --make-rprivate /
mount -t tmpfs -o size=16m,mode=0755 rehearsal-var /var
mkdir -p /var/vcap "$WORK/vcap"
mount --bind "$WORK/vcap" /var/vcap
mkdir -p /var/vcap/data/compile /var/vcap/data/packages /var/vcap/packages /var/vcap/sys/log

# A bare PATH, as on a stemcell: packaging must bring its own Go.
bare_path=/usr/sbin:/usr/bin:/sbin:/bin

# compile NAME VERSION: what the agent does on a compilation VM.
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
/var/vcap/packages/golang-1-linux/bin/go version > "$WORK/go-version"
# The errand VM gets only its job's packages: no Go at run time.
rm -rf /var/vcap/packages/golang-1-linux /var/vcap/data/packages/golang-1-linux

job=/var/vcap/data/jobs/credhub-perf/rehearsal
mkdir -p "$job"
cp -a "$WORK/rendered/." "$job/"
chmod 0755 "$job"/bin/*
mkdir -p /var/vcap/jobs
ln -sfn "$job" /var/vcap/jobs/credhub-perf

echo "rehearse: running bin/run" >&2
rc=0
env -i PATH="$bare_path" /var/vcap/jobs/credhub-perf/bin/run \
  > "$WORK/errand.stdout" 2> "$WORK/errand.stderr" || rc=$?
echo "$rc" > "$WORK/errand.rc"
stat -c '%a %n' /var/vcap/jobs/credhub-perf/config/client.key /var/vcap/jobs/credhub-perf/config/config.yml > "$WORK/modes"

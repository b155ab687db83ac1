#!/usr/bin/env bash
# Uses the CLIs the release installs on the tester VM, as a `bosh ssh` user
# (root) would, after rehearse-compile.sh: DIR/rendered (the rendered job) is
# mounted at /var/vcap/jobs/credhub-perf; DIR/bosh-version receives
# `bosh --version`, DIR/credhub-env.out the settings after sourcing
# bin/credhub-env, and DIR/credhub-env.out.STEP and .STEP.rc each real
# `credhub` command's output and exit status: --version, then set, get,
# delete and get again of credential NAME (a value credential holding
# VALUE); with the tester's client certificate exported (mutual TLS only),
# also a curl of CredHub's path query with it. Packages come from
# $WORK/vcap (see rehearse-common.sh).
source "$(dirname "$0")/rehearse-common.sh"
dir=${1:?usage: rehearse-clis.sh DIR NAME VALUE}
name=${2:?usage: rehearse-clis.sh DIR NAME VALUE}
value=${3:?usage: rehearse-clis.sh DIR NAME VALUE}

mount --bind "$dir/rendered" /var/vcap/jobs/credhub-perf
env -i PATH="$bare_path" HOME="$dir" /var/vcap/packages/bosh-cli/bin/bosh --version > "$dir/bosh-version"
# A login shell's environment, then the job's settings: what an operator
# types after `sudo -i`. HOME is the test's: the CLI keeps its token there.
mkdir -p "$dir/home"
env -i PATH="$bare_path" HOME="$dir/home" bash -uo pipefail -c '
  out=$1 name=$2 value=$3
  source /var/vcap/jobs/credhub-perf/bin/credhub-env
  echo "credhub=$(command -v credhub)"
  echo "bosh=$(command -v bosh)"
  echo "server=$CREDHUB_SERVER"
  echo "client=${CREDHUB_CLIENT:-}"
  printf "%s\n" "$CREDHUB_CA_CERT" > "$out.ca"
  step() {
    local s=$1 rc=0
    shift
    "$@" > "$out.$s" 2>&1 || rc=$?
    echo "$rc" > "$out.$s.rc"
  }
  step version credhub --version
  step set credhub set -n "$name" -t value -v "$value" --output-json
  step get credhub get -n "$name" --quiet
  step delete credhub delete -n "$name"
  step get-deleted credhub get -n "$name"
  if [ -n "${CREDHUB_PERF_CLIENT_CERT:-}" ]; then
    step curl curl -sS --fail-with-body --cacert /var/vcap/jobs/credhub-perf/config/ca.crt \
      --cert "$CREDHUB_PERF_CLIENT_CERT" --key "$CREDHUB_PERF_CLIENT_KEY" \
      "$CREDHUB_SERVER/api/v1/data?path=/credhub-perf/"
  fi
' bash "$dir/credhub-env.out" "$name" "$value" > "$dir/credhub-env.out" 2>&1

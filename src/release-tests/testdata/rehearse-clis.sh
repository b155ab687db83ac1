#!/usr/bin/env bash
# Uses the CLIs the release installs on the tester VM, as a `bosh ssh` user
# (root) would, after rehearse-compile.sh: DIR/rendered (the rendered job) is
# mounted at /var/vcap/jobs/credhub-perf; DIR/bosh-version receives
# `bosh --version`, DIR/credhub-env.out what `credhub` and the settings give
# after sourcing bin/credhub-env. Packages come from $WORK/vcap (see
# rehearse-common.sh).
source "$(dirname "$0")/rehearse-common.sh"
dir=${1:?usage: rehearse-clis.sh DIR}

mount --bind "$dir/rendered" /var/vcap/jobs/credhub-perf
env -i PATH="$bare_path" HOME="$dir" /var/vcap/packages/bosh-cli/bin/bosh --version > "$dir/bosh-version"
# A login shell's environment, then the job's settings: what an operator
# types after `sudo -i`.
env -i PATH="$bare_path" HOME="$dir" bash -euo pipefail -c '
  source /var/vcap/jobs/credhub-perf/bin/credhub-env
  echo "credhub=$(command -v credhub)"
  echo "bosh=$(command -v bosh)"
  echo "server=$CREDHUB_SERVER"
  echo "cert_path=${CREDHUB_CLIENT_CERT_PATH:-}"
  echo "key_path=${CREDHUB_CLIENT_KEY_PATH:-}"
  echo "client=${CREDHUB_CLIENT:-}"
  credhub
  printf "%s\n" "$CREDHUB_CA_CERT" > "$0.ca"
' "$dir/credhub-env.out" > "$dir/credhub-env.out" 2>&1

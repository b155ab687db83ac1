#!/usr/bin/env bash
# Compiles the release's packages the way the agent does on a compilation
# VM, into $WORK/vcap (see rehearse-common.sh).
# Environment: WORK (holds release/packages/NAME.tgz), PARENT_MNT_NS,
# GOLANG_VERSION, CREDHUB_PERF_VERSION, BOSH_CLI_VERSION, CREDHUB_CLI_VERSION,
# PYTHON3_VERSION, HEADROOM_PLOT_VERSION, SCALING_STUDY_VERSION (package
# fingerprints), PACKAGE_CACHE (a directory outside the repository for
# compiled packages; empty: no cache), STEMCELL_ROOT and STEMCELL_ROOT_KEY
# (the stemcell-like root to compile in, and its cache key; empty: this
# machine's own root).
source "$(dirname "$0")/rehearse-common.sh"
: "${GOLANG_VERSION:?}" "${CREDHUB_PERF_VERSION:?}" "${BOSH_CLI_VERSION:?}" "${CREDHUB_CLI_VERSION:?}" "${PYTHON3_VERSION:?}" "${HEADROOM_PLOT_VERSION:?}" "${SCALING_STUDY_VERSION:?}"

# The agent runs packaging in BOSH_COMPILE_TARGET with BOSH_INSTALL_TARGET
# = /var/vcap/packages/NAME, a symlink to the versioned directory it then
# packs as the compiled package.
compile() {
  local name=$1 version=$2
  local target=/var/vcap/data/compile/$name install=/var/vcap/data/packages/$name/$version
  mkdir -p "$target" "$install"
  tar -xzf "$WORK/release/packages/$name.tgz" -C "$target"
  ln -sfn "$install" "/var/vcap/packages/$name"
  echo "rehearse: compiling $name" >&2
  local began=$SECONDS
  if ! (cd "$target" && env -i PATH="$bare_path" \
          BOSH_COMPILE_TARGET="$target" BOSH_INSTALL_TARGET="/var/vcap/packages/$name" \
          BOSH_PACKAGE_NAME="$name" BOSH_PACKAGE_VERSION="$version" \
          bash -x packaging) > "$WORK/compile-$name.log" 2>&1; then
    echo "rehearse: packaging $name failed; tail of $WORK/compile-$name.log:" >&2
    tail -n 30 "$WORK/compile-$name.log" >&2
    exit 91
  fi
  echo "$name $((SECONDS - began))" >> "$WORK/compile-times"
  rm -rf "$target"
}

# A compiled package is kept in PACKAGE_CACHE under the key the director's
# compiled-package cache uses: the package's fingerprint, its compile-time
# dependencies' fingerprints and the "stemcell" (the stemcell-like root's
# key, else this machine's OS), so CI
# pays CPython's compile (minutes) and credhub-perf's Go build (half a
# minute of CPU, with a cold Go build cache every time) once per change of
# any of them.
compile_cached() {
  local name=$1 key=$2 version=$3
  local os cached
  if [ -n "${STEMCELL_ROOT_KEY:-}" ]; then
    os=stemcell-root-$STEMCELL_ROOT_KEY
  else
    os=$(. /etc/os-release && echo "${ID}-${VERSION_ID:-unknown}")
  fi
  cached=${PACKAGE_CACHE:+$PACKAGE_CACHE/$name-$key-$os.tgz}
  if [ -n "$cached" ] && [ -s "$cached" ]; then
    local install=/var/vcap/data/packages/$name/$version
    mkdir -p "$install"
    tar -xzf "$cached" -C "$install"
    ln -sfn "$install" "/var/vcap/packages/$name"
    echo "$name cached" >> "$WORK/compile-times"
    echo "rehearse: $name from the compiled-package cache ($cached)" >&2
    return 0
  fi
  compile "$name" "$version"
  if [ -n "$cached" ]; then
    mkdir -p "$PACKAGE_CACHE"
    tar -czf "$cached.tmp.$$" -C "/var/vcap/data/packages/$name/$version" . && mv "$cached.tmp.$$" "$cached"
    # Keep the three newest builds of the package (branches in CI differ).
    ls -t "$PACKAGE_CACHE/$name"-*.tgz | tail -n +4 | xargs -r rm -f
  fi
}

compile golang-1-linux "$GOLANG_VERSION"
compile_cached credhub-perf "$CREDHUB_PERF_VERSION-golang-1-linux-$GOLANG_VERSION" "$CREDHUB_PERF_VERSION"
compile bosh-cli "$BOSH_CLI_VERSION"
compile credhub-cli "$CREDHUB_CLI_VERSION"
compile_cached python3 "$PYTHON3_VERSION" "$PYTHON3_VERSION"
compile_cached headroom-plot "$HEADROOM_PLOT_VERSION-python3-$PYTHON3_VERSION" "$HEADROOM_PLOT_VERSION"
compile scaling-study "$SCALING_STUDY_VERSION"
/var/vcap/packages/golang-1-linux/bin/go version > "$WORK/go-version"
# What a job on the VM sees: the stemcell's PATH only.
env -i PATH="$bare_path" /var/vcap/packages/python3/bin/python3 -c \
  'import ssl, zlib, bz2, sys; print(sys.version.split()[0], ssl.OPENSSL_VERSION)' > "$WORK/python3-check" 2>&1 ||
  echo "import failed: $(cat "$WORK/python3-check")" > "$WORK/python3-check"
# Which of the modules a stemcell's headers cannot build are there: none in
# the stemcell-like root, so nothing the VM runs may need them.
env -i PATH="$bare_path" /var/vcap/packages/python3/bin/python3 -c '
import importlib
for m in ("ctypes", "lzma", "sqlite3", "tkinter"):
    try:
        importlib.import_module(m)
        print(m, "present")
    except ImportError:
        print(m, "absent")' > "$WORK/python3-modules" 2>&1 || true
# The study script runs with the stemcell's bash and tools.
env -i PATH="$bare_path" /var/vcap/packages/scaling-study/bin/scaling-study --help > "$WORK/scaling-study-help" 2>&1 ||
  echo "exit status $?" >> "$WORK/scaling-study-help"
# The errand VM gets only its job's packages: no Go at run time.
rm -rf /var/vcap/packages/golang-1-linux /var/vcap/data/packages/golang-1-linux

#!/usr/bin/env bash
# Builds a stemcell-like root file system and packs it as OUT (a .tar.gz):
# Debian minbase from this machine's own mirror and keyring, plus only the
# development packages a BOSH Jammy/Noble stemcell carries (see
# docs/bosh.md, "What the tester VM's packages need from the stemcell").
# Headers a stemcell lacks (libffi, liblzma, SQLite, Tk) must stay out:
# CPython then builds without ctypes, lzma, sqlite3 and tkinter, as on the
# VM. Run as root (debootstrap creates device nodes and owners).
# Exit 3: no mirror in /etc/apt, no debootstrap or no network, with the
# reason on stderr (the caller reports the rehearsal's root NOT RUN).
# `stemcell-root.sh --mirror` prints the mirror and keyring it would use and
# exits; STEMCELL_APT_DIR (default /etc/apt) and STEMCELL_SUITE (default
# /etc/os-release's VERSION_CODENAME) are for its tests.
set -euo pipefail
out=${1:?usage: stemcell-root.sh OUT.tar.gz | --mirror}

# What the stemcell's image recipe (bosh-linux-stemcell-builder,
# base_ubuntu_packages) installs that a package's compile can use, in
# Debian's names; curl, openssl and ca-certificates are what the job's
# bin/run calls, xz-utils unpacks CPython's tarball.
packages=(build-essential libssl-dev zlib1g-dev libbz2-dev libreadline-dev
  libncurses-dev uuid-dev libxml2-dev libxslt1-dev libcurl4-openssl-dev cmake
  ca-certificates curl openssl xz-utils procps)
absent=(libffi-dev liblzma-dev libsqlite3-dev tk-dev)

# The machine's own mirror: the first URI serving this release's suite in
# an enabled deb822 .sources file, else in a one-line .list entry; its
# Signed-By keyring, else the distribution's archive keyring. awk reads
# them as bytes (LC_ALL=C): in a UTF-8 locale a stray byte is a warning on
# stderr.
. /etc/os-release
suite=${STEMCELL_SUITE:-${VERSION_CODENAME:-}}
[ -n "$suite" ] || { echo "/etc/os-release has no VERSION_CODENAME: which release to bootstrap is unknown" >&2; exit 3; }
apt_dir=${STEMCELL_APT_DIR:-/etc/apt}
mirror="" keyring=""
for f in "$apt_dir"/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  read -r mirror keyring < <(LC_ALL=C awk -v suite="$suite" '
    function flush() { if (uri ~ /^https?:\/\// && has_suite && deb && enabled && !done) { print uri, key; done = 1 }
                       uri = ""; key = ""; has_suite = 0; deb = 0; enabled = 1 }
    BEGIN { enabled = 1 }
    /^[[:space:]]*$/ { flush(); next }
    /^[[:space:]]*#/ { next }
    tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
    tolower($1) == "uris:" { uri = $2 }
    tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == suite) has_suite = 1 }
    tolower($1) == "signed-by:" { key = $2 }
    tolower($1) == "enabled:" { enabled = (tolower($2) != "no") }
    END { flush() }' "$f") || true
  [ -n "$mirror" ] && break
done
if [ -z "$mirror" ]; then
  for f in "$apt_dir"/sources.list "$apt_dir"/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    read -r mirror keyring < <(LC_ALL=C awk -v suite="$suite" '
      $1 == "deb" {
        key = ""
        if (match($0, /signed-by=[^] ]+/)) key = substr($0, RSTART + 10, RLENGTH - 10)
        for (i = 2; i < NF; i++) if ($i ~ /^https?:\/\// && $(i+1) == suite) { print $i, key; exit }
      }' "$f") || true
    [ -n "$mirror" ] && break
  done
fi
[ -n "$mirror" ] || { echo "no http(s) mirror for $suite in $apt_dir/sources.list*" >&2; exit 3; }
case $keyring in /*) ;; *) keyring=/usr/share/keyrings/${ID:-debian}-archive-keyring.gpg ;; esac
if [ "$out" = --mirror ]; then
  echo "$mirror $keyring"
  exit 0
fi
[ -f "$keyring" ] || { echo "no archive keyring $keyring (apt-get install ${ID:-debian}-archive-keyring)" >&2; exit 3; }
command -v debootstrap >/dev/null || { echo "debootstrap is not installed (apt-get install debootstrap)" >&2; exit 3; }
[ "$(id -u)" -eq 0 ] || { echo "building the root needs root (debootstrap); running as uid $(id -u)" >&2; exit 3; }

root=$(mktemp -d "${out%/*}/root.XXXXXX")
chmod 0755 "$root"  # apt's _apt user reads the lists in it
trap 'umount -R "$root/proc" 2>/dev/null || true; rm -rf "$root" "$root.log"' EXIT
echo "stemcell-root: debootstrap --variant=minbase $suite from $mirror" >&2
if ! debootstrap --variant=minbase --keyring="$keyring" "$suite" "$root" "$mirror" > "$root.log" 2>&1; then
  tail -n 20 "$root.log" >&2
  rm -f "$root.log"
  echo "debootstrap $suite from $mirror failed (is the mirror reachable?)" >&2
  exit 3
fi
rm -f "$root.log"
# Only the mirror debootstrap used: nothing else reaches the root's apt.
echo "deb $mirror $suite main" > "$root/etc/apt/sources.list"
rm -f "$root"/etc/apt/sources.list.d/*
mount -t proc proc "$root/proc"
echo "stemcell-root: apt-get install ${packages[*]}" >&2
if ! chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
    bash -euc 'apt-get update -q && apt-get install -y -q --no-install-recommends "$@" && apt-get clean' \
    bash "${packages[@]}" > "$root.log" 2>&1; then
  tail -n 20 "$root.log" >&2
  rm -f "$root.log"
  echo "apt-get install in the root from $mirror failed (is the mirror reachable?)" >&2
  exit 3
fi
rm -f "$root.log"
umount "$root/proc"
for p in "${absent[@]}"; do
  if chroot "$root" dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    echo "stemcell-root: $p got installed (a dependency pulled it in); a stemcell lacks it" >&2
    exit 1
  fi
done
for h in ffi.h lzma.h sqlite3.h tk.h; do
  if [ -n "$(find "$root/usr/include" -name "$h" -print -quit)" ]; then
    echo "stemcell-root: /usr/include has $h; a stemcell lacks it" >&2
    exit 1
  fi
done
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/usr/share/doc "$root"/usr/share/man
tar -C "$root" -czf "$out.tmp.$$" . && mv "$out.tmp.$$" "$out"
echo "stemcell-root: packed $(du -sh "$out" | cut -f1) into $out" >&2

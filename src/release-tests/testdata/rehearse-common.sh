# Sourced by rehearse-compile.sh, rehearse-run.sh and rehearse-clis.sh (run
# by z_rehearsal_test.go inside `unshare --mount --propagation private`):
# lays a BOSH VM's /var/vcap over $WORK/vcap. The tmpfs hides the real /var
# for this mount namespace only; nothing outside $WORK is written.
#
# STEMCELL_ROOT, when set, is a stemcell-like root file system
# (stemcell-root.sh, unpacked): the calling script then runs again chrooted
# into it, with $WORK, this directory and PACKAGE_CACHE mounted at their
# own paths, so packages compile against the stemcell's headers and the
# errand runs on its libraries, not this machine's.
set -euo pipefail
: "${WORK:?}" "${PARENT_MNT_NS:?}"

if [ "$(readlink /proc/self/ns/mnt)" = "$PARENT_MNT_NS" ]; then
  echo "rehearse: not in a private mount namespace; refusing to mount over /var" >&2
  exit 90
fi

if [ -n "${STEMCELL_ROOT:-}" ] && [ -z "${REHEARSE_IN_ROOT:-}" ]; then
  mount --make-rprivate /
  # A mount point of its own: unshare --propagation inside the chroot
  # changes the propagation of "/", which must be a mount.
  mount --bind "$STEMCELL_ROOT" "$STEMCELL_ROOT"
  mount -t proc proc "$STEMCELL_ROOT/proc"
  mount --rbind /dev "$STEMCELL_ROOT/dev"
  mount --rbind /sys "$STEMCELL_ROOT/sys"
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  for d in "$WORK" "$here" ${PACKAGE_CACHE:+"$PACKAGE_CACHE"}; do
    mkdir -p "$d" "$STEMCELL_ROOT$d"
    mount --bind "$d" "$STEMCELL_ROOT$d"
  done
  script=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
  export REHEARSE_IN_ROOT=1
  exec chroot "$STEMCELL_ROOT" /usr/bin/env PATH=/usr/sbin:/usr/bin:/sbin:/bin bash "$script" "$@"
fi

if [ -z "${REHEARSE_IN_ROOT:-}" ]; then
  mount --make-rprivate /
  mount -t tmpfs -o size=16m,mode=0755 rehearsal-var /var
fi
mkdir -p /var/vcap "$WORK/vcap"
mount --bind "$WORK/vcap" /var/vcap
mkdir -p /var/vcap/data/compile /var/vcap/data/packages /var/vcap/packages \
         /var/vcap/sys/log /var/vcap/jobs/credhub-perf

# A bare PATH, as on a stemcell: packaging must bring its own Go.
bare_path=/usr/sbin:/usr/bin:/sbin:/bin

# Sourced by rehearse-compile.sh and rehearse-run.sh (run by
# z_rehearsal_test.go inside `unshare --mount --propagation private`): lays
# a BOSH VM's /var/vcap over $WORK/vcap. The tmpfs hides the real /var for
# this mount namespace only; nothing outside $WORK is written.
set -euo pipefail
: "${WORK:?}" "${PARENT_MNT_NS:?}"

if [ "$(readlink /proc/self/ns/mnt)" = "$PARENT_MNT_NS" ]; then
  echo "rehearse: not in a private mount namespace; refusing to mount over /var" >&2
  exit 90
fi
mount --make-rprivate /
mount -t tmpfs -o size=16m,mode=0755 rehearsal-var /var
mkdir -p /var/vcap "$WORK/vcap"
mount --bind "$WORK/vcap" /var/vcap
mkdir -p /var/vcap/data/compile /var/vcap/data/packages /var/vcap/packages \
         /var/vcap/sys/log /var/vcap/jobs/credhub-perf

# A bare PATH, as on a stemcell: packaging must bring its own Go.
bare_path=/usr/sbin:/usr/bin:/sbin:/bin

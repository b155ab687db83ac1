#!/usr/bin/env bash
# Runs the rendered errand of each tester directory given as an argument, at
# the same time, each in a mount namespace of its own (as on separate VMs):
# DIR/rendered is mounted at /var/vcap/jobs/credhub-perf and DIR/log at
# /var/vcap/sys/log; DIR/rc, DIR/stdout, DIR/stderr receive bin/run's exit
# status and output. Packages come from $WORK/vcap (rehearse-compile.sh).
# A number in DIR/launch-delay starts that tester so many seconds late, as
# errand VMs created one after another do. A line in DIR/cancel-on cancels
# the errand as `bosh cancel-task` does once its stderr shows that line. A
# file DIR/break-plotter makes headroom-plot unrunnable on that VM.
source "$(dirname "$0")/rehearse-common.sh"

for dir in "$@"; do
  mkdir -p "$dir/log"
  chmod 0755 "$dir/rendered/bin/"*
  unshare --mount --propagation private bash -euo pipefail -c '
    dir=$1 bare_path=$2
    mount --bind "$dir/log" /var/vcap/sys/log
    mount --bind "$dir/rendered" /var/vcap/jobs/credhub-perf
    # DIR/break-plotter: this VM'"'"'s headroom-plot cannot be executed.
    if [ -f "$dir/break-plotter" ]; then
      mount --bind /dev/null /var/vcap/packages/headroom-plot/bin/headroom-plot
    fi
    if [ -f "$dir/launch-delay" ]; then sleep "$(cat "$dir/launch-delay")"; fi
    rc=0
    if [ -f "$dir/cancel-on" ]; then
      # bosh cancel-task as the agent does it: bin/run leads its own process
      # group (job control), which gets SIGTERM once its stderr shows the
      # line in DIR/cancel-on, and SIGKILL if it still exists 10 s later.
      set -m
      env -i PATH="$bare_path" /var/vcap/jobs/credhub-perf/bin/run \
        > "$dir/stdout" 2> "$dir/stderr" &
      pid=$!
      set +m
      for _ in $(seq 1200); do
        if grep -qF -- "$(cat "$dir/cancel-on")" "$dir/stderr"; then break; fi
        sleep 0.1
      done
      kill -TERM -- "-$pid"
      for _ in $(seq 100); do
        kill -0 -- "-$pid" 2>/dev/null || break
        sleep 0.1
      done
      if kill -0 -- "-$pid" 2>/dev/null; then
        echo killed > "$dir/cancel-killed"
        kill -KILL -- "-$pid"
      fi
      wait "$pid" || rc=$?
    else
      env -i PATH="$bare_path" /var/vcap/jobs/credhub-perf/bin/run \
        > "$dir/stdout" 2> "$dir/stderr" || rc=$?
    fi
    echo "$rc" > "$dir/rc"
  ' rehearse-tester "$dir" "$bare_path" &
done
wait

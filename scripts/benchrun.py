"""What the benches share (scripts/bench-generators, scripts/bench-openloop,
scripts/bench-plotting): building the null server and our hey, fetching
peers, a null-server instance per run, a generator pinned to its core with
its own rusage, reading hey's text summary, and where and how a bench
writes its results (results_dir, write_results: a dated directory and a
results.md that opens with the tree and the machine). Standard library
only: bench-generators runs under any python3. bench-plotting, in bash,
calls write_results as `python3 scripts/benchrun.py write-results NAME
COMMAND < TABLE`."""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.environ.get("CREDHUB_PERF_CACHE") or os.path.join(
    os.path.expanduser("~"), ".cache", "credhub-perf")


def die(msg, code=1):
    print(f"{os.path.basename(sys.argv[0])}: {msg}", file=sys.stderr)
    sys.exit(code)


def env_int(name, default, minimum):
    raw = os.environ.get(name, str(default))
    try:
        v = int(raw)
    except ValueError:
        die(f"{name}={raw!r} is not an integer", 2)
    if v < minimum:
        die(f"{name}={v} must be at least {minimum}", 2)
    return v


def log(msg):
    print(msg, flush=True)

def build_bench_helper(out, name="null-server"):
    """Builds the bench helper src/credhub-sim/cmd/NAME (null-server, or
    the open-loop bench's pacer-floor) into out; bin/NAME if that fails."""
    dst = os.path.join(out, name)
    r = subprocess.run(["go", "build", "-o", dst, "./cmd/" + name],
                       cwd=os.path.join(ROOT, "src", "credhub-sim"),
                       capture_output=True, text=True)
    if r.returncode == 0:
        return dst
    fallback = os.path.join(ROOT, "bin", name)
    if os.access(fallback, os.X_OK):
        log(f"note: building {name} failed ({last_line(r.stderr)}); using {fallback}")
        return fallback
    die(f"cannot build src/credhub-sim/cmd/{name}: " + last_line(r.stderr))


def find_ours(out):
    given = os.environ.get("BENCH_HEY")
    if given:
        if not os.access(given, os.X_OK):
            die(f"BENCH_HEY={given} is not an executable file", 2)
        return given, "BENCH_HEY"
    # Built fresh so the figures belong to the tree being benchmarked.
    dst = os.path.join(out, "hey")
    r = subprocess.run(["go", "build", "-o", dst, "./cmd/hey"],
                       cwd=os.path.join(ROOT, "src", "credhub-perf"),
                       capture_output=True, text=True)
    if r.returncode == 0:
        return dst, "built from src/credhub-perf/cmd/hey"
    fallback = os.path.join(ROOT, "bin", "hey")
    if os.access(fallback, os.X_OK):
        return fallback, f"bin/hey (building src/credhub-perf/cmd/hey failed: {last_line(r.stderr)})"
    return None, "cannot build src/credhub-perf/cmd/hey: " + last_line(r.stderr)


def last_line(text):
    lines = [l for l in (text or "").strip().splitlines() if l.strip()]
    return lines[-1].strip() if lines else "no output"


def get_peers(wanted):
    """Runs scripts/bench-peers and returns {name: path} plus versions."""
    names = {"hey": "hey", "vegeta": "vegeta", "oha": "oha", "wrk": "wrk"}
    want = [names[t] for t in wanted if t in names]
    paths, versions = {}, {}
    if not want:
        return paths, versions
    env = dict(os.environ, BENCH_PEERS=" ".join(want))
    r = subprocess.run([os.path.join(ROOT, "scripts", "bench-peers")], env=env,
                       stdout=subprocess.PIPE, text=True)
    for line in r.stdout.splitlines():
        log("  " + line)
        parts = line.split(None, 3)
        if len(parts) == 4 and parts[0] == "peer" and parts[2] != "unavailable:":
            key = {"rakyll-hey": "hey"}.get(parts[1], parts[1])
            paths[key], versions[key] = parts[3], parts[2]
    return paths, versions

class Server:
    """One null-server instance on the server core, for one run."""

    def __init__(self, binary, certs, mtls, cpu, workdir, extra=()):
        self.addr_file = os.path.join(workdir, "addr")
        if os.path.exists(self.addr_file):
            os.remove(self.addr_file)
        args = ["taskset", "-c", str(cpu), binary, "-listen", "127.0.0.1:0",
                "-cert", os.path.join(certs, "server.crt"),
                "-key", os.path.join(certs, "server.key"),
                "-addr-file", self.addr_file]
        if mtls:
            args += ["-client-ca", os.path.join(certs, "ca.crt")]
        args += list(extra)
        self.err_path = os.path.join(workdir, "server.stderr")
        self.err = open(self.err_path, "w")
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=self.err)
        deadline = time.time() + 15
        while not os.path.exists(self.addr_file):
            if self.proc.poll() is not None or time.time() > deadline:
                self.stop()
                die("null-server did not start: " + last_line(open(self.err_path).read()))
            time.sleep(0.02)
        with open(self.addr_file) as f:
            self.url = f.read().strip()

    def stop(self):
        """Stops the server and returns its counters."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.err.close()
        return server_stats(open(self.err_path).read())


def server_stats(text):
    """The counters of null-server's last words ("null-server stats:
    k=v ..."), {} when it printed none. Counters are integers; "groups" is
    the key-exchange breakdown (name:count,...), kept as text;
    handled_mean_us, served_mean_us and station_mean_us are means."""
    m = re.search(r"null-server stats: (.*)", text)
    if not m:
        return {}
    conv = {"groups": str, "handled_mean_us": float, "served_mean_us": float, "station_mean_us": float}
    return {k: conv.get(k, int)(v) for k, v in (kv.split("=", 1) for kv in m.group(1).split())}


def run_generator(args, cpu, stdout_path, stderr_path, limit):
    """Runs args pinned to cpu; returns (exit code, cpu seconds, max RSS MB, wall s).

    taskset execs the generator in the same process, so wait4 on that pid
    reports the generator's own rusage and nothing of the server.
    """
    with open(stdout_path, "w") as so, open(stderr_path, "w") as se:
        t0 = time.monotonic()
        p = subprocess.Popen(["taskset", "-c", str(cpu)] + args, stdout=so, stderr=se,
                             start_new_session=True)
        # A generator that hangs must not stall the bench: kill it past the limit.
        timer = threading.Timer(limit, lambda: os.killpg(p.pid, signal.SIGKILL))
        timer.start()
        try:
            _, status, ru = os.wait4(p.pid, 0)
        except BaseException:
            # Interrupted (Ctrl-C): the generator runs in its own session and
            # would not see the signal; do not leave it running.
            os.killpg(p.pid, signal.SIGKILL)
            os.waitpid(p.pid, 0)
            raise
        finally:
            timer.cancel()
        wall = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0, wall

def parse_hey(out, _workdir, _bins):
    rps = re.search(r"Requests/sec:\s*([\d.]+)", out)
    p50 = re.search(r"^\s*50(?:\.0+)?%\s+in\s+([\d.]+)\s*secs", out, re.M)
    p99 = re.search(r"^\s*99(?:\.0+)?%\s+in\s+([\d.]+)\s*secs", out, re.M)
    if not rps:
        raise ValueError("no 'Requests/sec:' line")
    note = ""
    if re.search(r"Error distribution:", out):
        note = "errors: " + " ".join(
            l.strip() for l in out.split("Error distribution:", 1)[1].strip().splitlines()[:2])
    return dict(rps=float(rps.group(1)),
                p50_ms=float(p50.group(1)) * 1e3 if p50 else None,
                p99_ms=float(p99.group(1)) * 1e3 if p99 else None, note=note)

def machine():
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for l in f:
                if l.startswith("model name"):
                    model = l.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else []
    return dict(nproc=os.cpu_count(), cpu_model=model, loadavg=" ".join(load),
                kernel=os.uname().release)


def results_dir(name):
    """Where a bench writes its raw outputs and results: BENCH_OUT, else a new
    dated directory $CREDHUB_PERF_CACHE/bench/NAME-<UTC time> (created)."""
    out = os.environ.get("BENCH_OUT") or os.path.join(
        CACHE, "bench", name + "-" + time.strftime("%Y%m%dT%H%M%S", time.gmtime()))
    os.makedirs(out, exist_ok=True)
    return out


def tree():
    """The commit benchmarked, and whether the worktree differed from it."""
    def git(*args):
        return subprocess.run(["git", "-C", ROOT] + list(args), capture_output=True, text=True)
    rev = git("rev-parse", "--short", "HEAD").stdout.strip() or "unknown"
    dirty = git("diff", "--quiet", "HEAD").returncode == 1
    return rev + (" (with uncommitted changes)" if dirty else "")


def header(start, end=None, more=""):
    """The first line of every bench's results.md: the tree, the machine
    (machine()'s) and its load average at the start and at the end (either
    may be None: a bench that only writes at its end has no start)."""
    m = start or end
    load = "load average " + ", ".join(f"at {when} {x['loadavg']}" for when, x in (("start", start), ("end", end)) if x)
    return (f"Tree: {tree()}. Machine: {m['nproc']} cores, {m['cpu_model']}, kernel {m['kernel']}, {load}."
            + (" " + more if more else ""))


def write_results(out, command, text, data=None, start=None, end=None, more=""):
    """Writes out/results.md (header(), the command that reproduces the
    figures, then text) and, given data, out/results.json with the tree and
    the machine beside it. start, end: machine() when the bench began and
    ended (end defaults to now when start is not given). Returns results.md's text."""
    if start is None and end is None:
        end = machine()
    md = f"{header(start, end, more)}\nCommand: {command}\n\n{text.rstrip()}\n"
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(md)
    if data is not None:
        with open(os.path.join(out, "results.json"), "w") as f:
            json.dump(dict(data, tree=tree(), machine=start, machine_end=end), f, indent=1, default=str)
    log(f"results: {out}/results.md" + (" and results.json" if data is not None else ""))
    return md


def on_term(signum, _frame):
    # Turn SIGTERM/SIGINT into an exception so the finally clauses stop the
    # server and the generator of the run in progress.
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    # python3 scripts/benchrun.py write-results NAME COMMAND < TABLE: a bench
    # written in bash writes its results as the Python ones do.
    if len(sys.argv) != 4 or sys.argv[1] != "write-results":
        die("usage: benchrun.py write-results NAME COMMAND < TEXT", 2)
    write_results(results_dir(sys.argv[2]), sys.argv[3], sys.stdin.read())

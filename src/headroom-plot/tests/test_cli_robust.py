"""headroom-plot under faults: no traceback for any input or signal, no partial file.

The faults: a path with non-UTF-8 bytes, a full disk and Ctrl-C/SIGTERM while rendering (each can end in a
traceback), a full disk mid-write (a truncated PNG), SIGTERM with a render child running (which could write a
PNG after the parent has exited).
"""
from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from headroom_plot import analysis, cli, command, output

from conftest import closed_step, write_meta, write_ours

EXE = os.path.join(os.path.dirname(sys.executable), "headroom-plot")
PNG_END = b"IEND\xaeB`\x82"


def _run_dir(root, name="run", rows_per_step=400):
    d = root / name
    d.mkdir(parents=True)
    rows, t = [], 0.0
    for c in (1, 2, 4, 8):
        step = closed_step(t, c, 0.005 * (1 + c / 4), rows_per_step, jitter=0.3)
        rows += [(r[0], r[1], 200, c) for r in step]
        t = max(r[0] + r[1] for r in step) + 0.01
    write_ours(d / "results.csv", rows)
    write_meta(d, instances=1, label=name,
               steps=[{"concurrency": c, "rate": 0, "requests": rows_per_step, "duration_s": 1} for c in (1, 2, 4, 8)])
    return d


def _leftovers(out):
    return sorted(p for p in os.listdir(out) if p.endswith(".tmp"))


def _complete(out):
    """Every file in out is whole: PNGs end with IEND, SVGs and reports with their closing tag."""
    for name in os.listdir(out):
        data = open(os.path.join(out, name), "rb").read()
        if name.endswith(".png"):
            assert data.endswith(PNG_END), name
        elif name.endswith(".svg"):
            assert data.rstrip().endswith(b"</svg>"), name
        elif name.endswith(".html"):
            assert data.rstrip().endswith(b"</html>"), name


def test_full_disk_leaves_no_partial_file(tmp, capsys, monkeypatch):
    """ENOSPC in the middle of writing an image: one line, exit 1, nothing truncated left."""
    from headroom_plot import plots
    real = plots._write_image  # every image file, whatever its format, is written by it
    calls = []

    def write_image(layout, fname, fmt):
        calls.append(fname)
        if len(calls) == 2:  # the second image: half written, then the disk is full
            with open(fname, "wb") as f:
                f.write(b"\x89PNG\r\n\x1a\n" + b"\0" * 1000)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(layout, fname, fmt)

    monkeypatch.setattr(plots, "_write_image", write_image)
    monkeypatch.setenv("HEADROOM_PLOT_NO_FORK", "1")
    out = tmp / "out"
    rc = cli.main([str(_run_dir(tmp)), "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 1
    assert err.count("\n") == 1 and "No space left on device" in err and "Traceback" not in err, err
    d, base = os.path.split(calls[1])
    assert base.startswith(".") and base.endswith(f".{output.TOKEN}.tmp")
    assert _leftovers(out) == [] and not os.path.exists(os.path.join(d, base[1:-len(f".{output.TOKEN}.tmp")]))
    _complete(out)
    assert len(os.listdir(out)) == 1  # the first image, complete


def test_report_write_failure_is_one_line(tmp, capsys, monkeypatch):
    real = output.write_text

    def write_text(path, text):
        if path.endswith("report.html"):
            raise output.OutputError(f"{path}: cannot write: No space left on device; free some space or "
                                     "choose another --out")
        return real(path, text)

    monkeypatch.setattr(output, "write_text", write_text)
    monkeypatch.setenv("HEADROOM_PLOT_NO_FORK", "1")
    out = tmp / "out"
    rc = cli.main([str(_run_dir(tmp)), "--out", str(out), "--format", "png"])
    err = capsys.readouterr().err
    assert rc == 1 and err.count("\n") == 1 and "report.html: cannot write" in err
    assert not (out / "report.html").exists() and _leftovers(out) == []


def _tiny_tmpfs_cmd(mnt, inner):
    """unshare a mount namespace (as root, or as a user in a user namespace) with a 96 KiB tmpfs."""
    if not shutil.which("unshare"):
        return None
    flags = ["-m"] if os.geteuid() == 0 else ["-r", "-m"]
    return ["unshare", *flags, "sh", "-c", f'mount -t tmpfs -o size=96k tmpfs "$0" && exec "$@"', str(mnt), *inner]


def test_real_full_disk_on_a_tiny_tmpfs(tmp):
    """The same on a real ENOSPC: a 96 KiB tmpfs holds the first image or two, not all of them."""
    if not os.path.exists(EXE):
        pytest.skip("console script not installed")
    mnt = tmp / "mnt"
    mnt.mkdir()
    probe = _tiny_tmpfs_cmd(mnt, ["true"])
    if probe is None or subprocess.run(probe, capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs unshare and root or user namespaces)")
    # run, then list what is left on the tmpfs (name, last 8 bytes) before the mount goes away
    script = probe[:probe.index("sh")] + [
        "sh", "-c", 'mount -t tmpfs -o size=96k tmpfs "$0" && "$@"; echo "rc=$?"; cd "$0" && '
        'for f in * .*; do [ -f "$f" ] && printf "%s " "$f" && tail -c 8 "$f" | od -An -c | tr -d " \\n"; echo; done',
        str(mnt), EXE, str(_run_dir(tmp)), "--out", str(mnt), "--format", "png,svg,pdf"]
    r = subprocess.run(script, capture_output=True, text=True, timeout=300)
    assert "rc=1" in r.stdout, (r.stdout, r.stderr)
    errlines = [line for line in r.stderr.splitlines() if line]
    assert len(errlines) == 1 and "No space left on device" in errlines[0] and "Traceback" not in r.stderr, r.stderr
    for line in r.stdout.splitlines()[1:]:
        name, _, tail = line.partition(" ")
        assert not name.endswith(".tmp"), r.stdout
        if name.endswith(".png"):
            assert tail.endswith("IEND256B`202"), line  # od -c of the PNG trailer


def test_non_utf8_paths_work(tmp):
    """A run directory and --out whose names are not UTF-8: plots written, paths printed as bytes."""
    if not os.path.exists(EXE):
        pytest.skip("console script not installed")
    root = os.fsencode(str(tmp))
    src = root + b"/r\xffun"
    shutil.copytree(str(_run_dir(tmp)), os.fsdecode(src))
    out = root + b"/out\xfe"
    r = subprocess.run([EXE, src, "--out", out, "--format", "png"], capture_output=True, timeout=300,
                       env={**os.environ, "LC_ALL": "C"})
    assert r.returncode == 0 and b"Traceback" not in r.stderr, r.stderr
    assert out + b"/report.md" in r.stdout.split(b"\n")
    assert b"\xef\xbf\xbd" in open(out + b"/report.md", "rb").read()  # the path shown with U+FFFD
    bad = root + b"/b\xffad.csv"
    with open(bad, "wb") as f:
        f.write(b"start-time,response-time\n2017-06-01T10:00:00Z,nan\n")
    r = subprocess.run([EXE, bad, "--out", out], capture_output=True, timeout=300, env={**os.environ, "LC_ALL": "C"})
    assert r.returncode == 2 and r.stderr.count(b"\n") == 1 and b":2: unparseable row" in r.stderr, r.stderr


def test_internal_error_is_one_line(tmp, capsys, monkeypatch):
    def boom(*a, **kw):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(analysis, "capacity_table", boom)
    monkeypatch.setenv("HEADROOM_PLOT_NO_FORK", "1")
    rc = cli.main([str(_run_dir(tmp)), "--out", str(tmp / "out"), "--format", "png"])
    err = capsys.readouterr().err
    assert rc == 1 and err.count("\n") == 1 and "internal error: ZeroDivisionError" in err and "HEADROOM_PLOT_DEBUG" in err


def test_signal_replaced_on_its_way_up_still_stops(tmp, capsys, monkeypatch):
    """A SIGTERM whose Interrupted CPython turns into "ImportError: initialization failed"
    (it arrived while matplotlib initialised a backend's C extension): still "stopped by
    SIGTERM", 143, one line, not an internal error."""
    def signal_mid_import(*a, **k):
        try:
            command.on_signal(signal.SIGTERM, None)  # what the interpreter runs when the signal lands
        except command.Interrupted as exc:
            raise ImportError("initialization failed") from exc

    monkeypatch.setattr(analysis, "capacity_table", signal_mid_import)
    monkeypatch.setenv("HEADROOM_PLOT_NO_FORK", "1")
    rc = cli.main([str(_run_dir(tmp)), "--out", str(tmp / "out"), "--format", "png"])
    err = capsys.readouterr().err
    assert rc == 143 and err.count("\n") == 1 and "stopped by SIGTERM" in err, err
    # The next call in the same process starts clean: a real ImportError is a bug again.
    monkeypatch.setattr(analysis, "capacity_table", lambda *a, **k: (_ for _ in ()).throw(ImportError("x")))
    rc = cli.main([str(_run_dir(tmp, "again")), "--out", str(tmp / "out2"), "--format", "png"])
    err = capsys.readouterr().err
    assert rc == 1 and "internal error: ImportError" in err, err


@pytest.mark.parametrize("no_fork", ["1", ""])
def test_signal_swallowed_by_code_we_do_not_own_still_stops(tmp, capsys, monkeypatch, no_fork):
    """A SIGINT whose Interrupted a C extension clears (numpy's Cython modules do while
    np.random is first imported, mid-bootstrap): the run still stops with 130 and one line,
    instead of finishing as if no Ctrl-C had come."""
    from headroom_plot import study
    real = study.build

    def swallowed(*a, **k):
        try:
            command.on_signal(signal.SIGINT, None)
        except command.Interrupted:
            pass
        return real(*a, **k)

    monkeypatch.setattr(study, "build", swallowed)
    monkeypatch.setenv("HEADROOM_PLOT_NO_FORK", no_fork)
    out = tmp / "out"
    rc = cli.main([str(_run_dir(tmp, "a")), str(_run_dir(tmp, "b")), "--out", str(out), "--format", "png"])
    err = capsys.readouterr().err
    assert rc == 130 and err.count("\n") == 1 and "stopped by SIGINT" in err, err
    assert _leftovers(out) == [] and not (out / "report.md").exists()


def test_unwritable_out_is_refused_before_reading(tmp, capsys):
    if os.geteuid() == 0:
        pytest.skip("root writes anywhere")
    out = tmp / "ro"
    out.mkdir()
    out.chmod(0o500)
    rc = cli.main([str(tmp / "nope"), "--out", str(out)])
    assert rc == 2


def _children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return None


def _start_and_wait_for_render_child(tmp, runs=3, hold=False):
    """Starts headroom-plot and returns (process, its render child, out dir) once the child is there.
    hold: the child is stopped (SIGSTOP) as soon as it is seen, so the render cannot end before the
    test's signal (on a fast machine it did, and the run ended normally): the caller continues it."""
    dirs = [_run_dir(tmp, f"r{i}", rows_per_step=3000) for i in range(runs)]
    out = tmp / "out"
    p = subprocess.Popen([EXE, *map(str, dirs), "--out", str(out), "--format", "png,svg,pdf"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and p.poll() is None:
        # the render child is a fork: same command line (not, say, a font-cache helper)
        kids = [k for k in _children(p.pid) if _cmdline(k) == _cmdline(p.pid)]
        if kids:
            if hold:
                os.kill(kids[0], signal.SIGSTOP)
            return p, kids[0], out
        time.sleep(0.005)
    p.kill()
    pytest.fail("the render child never appeared")


@pytest.mark.parametrize("sig,code,name,group", [(signal.SIGTERM, 143, "SIGTERM", False),
                                                 (signal.SIGINT, 130, "SIGINT", True)])
def test_signal_while_rendering(tmp, sig, code, name, group):
    """SIGTERM to the parent, or Ctrl-C (SIGINT to the process group): one line, the child stopped
    with it, no temporary file left, nothing written afterwards."""
    if not os.path.exists(EXE) or not os.path.exists("/proc/self/task"):
        pytest.skip("needs the console script and /proc")
    p, child, out = _start_and_wait_for_render_child(tmp, hold=True)
    assert _alive(child), "the render child ended before it could be held"
    try:
        if group:
            os.killpg(p.pid, sig)
        else:
            os.kill(p.pid, sig)
    finally:
        os.kill(child, signal.SIGCONT)  # it takes the stop signal (its own or the parent's) now
    _, err = p.communicate(timeout=120)
    assert p.returncode == code, err
    assert err.decode().count("\n") == 1 and f"stopped by {name}" in err.decode() and b"Traceback" not in err, err
    assert not _alive(child), "the render child outlived its parent"
    before = {f: os.stat(os.path.join(out, f)).st_mtime_ns for f in os.listdir(out)}
    time.sleep(1.0)  # would the child still write?  (it is gone; this only makes sure)
    after = {f: os.stat(os.path.join(out, f)).st_mtime_ns for f in os.listdir(out)}
    assert before == after and _leftovers(out) == []
    _complete(out)


def test_sigkill_of_the_parent_stops_the_child(tmp):
    """Even SIGKILL: the child gets the parent-death signal and stops without writing more."""
    if not os.path.exists(EXE) or not sys.platform.startswith("linux"):
        pytest.skip("needs the console script on Linux")
    p, child, out = _start_and_wait_for_render_child(tmp, hold=True)
    assert _alive(child), "the render child ended before it could be held"
    killed = time.time()
    try:
        os.kill(p.pid, signal.SIGKILL)
    finally:
        os.kill(child, signal.SIGCONT)  # its renders still ahead of it, and its parent gone
    p.communicate(timeout=60)  # the child holds the parent's pipes until it ends
    deadline = time.monotonic() + 60
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), "the render child kept running after its parent was killed"
    # The child had all its renders ahead of it (seconds each): left running it would finish
    # them and write their images after the parent had died.
    late = [f for f in os.listdir(out) if not f.endswith(".tmp") and os.stat(os.path.join(out, f)).st_mtime > killed + 0.5]
    assert late == [], f"written after the parent was killed: {late}"


@pytest.mark.parametrize("meta,rc,needle", [
    (b'{"label": "bad\\udcffla\\u0000bel", "scenario": "get"}', 0, None),  # was an internal error in FT2Font
    (b"\xff\xfe{}", 2, "meta.json: not UTF-8 text"),                        # was a UnicodeDecodeError traceback
    (b"[" * 100000, 2, "meta.json: JSON nested too deeply"),                 # was a RecursionError traceback
])
def test_hostile_meta_json(tmp, capsys, monkeypatch, meta, rc, needle):
    d = _run_dir(tmp)
    (d / "meta.json").write_bytes(meta)
    monkeypatch.setenv("HEADROOM_PLOT_NO_FORK", "1")
    got = cli.main([str(d), "--out", str(tmp / "out"), "--format", "png,svg,pdf"])
    err = capsys.readouterr().err
    assert got == rc, err
    assert "Traceback" not in err and "internal error" not in err, err
    if needle:
        assert err.count("\n") == 1 and needle in err, err


def test_out_that_cannot_be_created_is_refused(tmp, capsys):
    (tmp / "file").write_text("x")
    out = tmp / "file" / "o"
    rc = cli.main([str(_run_dir(tmp, "a")), "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and err == f"headroom-plot: error: --out {out}: cannot create: Not a directory\n", err

"""credhub-perf's own summary of a run, for the rules headroom-plot takes from it rather than applying a copy:
the several testers' merge (which tester's step goes into which merged step), what to do about tester-bound
steps and why a run has no capacity (`credhub-perf summary --json`, docs/csv-format.md).

Where the binary is (locate) is found without the user's help; when there is none, NotFound lets the callers
go on without what only credhub-perf decides, and note() says once what that was."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig

from .csvread import InputError

FIX = "build it with make build, or set CREDHUB_PERF=/path/to/credhub-perf"


class NotFound(InputError):
    """No credhub-perf to ask: headroom-plot goes on without what only credhub-perf decides (see
    runs.without_credhub_perf), except the several testers' merge, which it refuses with this line."""


def _repository_bin() -> str | None:
    """The bin/ of the repository this package sits in (an editable install, or a virtualenv inside the
    checkout): of the first directory above the package that holds src/headroom-plot."""
    d = os.path.dirname(os.path.realpath(__file__))
    while True:
        if os.path.isdir(os.path.join(d, "src", "headroom-plot")):
            return os.path.join(d, "bin")
        up = os.path.dirname(d)
        if up == d:
            return None
        d = up


def places() -> list[tuple[str, str]]:
    """Where credhub-perf is looked for after $CREDHUB_PERF, in order: (what, directory). Beside the
    headroom-plot that runs (the virtualenv's bin/ that `make venv` and pip install write it to, or the
    directory of a link to it), the repository's bin/ (`make build`), then PATH."""
    out = []
    if sys.argv and sys.argv[0] and not sys.argv[0].endswith(".py"):  # not python -m headroom_plot.cli
        for d in (os.path.abspath(sys.argv[0]), os.path.realpath(sys.argv[0])):  # a link, and what it points to
            out.append(("beside headroom-plot", os.path.dirname(d)))
    out.append(("beside headroom-plot", sysconfig.get_path("scripts")))
    repo = _repository_bin()
    if repo:
        out.append(("the repository's bin/", repo))
    out += [("PATH", d) for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    seen, unique = set(), []
    for what, d in out:
        if d and d not in seen:
            seen.add(d)
            unique.append((what, d))
    return unique


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def locate() -> tuple[str | None, str]:
    """The credhub-perf executable, or None and where it was looked for (for the note and the error):
    $CREDHUB_PERF when set (and only there: a path the user named is not second-guessed), else places()."""
    env = os.environ.get("CREDHUB_PERF")
    if env:
        return (env, "") if _executable(env) else (None, f"CREDHUB_PERF={env} is not an executable file")
    for _, d in places():
        p = os.path.join(d, "credhub-perf")
        if _executable(p):
            return p, ""
    looked = [what if what == "PATH" else f"{what} ({d})" for what, d in places()]
    looked = list(dict.fromkeys(looked))
    return None, "credhub-perf not found (looked at $CREDHUB_PERF, " + ", ".join(looked or ["PATH"]) + ")"


def binary(why: str) -> str:
    """The credhub-perf executable (locate()); NotFound naming where it looked and the fix when there is none
    (why: what headroom-plot needs it for)."""
    found, looked = locate()
    if found:
        return found
    raise NotFound(f"{looked}, and headroom-plot needs credhub-perf for {why}: {FIX}")


def note(not_added: list[tuple[str, str]]) -> str:
    """The one line that says what headroom-plot could not add without credhub-perf (not_added: (what, for which
    run), in order; "" when nothing was left out)."""
    if not not_added:
        return ""
    runs: dict[str, list[str]] = {}
    for what, run in not_added:
        runs.setdefault(what, [])
        if run not in runs[what]:
            runs[what].append(run)
    _, looked = locate()
    said = "; ".join(f"{what} ({', '.join(rs[:3])}{f' and {len(rs) - 3} more' if len(rs) > 3 else ''})"
                     for what, rs in runs.items())
    return f"{looked or 'credhub-perf not usable'}: drawn from the CSV files alone, without what credhub-perf " \
           f"decides: {said}; {FIX}"


def summary_doc(path: str, csvs: list[str], slo_percentile: float, slo_s: float, max_error_rate: float,
                why: str) -> dict:
    """`credhub-perf summary --json` of a run directory (or of the CSV files of one run) at this SLO: its
    summary (summary.json's keys), no_capacity_reason, merge_warnings and, per step, the files' own steps
    (parts) it is made of. It writes nothing into the run directory."""
    args = [binary(why), "summary", "--json", f"--slo.percentile={slo_percentile!r}",
            f"--slo.latency={round(slo_s * 1e9)}ns", f"--slo.max_error_rate={max_error_rate!r}"]
    args += [path] if os.path.isdir(path) else csvs
    try:
        p = subprocess.run(args, capture_output=True, check=False)
    except OSError as exc:
        raise InputError(f"{args[0]}: cannot run it ({exc.strerror}): {FIX}") from None
    if p.returncode != 0:
        said = p.stderr.decode("utf-8", "replace").strip().splitlines()
        raise InputError(said[0] if said else f"{path}: credhub-perf summary --json exited {p.returncode}")
    try:
        doc = json.loads(p.stdout)
    except ValueError as exc:
        raise InputError(f"{path}: credhub-perf summary --json wrote no JSON document ({exc}): {FIX}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("summary"), dict) or not isinstance(doc.get("steps"), list):
        raise InputError(f"{path}: credhub-perf summary --json wrote no summary: an older credhub-perf? {FIX}")
    return doc


def slo_matches(summary: dict, slo_percentile: float, slo_s: float, max_error_rate: float) -> bool:
    """Whether a summary.json was computed for this SLO."""
    slo = summary.get("slo")
    if not isinstance(slo, dict):
        return False
    want = (slo_percentile, slo_s, max_error_rate)
    got = (slo.get("percentile"), slo.get("latency_s"), slo.get("max_error_rate"))
    return all(isinstance(g, (int, float)) and not isinstance(g, bool) and abs(g - w) <= 1e-9 * max(1.0, abs(w))
               for g, w in zip(got, want))

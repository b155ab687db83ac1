"""credhub-perf's own summary of a run, for the rules headroom-plot takes from it rather than applying a copy:
the several testers' merge (which tester's step goes into which merged step), what to do about tester-bound
steps and why a run has no capacity (`credhub-perf summary --json`, docs/csv-format.md)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess

from .csvread import InputError

FIX = "build it with make build, or set CREDHUB_PERF=/path/to/credhub-perf"


def binary(why: str) -> str:
    """The credhub-perf executable: $CREDHUB_PERF, else credhub-perf on PATH; InputError naming the fix when
    neither exists (why: what headroom-plot needs it for)."""
    env = os.environ.get("CREDHUB_PERF")
    if env:
        if os.path.isfile(env) and os.access(env, os.X_OK):
            return env
        raise InputError(f"CREDHUB_PERF={env} is not an executable file, and headroom-plot needs credhub-perf for "
                         f"{why}: {FIX}")
    found = shutil.which("credhub-perf")
    if found:
        return found
    raise InputError(f"credhub-perf is not on PATH, and headroom-plot needs it for {why}: {FIX}")


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

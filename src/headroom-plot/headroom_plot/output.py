"""Output files written whole or not at all.

Every file goes to a hidden temporary name in its directory and is renamed over its final name
once complete, so a full disk (ENOSPC), a killed render child or Ctrl-C never leaves a truncated
PNG or report behind.  Temporary names carry this invocation's token, so the CLI can sweep what
an interrupted writer (or its render child) left without touching anything else.
"""
from __future__ import annotations

import glob
import os
from typing import Callable


class OutputError(Exception):
    """An output file could not be written: the message is one line naming the file and the fix."""


TOKEN = f"hp{os.getpid()}"  # set once per invocation; the render child inherits it


def tmp_name(path: str) -> str:
    d, base = os.path.split(path)
    return os.path.join(d, f".{base}.{TOKEN}.tmp")


def write(path: str, produce: Callable[[str], None]) -> str:
    """produce(tmp) writes the file at tmp; it then replaces path.  Returns path."""
    tmp = tmp_name(path)
    try:
        produce(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        _remove(tmp)
        why = exc.strerror or str(exc)
        raise OutputError(f"{path}: cannot write: {why}; free some space or choose another --out") from None
    except BaseException:
        _remove(tmp)
        raise
    return path


def write_text(path: str, text: str) -> str:
    # Text may hold paths with bytes that are not UTF-8 (surrogate escapes): show them as U+FFFD
    # rather than fail, as a terminal would.
    data = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace").encode("utf-8")

    def produce(tmp: str) -> None:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())

    return write(path, produce)


def prepare(out_dir: str) -> None:
    """Create out_dir (and its parents) and check it takes files: one OutputError naming --out otherwise."""
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"--out {out_dir}: cannot create: {exc.strerror}") from None
    check_writable(out_dir)


def check_writable(out_dir: str) -> None:
    """Fail early, before any parse or render, when out_dir takes no files."""
    probe = os.path.join(out_dir, f".probe.{TOKEN}.tmp")
    try:
        with open(probe, "wb") as f:
            f.write(b"x")
    except OSError as exc:
        raise OutputError(f"--out {out_dir}: cannot write there: {exc.strerror}; choose another --out") from None
    finally:
        _remove(probe)


def sweep(out_dir: str) -> None:
    """Remove this invocation's temporary files (an interrupted writer's, or the render child's)."""
    for p in glob.glob(os.path.join(glob.escape(out_dir), f".*.{TOKEN}.tmp")):
        _remove(p)


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass

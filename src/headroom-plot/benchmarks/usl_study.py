#!/usr/bin/env python3
"""Synthetic scaling study: run directories at 1, 2, 4, 8 and 16 instances whose capacity at
p95 <= 25 ms follows a Universal Scalability Law with known parameters (a worked example:
lambda 148 req/s, sigma 0.02, kappa 0.98/225, peaking near 1,010 req/s at 15 instances), with
3 % run-to-run noise. For the README's scalability picture and for trying the report:

    python usl_study.py OUT && headroom-plot OUT/*/ --out OUT/report --target-rps 1200
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import synth  # noqa: E402

from headroom_plot.scalability import usl  # noqa: E402

PARAMS = (148.0, 0.02, 0.98 / 225)


def main(out: str, counts=(1, 2, 4, 8, 16), seed: int = 11) -> None:
    rng = np.random.default_rng(seed)
    for n in counts:
        cap = float(usl(n, *PARAMS)) * (1 + 0.03 * rng.standard_normal())
        synth.run_dir(os.path.join(out, f"{n}-instances"), rng, cap, n, duration=8.0)
        print(f"{n:3d} instance(s): true capacity {cap:7.1f} req/s -> {out}/{n}-instances")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: usl_study.py OUT_DIR")
    main(sys.argv[1])

"""scripts/mva.py, the closed-loop bench's model, on known answers."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..", "..", "scripts"))
import mva  # noqa: E402


def test_single_server_mva():
    # M/M/1 with a delay: X(1) = 1/(S+Z); R(2) = S(1 + Q(1)) with Q(1) = X(1) S.
    assert mva.throughput(1, 1.0, 1.0, 1) == pytest.approx(0.5)
    assert mva.throughput(2, 1.0, 1.0, 1) == pytest.approx(2 / (1.5 + 1.0))
    # Without a delay a single server is always busy.
    assert mva.throughput(7, 0.01, 0.0, 1) == pytest.approx(100.0)


def test_multi_server_station():
    s, z = 0.005, 0.0003
    # Up to c clients never wait: each cycles S + Z.
    for n in (1, 2, 3, 4):
        assert mva.throughput(n, s, z, 4) == pytest.approx(n / (s + z))
    # No delay: c servers always busy once n >= c.
    assert mva.throughput(9, s, 0.0, 4) == pytest.approx(4 / s)
    # More clients never lower throughput (to rounding), which reaches the capacity and stays there.
    xs = [mva.throughput(n, s, z, 4) for n in range(1, 40)]
    assert all(b >= a * (1 - 1e-12) for a, b in zip(xs, xs[1:]))
    assert xs[-1] == pytest.approx(4 / s, rel=1e-9) and max(xs) <= 4 / s * (1 + 1e-12)


def test_machine_repairman_known_answer():
    # Two servers, three clients, S = 1, Z = 1: the birth-death chain's stationary
    # distribution gives X = 2 * 3/4 * ... computed by hand: states j = 0..3 in service
    # with rates up (3-j)/Z and down min(j,2)/S: pi ~ 1, 3, 3, 1.5 -> X = (3*1 + 2*3 + 2*1.5)/8.5.
    assert mva.throughput(3, 1.0, 1.0, 2) == pytest.approx((3 + 6 + 3) / 8.5)


def test_bad_arguments():
    for args in ((0, 1, 1, 1), (1, 0, 1, 1), (1, 1, -1, 1), (1, 1, 1, 0)):
        with pytest.raises(ValueError):
            mva.throughput(*args)

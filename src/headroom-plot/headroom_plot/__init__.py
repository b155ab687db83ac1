"""Headroom plots and the capacity report for credhub-perf runs."""

__version__ = "0.1.0"

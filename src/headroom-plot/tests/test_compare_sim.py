"""compare on credhub-sim runs: two set-ups whose true capacities differ by 20 %, five pairs.

credhub-sim's capacity model, 2 instances of 2 cores, reads served in an exponential service time of
8 ms (A: 500 gets/s at most) or 10 ms (B: 400, 20 % less), each run a closed-loop ramp past the 60 ms
SLO written by credhub-sim's virtual-ramp: the model on its virtual clock, so the throughputs are the
model's whatever else runs on the machine (in real time they would need a quiet one), and a seed gives
the same run every time. `headroom-plot compare` must call every B "lower" with an interval of B / A
that holds 0.8.

The ramp, 2, 6, 12, 24 and 36 clients, puts two steps on the throughput plateau below the SLO on
either side: past saturation a closed loop's throughput only wobbles, and the capacity is the highest
of the steps within the SLO, so a side with more of them would be read a little higher by the maximum
of its noise.
"""
import json
import subprocess

from headroom_plot import cli

PAIRS = 5


def _ramp(binary, out, service, seed, label):
    subprocess.run([binary, "-out", str(out), "-workers", "2", "-cores", "2", "-service-time", service,
                    "-service-dist", "exponential", "-seed", str(seed), "-concurrency", "2,6,12,24,36",
                    "-step-duration", "10s", "-label", label, "-slo-latency", "60ms"], check=True)
    return str(out)


def test_twenty_percent_less_capacity_is_lower_on_every_pair(virtual_ramp, tmp, capsys):
    verdicts = []
    for i in range(1, PAIRS + 1):
        a = _ramp(virtual_ramp, tmp / f"a{i}", "8ms", 2 * i, "8ms")
        b = _ramp(virtual_ramp, tmp / f"b{i}", "10ms", 2 * i + 1, "10ms")
        out = tmp / f"compare{i}"
        assert cli.main(["compare", a, b, "--out", str(out), "--format", "png"]) == 0
        capsys.readouterr()
        cap = json.load(open(out / "comparison.json"))["comparisons"][0]["capacity"]
        verdicts.append((cap["verdict"], cap["ratio"]["value"], cap["ratio"]["interval"], cap["text"]))
    for word, _ratio, ci, _text in verdicts:
        assert word == "lower" and ci[0] <= 0.8 <= ci[1], verdicts

"""headroom-plot compare beside each side's figure to size with after the open-loop confirmation: credhub-perf's
figures from summary.json, shown in the table, comparison.json and the report, named in the verdict when a
confirmation caught a gap, with the cold-target label; hostile values in those fields refused in one line."""
import json
import os
import subprocess

import pytest

from headroom_plot import cli, comparesizing, openloop
from headroom_plot.analysis import CapacityRow

from conftest import closed_step, write_meta, write_ours

SLO_S = 0.02
COLD = "warm-up off: the capacity may be a cold target's (written by the test)"
WARMUP_OFF = {"mode": "off", "concurrency": 1, "duration_s": 0, "requests": 0, "errors": 0, "steady": False,
              "reason": "off (warmup.run: 0)"}


def _open_rows(t0, rate, duration, latency_of):
    rows = [(t0 + i / rate, latency_of(i), 200, int(rate // 4), rate) for i in range(int(rate * duration))]
    rows.sort(key=lambda r: r[0] + r[1])
    return rows


def confirmed_run(path, credhub_perf, open_ok: bool, warmup=None, edit=None) -> str:
    """A ramp crossing p95 <= 20 ms near 313 req/s (100, 200, 300 req/s at 10 ms, 320 at 25 ms), then open
    steps at 200 and 300 req/s at 5 ms (open_ok: the confirmation agrees), or at 200 and 260 req/s with every
    fifth request of the 260 one at 50 ms (open arrivals hold the SLO only lower: their bracket, 200 to 260,
    is below the ramp's, 300 to 320). summary.json as credhub-perf writes it at that SLO, then edit(summary)
    applied to it."""
    os.makedirs(path)
    rows, t = [], 0.0
    for c, lat in ((1, 0.01), (2, 0.01), (3, 0.01), (8, 0.025)):
        rows += closed_step(t, c, lat, int(3.0 / lat) * c, jitter=0.2)
        t += 3.5
    rows += _open_rows(t, 200.0, 3.0, lambda i: 0.005)
    t += 3.5
    if open_ok:
        rows += _open_rows(t, 300.0, 3.0, lambda i: 0.005)
    else:
        rows += _open_rows(t, 260.0, 3.0, lambda i: 0.05 if i % 5 == 0 else 0.005)
    write_ours(os.path.join(path, "results.csv"), rows)
    write_meta(path, slo={"percentile": 95, "latency_s": SLO_S}, label=os.path.basename(path),
               **({"warmup": warmup} if warmup else {}))
    subprocess.run([credhub_perf, "summary", f"--slo.latency={SLO_S * 1000:g}ms", path], check=True,
                   capture_output=True)
    if edit:
        p = os.path.join(path, "summary.json")
        with open(p) as f:
            doc = json.load(f)
        edit(doc)
        with open(p, "w") as f:
            json.dump(doc, f)
    return path


def _gap(doc):
    """The confirmation's figure set to a known 180 req/s (credhub-perf found it between 200 and 260)."""
    assert doc["open_loop"]["agree"] is False, doc["open_loop"]
    doc["open_loop"]["capacity"] = doc["size_with"] = 180.0


def _cold(doc):
    assert doc["open_loop"]["agree"] is True, doc["open_loop"]
    doc["capacity_label"] = COLD


def _compare(tmp, a, b, capsys):
    out = tmp / "cmp"
    rc = cli.main(["compare", a, b, "--out", str(out), "--format", "png", "--replicates", "60"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    return out, cap.out


def test_a_gap_and_a_cold_label_are_named_beside_the_closed_loop_capacities(tmp, credhub_perf, capsys):
    a = confirmed_run(str(tmp / "before"), credhub_perf, open_ok=False, edit=_gap)
    b = confirmed_run(str(tmp / "after"), credhub_perf, open_ok=True, warmup=WARMUP_OFF, edit=_cold)
    out, stdout = _compare(tmp, a, b, capsys)
    doc = json.loads((out / "comparison.json").read_text())
    item = doc["comparisons"][0]
    sa, sb = item["a"], item["b"]
    assert (sa["sized_with"], sa["size_with_rps"], sa["open_loop_rps"]) == ("open loop", 180.0, 180.0)
    assert sa["sizing"] == "open loop: open arrivals hold the SLO only below the closed-loop capacity"
    assert sa["capacity_label"] is None and len(sa["headlines"]) == 1
    closed_b = item["capacity"]["b"]["value"]
    assert 300 < closed_b < 320 and 300 < item["capacity"]["a"]["value"] < 320
    # B sizes with its own closed-loop capacity (open arrivals confirm it), the one compared
    assert sb["sized_with"] == "closed loop" and sb["size_with_rps"] == pytest.approx(closed_b)
    assert sb["sizing"] == "closed loop, confirmed by open arrivals" and sb["open_loop_rps"] >= 0.95 * closed_b
    assert sb["capacity_label"] == COLD
    assert item["capacity"]["compares"] == "closed-loop capacities" and item["capacity"]["open_loop_gap"] is True
    text = item["capacity"]["text"]
    assert text.endswith(f"; these are closed-loop capacities, and open arrivals hold the SLO lower on before: size "
                         f"before with 180 req/s (open loop: open arrivals hold the SLO only below the closed-loop "
                         f"capacity), after with {closed_b:,.0f} req/s (closed loop, confirmed by open arrivals); "
                         f"after's capacity: {COLD}"), text
    # the table on stdout and the report: the verdict, and the figures to size with beside the capacities
    assert "  verdict: " + text in stdout
    size_line = next(line for line in stdout.splitlines() if line.lstrip().startswith("size with (req/s)"))
    assert "180 (open loop: open arrivals hold the SLO only below the closed-loop capacity)" in size_line
    assert (f"{closed_b:,.0f} (closed loop, confirmed by open arrivals) [warm-up off: may be a cold target's]"
            in size_line and size_line.rstrip().endswith("not compared"))
    md = (out / "report.md").read_text()
    assert "**Verdict:** " + text in md and "closed-loop capacity at the SLO (req/s), runs 1 / 1" in md
    assert "| 180 (open loop: open arrivals hold the SLO only below the closed-loop capacity) |" in md
    assert "after&#x27;s capacity: " + COLD.replace("'", "&#x27;") in (out / "report.html").read_text()


def test_agreeing_confirmations_leave_the_verdict_as_it_was(tmp, credhub_perf, capsys):
    a = confirmed_run(str(tmp / "before"), credhub_perf, open_ok=True)
    b = confirmed_run(str(tmp / "after"), credhub_perf, open_ok=True)
    out, stdout = _compare(tmp, a, b, capsys)
    item = json.loads((out / "comparison.json").read_text())["comparisons"][0]
    assert item["capacity"]["open_loop_gap"] is False
    assert "closed-loop capacities" not in item["capacity"]["text"] and "capacity:" not in item["capacity"]["text"]
    for side in ("a", "b"):
        assert item[side]["sizing"] == "closed loop, confirmed by open arrivals"
        assert item[side]["size_with_rps"] == pytest.approx(item["capacity"][side]["value"])


def _row(**kw):
    base = dict(scenario="get", group="1", instances=1, runs=1, max_tput=300.0, knee=None, efficiency=None)
    return CapacityRow(**dict(base, **kw))


def _conf(agree, capacity, size_with, note=""):
    c = openloop.Confirmation(steps=[], latency=None, offset=None, error=None, step=None)
    openloop.attach(c, {"open_loop": {"agree": agree, "capacity": capacity, "note": note}, "size_with": size_with})
    return c


class _Run:
    def __init__(self, confirmation):
        self.confirmation = confirmation


def test_sizing_words_follow_credhub_perfs_verdicts():
    none = comparesizing.sizing(_row(size_with=300.0), [_Run(None)])
    assert (none.value, none.status, none.gap) == (300.0, "closed loop, no open-loop confirmation", False)
    held_nowhere = comparesizing.sizing(_row(size_with=None, sized_by="open loop"), [_Run(_conf(False, None, None))])
    assert held_nowhere.gap and held_nowhere.value is None
    assert held_nowhere.status == ("open loop: no figure to size with (open arrivals held the SLO at no rate tried); "
                                   "size below the lowest rate tried")
    assert comparesizing.figure(held_nowhere) == held_nowhere.status
    two = [_Run(_conf(False, 200.0, 200.0)), _Run(_conf(True, 300.0, 300.0))]
    some = comparesizing.sizing(_row(size_with=250.0, sized_by="open loop", runs=2), two)
    assert some.status == "open loop in 1 of 2 runs: open arrivals hold the SLO only below the closed-loop capacity"
    unknown = comparesizing.sizing(_row(size_with=300.0), [_Run(_conf(None, None, 300.0, "no open-loop step counts"))])
    assert not unknown.gap and unknown.status == ("closed loop, open-loop confirmation inconclusive (no open-loop "
                                                  "step counts)")
    no_capacity = comparesizing.sizing(_row(max_tput=None, size_with=None), [_Run(None)])
    assert no_capacity.value is None and comparesizing.cell(no_capacity) == "- (closed loop, no open-loop confirmation)"
    # no gap, no label: the verdict is left alone
    assert comparesizing.verdict_text("lower: x", "A", "B", none, none) == "lower: x"
    assert comparesizing.to_json(comparesizing.Sizing(float("nan"), "closed loop", "s"))["size_with_rps"] is None


def _refused(capsys, tmp, a, b, *needles):
    rc = cli.main(["compare", a, b, "--out", str(tmp / "cmp"), "--format", "png", "--replicates", "0"])
    err = capsys.readouterr().err
    assert rc == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in lines[0], lines[0]


@pytest.mark.parametrize("edit,needles", [
    (lambda d: d.update(size_with="180"), ("summary.json: size_with: \"180\" is not a number",)),
    (lambda d: d.update(size_with=-5), ("size_with: -5 is out of range",)),
    (lambda d: d.update(size_with=True), ("size_with: true is not a number",)),
    (lambda d: d["open_loop"].update(agree="no"), ("open_loop.agree: \"no\" is not true or false",)),
    (lambda d: d["open_loop"].update(capacity=[180]), ("open_loop.capacity: [180] is not a number",)),
    (lambda d: d.update(open_loop=[1]), ("open_loop: expected a JSON object",)),
    (lambda d: d.update(capacity_label=5), ("capacity_label: 5 is not a string",)),
    (lambda d: d.update(headline={"x": 1}), ("headline: {\"x\": 1} is not a string",)),
])
def test_hostile_sizing_fields_are_refused_in_one_line(tmp, credhub_perf, capsys, edit, needles):
    a = confirmed_run(str(tmp / "before"), credhub_perf, open_ok=False, edit=edit)
    b = confirmed_run(str(tmp / "after"), credhub_perf, open_ok=True)
    _refused(capsys, tmp, a, b, *needles)


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_size_with_is_refused_in_one_line(tmp, credhub_perf, capsys, token):
    a = confirmed_run(str(tmp / "before"), credhub_perf, open_ok=False)
    p = os.path.join(a, "summary.json")
    with open(p) as f:
        text = f.read()
    assert '"size_with": ' in text
    head, rest = text.split('"size_with": ', 1)
    with open(p, "w") as f:
        f.write(head + '"size_with": ' + token + rest[rest.index(","):])
    b = confirmed_run(str(tmp / "after"), credhub_perf, open_ok=True)
    _refused(capsys, tmp, a, b, "summary.json: size_with: ")

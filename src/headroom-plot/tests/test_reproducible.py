"""The bootstrap intervals depend on the runs, not on where they lie: the same run directories analysed
on the tester VM (/var/vcap/sys/log/...) and on a workstation give byte-identical capacity.json."""
import json
import shutil

from headroom_plot import cli, study
from headroom_plot.runs import Options, load_run

from test_cli import _run_dir


def _analyse(runs, out):
    # PNG only: capacity.json is the subject, and the SVGs were a fifth of the render
    assert cli.main([str(r) for r in runs] + ["--out", str(out), "--slo-ms", "20", "--target-rps", "100000",
                                              "--format", "png", "--quiet"]) == 0
    return (out / "capacity.json").read_bytes()


def _two_runs(root, **meta):
    root.mkdir(parents=True)
    runs = [_run_dir(root, "one", 1, 1), _run_dir(root, "two", 2, 2)]
    for i, r in enumerate(runs):
        if meta:
            m = json.loads((r / "meta.json").read_text())
            m.update({k: (v if i == 0 else v + "-b") for k, v in meta.items()})
            (r / "meta.json").write_text(json.dumps(m))
    return runs


def test_capacity_json_is_identical_at_two_paths_with_run_id(tmp):
    here = _two_runs(tmp / "var" / "vcap" / "sys" / "log" / "credhub-perf", run_id="20261118T100000Z-get")
    there = tmp / "laptop" / "study"
    shutil.copytree(here[0].parent, there)
    a = _analyse(here, tmp / "out-vm")
    b = _analyse([there / "one", there / "two"], tmp / "out-laptop")
    assert a == b
    cap = json.loads(a)["scenarios"]["get"]["capacity"]
    # The intervals are really bootstrapped (else equality would prove nothing).
    assert all(c["interval"] and c["interval"][0] < c["interval"][1] for c in cap)


def test_capacity_json_is_identical_at_two_paths_without_run_id(tmp):
    """Runs written before meta.json had a run_id: the run directory's own name identifies it."""
    here = _two_runs(tmp / "a")
    there = tmp / "b" / "c"
    shutil.copytree(here[0].parent, there)
    assert _analyse(here, tmp / "out-a") == _analyse([there / "one", there / "two"], tmp / "out-b")


def test_seed_follows_the_run_id_not_the_path(tmp):
    (r,) = _two_runs(tmp / "x", run_id="rid-1")[:1]
    opts = Options(slo_s=0.020)
    moved = tmp / "y" / "elsewhere"
    shutil.copytree(r, moved)
    assert study.run_seed(load_run(str(r), opts)) == study.run_seed(load_run(str(moved), opts))
    m = json.loads((moved / "meta.json").read_text())
    m["run_id"] = "rid-2"
    (moved / "meta.json").write_text(json.dumps(m))
    assert study.run_seed(load_run(str(r), opts)) != study.run_seed(load_run(str(moved), opts))


def test_tester_directory_reads_its_own_meta(tmp):
    """On tester 1's VM the run directory holds results-1.csv, meta-1.json and summary-1.json only: the
    errand's report there reads that tester's own meta (scenario, SLO), not an empty one."""
    d = _run_dir(tmp, "run", None, 1)
    (d / "results.csv").rename(d / "results-1.csv")
    m = json.loads((d / "meta.json").read_text())
    m.update(scenario="set", tester=1, testers=2, slo={"percentile": 90, "latency_s": 0.02}, run_id="r")
    (d / "meta-1.json").write_text(json.dumps(m))
    (d / "meta.json").unlink()
    run = load_run(str(d), Options(slo_s=0.020))
    assert run.scenario == "set" and run.meta["tester"] == 1

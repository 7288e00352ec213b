"""Queue disciplines and ECN from the user's side: `ccsim qdiscs`, every bad discipline,
parameter or ECN setting as one line through the CLI (exit 2) and from Python, the examples,
and the same results in one process or several."""

from __future__ import annotations

import copy
import json
import math

import pytest

import ccsim
from ccsim.cli import cli

from _support import EXAMPLES, assert_one_line_error, results_here_and_in_another_process

BASE = {
    "duration": "5s",
    "bottleneck": {"rate": "10Mbps", "delay": "10ms", "buffer": "200pkt"},
    "flows": [{"cc": "cubic"}],
}


def _edit(fn) -> dict:
    d = copy.deepcopy(BASE)
    fn(d)
    return d


def test_qdiscs_command_lists_every_discipline_with_its_parameters(runner):
    res = runner.invoke(cli, ["qdiscs"])
    assert res.exit_code == 0, res.stderr
    for name in ("fifo", "red", "codel", "fq_codel", "pie", "dualpi2"):
        assert name in res.stdout
    res = runner.invoke(cli, ["qdiscs", "--json"])
    listed = json.loads(res.stdout)
    assert listed == ccsim.qdiscs()
    by_name = {q["name"]: q for q in listed}
    assert not by_name["fifo"]["can_mark"] and by_name["codel"]["can_mark"]
    codel = {p["name"]: p for p in by_name["codel"]["params"]}
    assert (codel["target"]["default"], codel["target"]["unit"]) == (5.0, "ms")
    assert (codel["interval"]["default"], codel["interval"]["unit"]) == (100.0, "ms")
    res = runner.invoke(cli, ["qdiscs", "pie"])
    assert res.exit_code == 0 and "tupdate" in res.stdout and "sch_pie.c" in res.stdout
    res = runner.invoke(cli, ["qdiscs", "sfq"])
    assert res.exit_code == 2
    assert "unknown queue discipline 'sfq'; accepted: fifo, red, codel, fq_codel, pie, dualpi2" in res.stderr


BAD = [
    # (edit, field, words in the message)
    (lambda d: d["bottleneck"].update(qdisc="fq-codel"), "bottleneck.qdisc",
     ['unknown queue discipline "fq-codel"', "fifo, red, codel, fq_codel, pie, dualpi2"]),
    (lambda d: d["bottleneck"].update(qdisc="codel", qdisc_params={"targt": "5ms"}), "bottleneck.qdisc_params.targt",
     ['unknown parameter of queue discipline "codel"', "target, interval, limit"]),
    (lambda d: d["bottleneck"].update(qdisc="codel", qdisc_params={"target": "0ms"}), "bottleneck.qdisc_params.target",
     ['"0ms" is out of range for "codel"', "[0.001, 60000] (ms)"]),
    (lambda d: d["bottleneck"].update(qdisc="pie", qdisc_params={"alpha": "fast"}), "bottleneck.qdisc_params.alpha",
     ['"fast" is not valid for "pie"']),
    (lambda d: d["bottleneck"].update(qdisc="red", qdisc_params={"min_th": 30, "max_th": 10}), "bottleneck.qdisc_params",
     ["min_th", "max_th"]),
    (lambda d: d["bottleneck"].update(ecn=True), "bottleneck.ecn", ['"fifo" cannot mark', "red, codel, fq_codel, pie, dualpi2"]),
    (lambda d: d["bottleneck"].update(qdisc="codel", ecn="on"), "bottleneck.ecn", ['expected true or false, got "on"']),
    (lambda d: d.update(tcp={"ecn": 1}), "tcp.ecn", ["expected true or false, got 1"]),
]


@pytest.mark.parametrize("edit, field, words", BAD, ids=[b[1] + ":" + b[2][0][:24] for b in BAD])
def test_bad_discipline_input_is_one_line_naming_the_field(tmp_path, runner, edit, field, words):
    assert_one_line_error(runner, tmp_path, _edit(edit), field, words)


def test_a_discipline_on_an_unlimited_link_direction_is_refused(tmp_path, runner):
    net = {
        "duration": "5s",
        "links": [{"between": ["a", "b"], "rate": "10Mbps", "delay": "5ms", "qdisc": "codel",
                   "reverse": {"rate": "unlimited", "qdisc": "fq_codel"}}],
        "flows": [{"cc": "cubic", "src": "a", "dst": "b"}],
    }
    assert_one_line_error(runner, tmp_path, net, "links[0].reverse.qdisc", ['"fq_codel" on a direction without a rate'])


def test_dctcp_without_ecn_runs_as_reno_and_says_so():
    with pytest.warns(Warning, match="dctcp needs ECN"):
        res = ccsim.run(_edit(lambda d: d["flows"][0].update(cc="dctcp")))
    assert any("dctcp" in w and "ecn" in w for w in res.warnings), res.warnings


@pytest.mark.parametrize("name", ["dctcp.toml", "l4s.toml"])
def test_the_ecn_examples_mark_instead_of_dropping(runner, tmp_path, name):
    out = tmp_path / "out"
    res = runner.invoke(cli, ["run", str(EXAMPLES / name), "--out", str(out)])
    assert res.exit_code == 0, res.stderr
    summary = json.loads((out / "summary.json").read_text())
    bn = summary["bottleneck"]
    assert bn["marks"] > 1000 and bn["drops"] == 0, bn
    dctcp = [f for f in summary["flows"] if f["cc"] == "dctcp"]
    assert all(f["ce_received"] > 0 and f["ece_reductions"] > 0 for f in dctcp)


def test_the_dctcp_example_holds_the_queue_near_k_with_the_link_full():
    res = ccsim.run(str(EXAMPLES / "dctcp.toml")).to_dict()
    bn = res["bottleneck"]
    # K = 20 packets; the DCTCP analysis's band for 2 flows is about [K - A + N, K + N] with an
    # amplitude A of a few packets (tests/ecn.rs derives it): the mean stays within K +- 5.
    assert abs(bn["queue_mean_pkts"] - 20) < 5, bn["queue_mean_pkts"]
    assert bn["utilization"] > 0.99 and bn["drops"] + bn["aqm_drops"] == 0


def test_the_bufferbloat_sweep_file_expands_to_the_three_disciplines():
    from ccsim.sweep.expansion import expand, load_sweep_file

    base, table, runs = load_sweep_file(EXAMPLES / "bufferbloat.toml")
    specs = expand(base, table, runs, experiment="bufferbloat")
    assert sorted({s.tags["qdisc"] for s in specs}) == ["codel", "fifo", "fq_codel"]
    assert len(specs) == 6


def test_a_discipline_gives_the_same_results_in_another_process():
    toml_text = (EXAMPLES / "l4s.toml").read_text().replace('duration = "30s"', 'duration = "3s"')
    here, other = results_here_and_in_another_process(toml_text, seed=3)
    assert here == other
    assert here["bottleneck"]["qdisc"] == "dualpi2" and here["bottleneck"]["marks"] > 0
    assert not math.isnan(here["bottleneck"]["queue_delay_mean_ms"])

"""The general network form ([[links]]): every bad topology is one line naming the field
through the CLI (exit 2) and from Python; the examples run; results are the same in one
process or several."""

from __future__ import annotations

import copy

import pytest

import ccsim
from ccsim.cli import cli

from _support import EXAMPLES, assert_one_line_error, results_here_and_in_another_process

LINE = {
    "duration": "5s",
    "links": [
        {"between": ["a", "r1"], "rate": "1Gbps", "delay": "1ms", "buffer": "100pkt"},
        {"between": ["r1", "r2"], "rate": "10Mbps", "delay": "10ms", "buffer": "1bdp"},
        {"between": ["r2", "b"], "rate": "1Gbps", "delay": "1ms", "buffer": "100pkt"},
        {"between": ["z1", "z2"], "rate": "1Gbps", "delay": "1ms"},
    ],
    "flows": [{"cc": "cubic", "src": "a", "dst": "b"}],
}


def _edit(fn) -> dict:
    d = copy.deepcopy(LINE)
    fn(d)
    return d


BAD = [
    # (edit, field, words in the message)
    (lambda d: d["flows"][0].update(src="q"), "flows[0].src", ['unknown node "q"', '"a", "r1"']),
    (lambda d: d["flows"][0].update(path=["a", "r1", "x", "b"]), "flows[0].path[2]", ['unknown node "x"']),
    (lambda d: d["flows"][0].update(path=["a", "r2", "b"]), "flows[0].path[1]", ['no link or Wi-Fi hop between "a" and "r2"']),
    (lambda d: d["flows"][0].update(dst="z1"), "flows[0].dst", ['no route from "a" to "z1"']),
    (lambda d: d["links"].append({"between": ["r1", "r1"], "rate": "1Gbps", "delay": "1ms"}), "links[4].between",
     ["links a node to itself"]),
    (lambda d: d["links"].append({"between": ["r2", "r1"], "rate": "1Gbps", "delay": "1ms"}), "links[4].between",
     ["second link between the same two nodes", "links[1]"]),
    (lambda d: d["flows"][0].update(path=["r1", "r2", "b"]), "flows[0].path[0]", ['starts at "r1", not at src "a"']),
    (lambda d: d["flows"][0].update(path=["a", "r1", "r2"]), "flows[0].path[2]", ['ends at "r2", not at dst "b"']),
    (lambda d: d["flows"][0].update(path=["a", "r1", "a", "r1", "r2", "b"]), "flows[0].path[2]", ['"a" appears twice']),
    (lambda d: d["flows"][0].update(access_rate="1Gbps"), "flows[0].access_rate", ["not used with [[links]]"]),
    (lambda d: d.update(bottleneck={"rate": "1Mbps", "delay": "1ms"}), "bottleneck", ["either [bottleneck]", "or [[links]]"]),
    (lambda d: d["links"][1].update(rate="fast"), "links[1].rate", ['malformed rate "fast"', '"unlimited"']),
    (lambda d: d["links"][1].update(reverse={"speed": "1Mbps"}), "links[1].reverse.speed", ["unknown key", "rate"]),
    (lambda d: d["links"][1].pop("delay"), "links[1].delay", ["missing required field"]),
    (lambda d: d["links"][1].update(between=["r1"]), "links[1].between", ["expected two node names"]),
    (lambda d: d["flows"][0].pop("dst"), "flows[0].dst", ["missing required field", "a node name of [[links]]"]),
]



def _chain(d: dict, hops: int) -> None:
    """Replace the links by a chain a - n1 - ... - b of `hops` unlimited links."""
    names = ["a", *[f"n{i}" for i in range(1, hops)], "b"]
    d["links"] = [{"between": [x, y], "rate": "unlimited", "delay": "0ms"} for x, y in zip(names, names[1:])]


BAD.append((lambda d: _chain(d, 10_001), "flows[0].dst", ["the route has 10001 hops", "at most 10000"]))


@pytest.mark.parametrize("edit, field, words", BAD, ids=[b[1] + ":" + b[2][0][:20] for b in BAD])
def test_bad_topology_is_one_line_naming_the_field(tmp_path, runner, edit, field, words):
    assert_one_line_error(runner, tmp_path, _edit(edit), field, words)


def test_the_default_path_is_in_the_normalised_scenario():
    sc = ccsim.Scenario.from_dict(LINE).validate()
    assert sc.to_dict()["flows"][0]["path"] == ["a", "r1", "r2", "b"]
    res = ccsim.run(LINE)
    assert res.flows[0]["path"] == ["a", "r1", "r2", "b"]
    assert "bottleneck" not in res.to_dict()
    links = res.links.set_index("id")
    assert links.loc["r1->r2", "rate_mbps"] == 10.0
    assert links.loc["r1->r2", "utilization"] > 0.9
    # ACKs cross the reverse directions: they are counted there.
    assert links.loc["r2->r1", "packets_in"] > 1000


@pytest.mark.parametrize("name", ["parking_lot.toml", "reverse_traffic.toml"])
def test_the_examples_run(tmp_path, runner, name):
    out = tmp_path / "out"
    res = runner.invoke(cli, ["run", str(EXAMPLES / name), "--out", str(out)])
    assert res.exit_code == 0, res.stderr
    assert (out / "links.parquet").exists()
    d = ccsim.run(EXAMPLES / name).to_dict()
    if name == "parking_lot.toml":
        long, *cross = d["flows"]
        assert all(long["throughput_mbps"] < f["throughput_mbps"] for f in cross)
    else:
        assert {tuple(f["path"]) for f in d["flows"]} == {("a", "r1", "r2", "b"), ("b", "r2", "r1", "a")}


def test_a_general_network_gives_the_same_result_in_another_process():
    text = (EXAMPLES / "parking_lot.toml").read_text(encoding="utf-8").replace('duration = "60s"', 'duration = "10s"')
    here, other = results_here_and_in_another_process(text, 5)
    assert here == other


def test_link_queues_are_a_long_format_time_series_of_every_buffered_direction():
    res = ccsim.run(EXAMPLES / "reverse_traffic.toml")
    lq = res.link_queues
    buffered = {"a->r1", "r1->a", "r1->r2", "r2->r1", "r2->b", "b->r2"}
    assert set(lq["link"].astype(str)) == buffered
    assert len(lq) == len(buffered) * 600  # 60 s at 100 ms
    # Sampled, the queue's mean is the time-weighted mean the link reports.
    links = res.links.set_index("id")
    for lid in ("r1->r2", "r2->r1"):
        sampled = lq.loc[lq["link"] == lid, "queue_pkts"].mean()
        assert sampled == pytest.approx(links.loc[lid, "queue_mean_pkts"], rel=0.1)
    # A dumbbell's only buffered direction is the bottleneck, the queue the flows' rows show.
    d = ccsim.run(EXAMPLES / "cubic_pair.toml")
    assert set(d.link_queues["link"].astype(str)) == {"router->receiver"}
    ts = d.timeseries[d.timeseries["flow"] == 0]
    assert d.link_queues["queue_pkts"].tolist() == ts["queue_pkts"].tolist()

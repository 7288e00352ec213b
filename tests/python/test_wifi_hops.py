"""Wi-Fi hops in the general network form ([[wifi]] beside [[links]]): the 802.11 DCF is a
shared medium of the one network model, so a scenario mixes wired links and Wi-Fi hops. The
[wireless] line and a [[wifi]] line are the same medium; ACKs contend for the channel; the
drift regressions hold on Wi-Fi hops behind a wired path; bad input is one line naming the
field; results are the same in another process."""

from __future__ import annotations

import copy
import statistics

import pytest

import ccsim
from ccsim.cli import cli

from _support import EXAMPLES, assert_one_line_error, results_here_and_in_another_process

MIXED = {
    "duration": "10s",
    "seed": 1,
    "links": [
        {"between": ["server", "router"], "rate": "1Gbps", "delay": "10ms", "buffer": "1bdp"},
        {"between": ["router", "ap"], "rate": "20Mbps", "delay": "5ms", "buffer": "1bdp"},
    ],
    "wifi": [{"stations": ["ap", "relay", "phone"], "profile": "80211g"}],
    "flows": [{"cc": "cubic", "src": "server", "dst": "phone"}],
}


def _edit(fn) -> dict:
    d = copy.deepcopy(MIXED)
    fn(d)
    return d


def _stations(res) -> dict[str, dict]:
    return {s["node"]: s for s in res.to_dict()["stations"]}


def test_the_example_runs_and_the_wifi_line_is_its_bottleneck(tmp_path, runner):
    out = tmp_path / "out"
    res = runner.invoke(cli, ["run", str(EXAMPLES / "wifi_last_hop.toml"), "--out", str(out)])
    assert res.exit_code == 0, res.stderr
    r = ccsim.run(EXAMPLES / "wifi_last_hop.toml")
    f = r.flows[0]
    assert f["path"] == ["server", "router", "ap", "relay", "phone"]
    # Two 802.11n hops carry less than the wired 20 Mbps: the router's link is not saturated,
    # the access point's interface queue (1,000 packets) is where the queue builds.
    assert 5 < f["throughput_mbps"] < 20
    assert r.links.set_index("id").loc["router->ap", "utilization"] < 0.9
    assert f["rtt_mean_ms"] > 100  # far above the 30 ms base RTT: the AP's queue
    st = r.stations.set_index("node")
    assert list(st.index) == ["ap", "relay", "phone"] and (st["medium"] == 0).all()


def test_acks_cross_the_same_channel_and_the_relay_forwards_both_ways():
    res = ccsim.run(MIXED)
    st = _stations(res)
    # The phone sends only TCP ACKs; they reach the server over the Wi-Fi hops and the links.
    assert st["phone"]["tx_success"] > 1000
    assert res.links.set_index("id").loc["ap->router", "packets_in"] > 1000
    # The relay forwards what it receives from both sides: every frame it delivered came from
    # the AP (data) or the phone (ACKs), and almost none were lost in its queue.
    relay, inbound = st["relay"]["tx_success"], st["ap"]["tx_success"] + st["phone"]["tx_success"]
    assert 0.95 * inbound <= relay <= inbound, (relay, inbound)


def _line(seed: int, hops: int, env: str) -> dict:
    return {"duration": "20s", "seed": seed, "wireless": {"hops": hops, "profile": "80211n-20mhz", "environment": env},
            "flows": [{"cc": "cubic"}]}


def _wifi(seed: int, hops: int, env: str) -> dict:
    names = [f"s{i}" for i in range(hops + 1)]
    return {"duration": "20s", "seed": seed,
            "wifi": [{"stations": names, "profile": "80211n-20mhz", "environment": env}],
            "flows": [{"cc": "cubic", "src": names[0], "dst": names[-1]}]}


@pytest.mark.parametrize("env", ["darkroom", "indoor"])
def test_a_wifi_line_is_the_wireless_line_with_its_own_random_streams(env):
    """The same medium and settings; only the random streams differ (a [[wifi]] line draws
    from streams of its own), so the mean of 5 seeds agrees to within seed noise. Measured
    (10 seeds, 4 hops, CUBIC): darkroom 5.158 vs 5.162 Mbps (sd 0.02), indoor 2.569 vs 2.579
    (sd 0.04)."""
    a = statistics.mean(ccsim.run(_line(s, 4, env)).flows[0]["throughput_mbps"] for s in range(1, 6))
    b = statistics.mean(ccsim.run(_wifi(s, 4, env)).flows[0]["throughput_mbps"] for s in range(1, 6))
    assert b == pytest.approx(a, rel=0.02), (a, b)
    # Not the same run: the streams differ.
    assert ccsim.run(_line(1, 4, env)).flows[0]["bytes_acked"] != ccsim.run(_wifi(1, 4, env)).flows[0]["bytes_acked"]


def test_cubic_cwnd_stays_bounded_by_a_small_rwnd_behind_a_wired_path():
    """The drift regression (tcp_cwnd_validate) on Wi-Fi hops behind a wired path, as on the
    dumbbell: cwnd grows only while the window is cwnd-limited, to at most twice the packets in
    flight."""
    rwnd_pkts = 16 * 1024 // 1448
    d = _edit(lambda d: d.update(tcp={"rwnd": "16KiB"}, duration="30s"))
    f = ccsim.run(d).flows[0]
    assert f["retransmits"] == 0 and f["throughput_mbps"] > 1.0, f
    assert rwnd_pkts <= f["cwnd_final_pkts"] <= 2 * rwnd_pkts, f


def test_rack_recovers_losses_on_wifi_hops_behind_a_wired_path():
    """RACK's reordering timer on Wi-Fi hops behind a wired path: short transfers over two
    802.11g hops with 5% frame errors and no MAC retries; RFC 6675 needs the RTO for a lost
    segment with fewer than three after it, RACK recovers it in fast recovery (see the
    [wireless] line's test of the same)."""
    def totals(recovery: str) -> dict[str, int]:
        t = {"rto_count": 0, "fast_recoveries": 0, "retransmits": 0}
        for seed in range(1, 61):
            d = _edit(lambda d: d.update(duration="3s", seed=seed, tcp={"recovery": recovery}))
            d["wifi"][0].update(fer=0.05, retry_limit=1)
            d["flows"][0]["size"] = "5792B"
            f = ccsim.run(d).flows[0]
            for k in t:
                t[k] += int(f[k])
        return t

    rfc, rack = totals("rfc6675"), totals("rack")
    assert rfc["rto_count"] >= 15, rfc
    assert rack["retransmits"] == rfc["retransmits"], (rfc, rack)
    assert 4 * rack["rto_count"] <= 3 * rfc["rto_count"], (rfc, rack)
    assert rack["fast_recoveries"] > rfc["fast_recoveries"], (rfc, rack)


BAD = [
    (lambda d: d["wifi"][0].pop("stations"), "wifi[0].stations", ["missing required field", "stations in line order"]),
    (lambda d: d["wifi"][0].update(stations=["ap"]), "wifi[0].stations", ["2 to 65 node names"]),
    (lambda d: d["wifi"][0].update(stations=["ap", "relay", "ap"]), "wifi[0].stations[2]", ['"ap" appears twice']),
    (lambda d: d["wifi"][0].update(stations=["router", "ap", "phone"]), "wifi[0].stations[1]",
     ['"router" and "ap" are already joined by links[1]']),
    (lambda d: d["wifi"].append({"stations": ["phone", "relay"]}), "wifi[1].stations[1]",
     ['"phone" and "relay" are already joined by wifi[0]']),
    (lambda d: d["wifi"][0].update(profile="80211ax"), "wifi[0].profile", ["unknown profile", "80211g"]),
    (lambda d: d["wifi"][0].update(channel=6), "wifi[0].channel", ["unknown key", "stations"]),
    (lambda d: d["wifi"][0].update(fer=2), "wifi[0].fer", ["a probability in [0, 1]"]),
    (lambda d: d["flows"][0].update(path=["server", "router", "ap", "phone"]), "flows[0].path[3]",
     ['no link or Wi-Fi hop between "ap" and "phone"']),
    (lambda d: d.update(wireless={"hops": 2}), "links", ["not used with a [wireless] line", "[[wifi]]"]),
    (lambda d: d.update(wifi={"stations": ["a", "b"]}), "wifi", ["expected an array of tables ([[wifi]])"]),
]


@pytest.mark.parametrize("edit, field, words", BAD, ids=[b[1] + ":" + b[2][0][:20] for b in BAD])
def test_bad_wifi_input_is_one_line_naming_the_field(tmp_path, runner, edit, field, words):
    assert_one_line_error(runner, tmp_path, _edit(edit), field, words)


def test_a_mixed_network_gives_the_same_result_in_another_process():
    text = (EXAMPLES / "wifi_last_hop.toml").read_text(encoding="utf-8").replace('duration = "30s"', 'duration = "5s"')
    here, other = results_here_and_in_another_process(text, 7)
    assert here == other
    assert here["stations"] and here["flows"][0]["bytes_acked"] > 0


def test_the_builder_writes_links_and_wifi_entries():
    sc = (ccsim.Scenario(duration="10s", seed=1)
          .add_link("server", "router", "1Gbps", "10ms", buffer="1bdp")
          .add_link("router", "ap", "20Mbps", "5ms", buffer="1bdp")
          .add_wifi(["ap", "relay", "phone"], profile="80211g")
          .add_flow("cubic", src="server", dst="phone"))
    assert sc.to_dict() == MIXED
    assert ccsim.run(sc).flows[0]["bytes_acked"] == ccsim.run(MIXED).flows[0]["bytes_acked"]

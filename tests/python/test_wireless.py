"""The multi-hop 802.11 line through the scenario format, the CLI, the Python API and the
results store (the model itself is tested in crates/ccsim-core/src/wireless)."""

from __future__ import annotations

import json

import pytest

import ccsim
from ccsim.cli import cli

from _support import EXAMPLES


def _line(hops: int, **wireless) -> ccsim.Scenario:
    return ccsim.Scenario(duration="5s", seed=1).wireless(hops=hops, profile="80211g", **wireless)


def _udp_pps(hops: int, pps: int, **wireless) -> float:
    r = ccsim.run(_line(hops, **wireless).add_udp_flow(f"{pps}pps", packet_size=1470))
    return r.flows[0]["received"] / 5.0


def test_cli_runs_the_wireless_examples(runner):
    for name in ["wireless_udp.toml", "wireless_tcp.toml"]:
        res = runner.invoke(cli, ["run", str(EXAMPLES / name), "--json"])
        assert res.exit_code == 0, res.output
        d = json.loads(res.stdout)
        assert d["network"] == "wireless"
        assert len(d["stations"]) == d["wireless"]["hops"] + 1
        for f in d["flows"]:
            assert f["sent"] >= f["received"] + f["lost"]
            assert f["throughput_mbps"] > 0
    res = runner.invoke(cli, ["run", str(EXAMPLES / "wireless_udp.toml")])
    assert res.exit_code == 0
    assert "3 hops, 80211n-20mhz, darkroom" in res.stdout
    assert "0 -> 3" in res.stdout


def test_udp_below_saturation_is_carried_whole():
    r = ccsim.run(_line(2).add_udp_flow("200pps", packet_size=1470))
    f = r.summary.iloc[0]
    assert f["protocol"] == "udp" and f["cc"] == "udp"
    assert f["lost"] == 0
    # 200 pkt/s of 1470 bytes for 5 s (the last packets may still be on their way).
    assert 999 <= f["received"] <= 1000
    assert f["throughput_mbps"] == pytest.approx(200 * 1470 * 8 / 1e6, rel=0.002)


def test_rises_then_falls_with_the_host_model_at_1_to_4_hops():
    """The seed's two modes: with a per-packet CPU cost in each station the delivered rate
    rises with the input rate, peaks, then falls (the source's CPU starves its NIC); without a
    host model it saturates and stays flat."""
    rates = [200, 600, 1000, 1400, 1800]
    for hops in range(1, 5):
        got = [_udp_pps(hops, r, host="rpi3") for r in rates]
        k = got.index(max(got))
        assert 0 < k < len(rates) - 1, (hops, got)
        assert got[-1] < 0.5 * max(got), (hops, got)
        assert got[0] == pytest.approx(200, rel=0.01)
        flat = [_udp_pps(hops, r) for r in (3000, 6000)]
        assert flat[1] >= 0.97 * flat[0], (hops, flat)


def test_loss_appears_from_two_hops_on():
    # 802.11g: 2000 pkt/s of 1470 bytes (23.5 Mbps) fits one hop (about 29.9 Mbps of payload)
    # but exceeds every longer line (16.3 Mbps at two hops).
    one = ccsim.run(_line(1).add_udp_flow("2000pps", packet_size=1470)).flows[0]
    assert one["lost"] == 0
    for hops in (2, 3, 4):
        f = ccsim.run(_line(hops).add_udp_flow("2000pps", packet_size=1470)).flows[0]
        assert f["loss_ratio"] > 0.05, (hops, f)


def test_tcp_over_the_line_has_time_series_and_algorithm_events():
    sc = ccsim.Scenario(duration="20s", seed=2, sample_interval="500ms")
    sc.wireless(hops=3).add_flow("bbr-expire", params={"rate_th": 1.5})
    r = ccsim.run(sc)
    ts = r.timeseries
    assert len(ts) == 40 and set(ts.flow) == {0}
    assert ts.cwnd_pkts.max() > 0 and ts.rtprop_ms.notna().all()
    # The ACKed bytes in the time series add up to the flow's total.
    assert int(ts.bytes_acked.iloc[-1]) == int(r.summary.bytes_acked.iloc[0])
    assert (r.cc_events.kind == "forced_expire").any()
    f = r.flows[0]
    assert f["protocol"] == "tcp" and f["retransmits"] >= 0 and f["rtt_mean_ms"] > 0


def test_same_seed_same_result_and_seed_matters():
    sc = _line(3, environment="indoor").add_udp_flow("900pps")
    a, b, c = ccsim.run(sc).to_dict(), ccsim.run(sc).to_dict(), ccsim.run(sc, seed=2).to_dict()
    for d in (a, b, c):
        d.pop("wall_seconds")
    assert a == b
    assert a["flows"] != c["flows"]


@pytest.mark.parametrize(
    "wireless, flow, message",
    [
        ({"hops": 0}, {"cc": "cubic"}, "wireless.hops: 0 is out of range; accepted: an integer in [1, 64]"),
        ({"hops": 2, "profile": "80211b"}, {"cc": "cubic"}, 'wireless.profile: unknown profile "80211b"; accepted: 80211g, 80211n-20mhz'),
        ({"hops": 2, "environment": "office"}, {"cc": "cubic"}, "accepted: darkroom, indoor"),
        ({"hops": 2, "rts_cts": True}, {"cc": "cubic"}, "RTS/CTS is not modelled"),
        ({"hops": 2, "host": "pi"}, {"cc": "cubic"}, "accepted: none, rpi3 or a table"),
        ({"hops": 2, "cs_reach": 0}, {"cc": "cubic"}, "wireless.cs_reach: 0 is out of range"),
        ({"hops": 2}, {"protocol": "udp", "rate": "10pps", "cc": "cubic"}, "flows[0].cc: not used by a UDP flow"),
        ({"hops": 2}, {"protocol": "udp", "rate": "10pps", "size": "1MB"}, "the datagram size is packet_size"),
        ({"hops": 2}, {"protocol": "udp", "rate": "-3pps"}, "flows[0].rate"),
        ({"hops": 2}, {"protocol": "sctp"}, 'flows[0].protocol: invalid value "sctp"; accepted: "tcp" or "udp"'),
        ({"hops": 2}, {"cc": "cubic", "access_delay": "1ms"}, "flows[0].access_delay: not used in a [wireless] scenario"),
        ({"hops": 2}, {"cc": "cubic", "src": 1, "dst": 1}, "flows[0].dst: 1 is the flow's own source station"),
        ({"hops": 2}, {"cc": "cubic", "dst": 3}, "flows[0].dst: 3 is out of range; accepted: an integer in [0, 2]"),
    ],
)
def test_bad_wireless_input_names_field_value_and_accepted(wireless, flow, message):
    data = {"duration": "1s", "wireless": wireless, "flows": [flow]}
    with pytest.raises(ccsim.ScenarioError) as e:
        ccsim.run(data)
    assert message in str(e.value)


def test_bad_wireless_input_from_the_cli(runner, write_scenario):
    path = write_scenario({"duration": "1s", "wireless": {"hops": 2, "profile": "80211ac"}, "flows": [{"cc": "cubic"}]})
    res = runner.invoke(cli, ["run", str(path)])
    assert res.exit_code == 2
    assert "wireless.profile" in res.stderr and "Traceback" not in res.stderr
    both = write_scenario({"duration": "1s", "wireless": {"hops": 2}, "bottleneck": {"rate": "1Mbps", "delay": "1ms"},
                           "flows": [{"cc": "cubic"}]}, name="both.toml")
    res = runner.invoke(cli, ["run", str(both)])
    assert res.exit_code == 2 and "either a [bottleneck]" in res.stderr
    # UDP flows run on a dumbbell too (issue 16); a station number does not.
    src_on_dumbbell = write_scenario({"duration": "1s", "bottleneck": {"rate": "1Mbps", "delay": "1ms"},
                                      "flows": [{"protocol": "udp", "rate": "1pps", "src": 0}]}, name="udp.toml")
    res = runner.invoke(cli, ["run", str(src_on_dumbbell)])
    assert res.exit_code == 2 and "only used in a [wireless] scenario or with [[links]]" in res.stderr


def test_wireless_sweep_is_stored_and_queryable(tmp_path):
    sc = _line(2, host="rpi3").add_udp_flow("100pps", packet_size=1470)
    df = ccsim.sweep(sc, {"flows.0.rate": ["300pps", "1700pps"], "wireless.hops": [1, 2]}, runs=1, out=tmp_path)
    assert len(df) == 4
    from ccsim.results import query

    q = query(tmp_path, "SELECT hops, rate, loss_ratio, received FROM runs ORDER BY 1, 2")
    assert list(q.hops) == [1, 1, 2, 2]
    # Past the host's peak, packets are lost at any hop count; below it, none.
    assert (q[q.rate == "300pps"].loss_ratio == 0).all()
    assert (q[q.rate == "1700pps"].loss_ratio > 0.3).all()


def test_cubic_cwnd_is_bounded_by_a_small_receive_window_as_on_the_dumbbell():
    """tcp_cwnd_validate on the line as on the dumbbell (issue 12's drift bug: the line's own
    send loop never called it, and CUBIC's cwnd grew without bound behind a 16 KiB window:
    8,418 packets after 30 s on one 802.11g hop). With it, cwnd grows only while the window
    is cwnd-limited, to twice the packets in flight (tcp_is_cwnd_limited in slow start)."""
    rwnd_pkts = 16 * 1024 // 1448  # 11 full segments in flight at most
    line = ccsim.Scenario(duration="30s", seed=1).wireless(hops=1, profile="80211g")
    bell = ccsim.Scenario(duration="30s", seed=1).bottleneck(rate="20Mbps", delay="10ms")
    got = {}
    for name, sc in [("line", line), ("dumbbell", bell)]:
        f = ccsim.run(sc.tcp(rwnd="16KiB").add_flow("cubic")).flows[0]
        assert f["retransmits"] == 0 and f["throughput_mbps"] > 1.0, (name, f)
        got[name] = f["cwnd_final_pkts"]
    for cwnd in got.values():
        assert rwnd_pkts <= cwnd <= 2 * rwnd_pkts, got


def test_rack_recovers_losses_on_wifi_hops_before_the_rto():
    """RACK's reordering timer on the line as on the dumbbell (issue 12's drift bug: the line
    never armed it, and RACK there gave exactly RFC 6675's RTO count). Transfers of four
    segments, sent in one burst, over one and two 802.11g hops with 5% frame errors and no MAC
    retries (every frame error loses the packet): a lost segment other than the first has too
    few segments after it for RFC 6675's three SACKs, so RFC 6675 waits for the RTO. RACK marks
    it lost once a later segment is delivered and the reordering window has passed
    (tcp_rack_reo_timeout) and retransmits then, in fast recovery. 100 seeds each; measured
    (1 hop, 2 hops): RFC 6675 31 and 71 RTOs, RACK 18 and 50 (31 and 71 without the timer)."""
    def totals(recovery: str, hops: int) -> dict[str, int]:
        t = {"rto_count": 0, "fast_recoveries": 0, "retransmits": 0}
        for seed in range(1, 101):
            sc = ccsim.Scenario(duration="3s", seed=seed).wireless(hops=hops, profile="80211g", fer=0.05, retry_limit=1)
            f = ccsim.run(sc.tcp(recovery=recovery).add_flow("cubic", size="5792B")).flows[0]
            for k in t:
                t[k] += int(f[k])
        return t

    for hops in (1, 2):
        rfc, rack = totals("rfc6675", hops), totals("rack", hops)
        assert rfc["rto_count"] >= 20, (hops, rfc)  # the losses are there
        assert rack["retransmits"] == rfc["retransmits"], (hops, rfc, rack)  # the same losses
        # RACK turns at least a quarter of RFC 6675's RTOs into fast recoveries.
        assert 4 * rack["rto_count"] <= 3 * rfc["rto_count"], (hops, rfc, rack)
        assert rack["fast_recoveries"] >= rfc["fast_recoveries"] + 10, (hops, rfc, rack)

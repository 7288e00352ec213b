"""Real links and real traffic (issue 16): trace-driven and time-varying links from Python and
the CLI, their errors, and packet captures read back with a pure-Python pcap reader (dpkt)."""

from __future__ import annotations

import shutil
from pathlib import Path

import dpkt
import pytest

import ccsim
from ccsim.cli import cli

from _support import assert_one_line_error, base_scenario, find_ccsim_command, run_cmd, to_toml

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / "examples" / "traces"


def test_a_trace_path_is_relative_to_the_scenario_file(tmp_path):
    (tmp_path / "t").mkdir()
    shutil.copy(TRACES / "Verizon-LTE-short.down", tmp_path / "t" / "v.down")
    d = base_scenario()
    d["bottleneck"]["rate"] = {"trace": "t/v.down"}
    path = tmp_path / "cell.toml"
    path.write_text(to_toml(d), encoding="utf-8")
    res = ccsim.run(path)
    b = res.bottleneck
    # The trace's own opportunities over the run (3 s), 1500 bytes each.
    ms = [int(x) for x in (TRACES / "Verizon-LTE-short.down").read_text().split()]
    assert b["capacity_mbps"] == pytest.approx(sum(1 for t in ms if 0 < t <= 3_000) * 1500 * 8 / 3 / 1e6)
    assert sum(f["throughput_mbps"] for f in res.to_dict()["flows"]) <= b["capacity_mbps"]


def test_the_cellular_example_runs():
    res = ccsim.run(REPO / "examples" / "cellular.toml", timeseries=False)
    d = res.to_dict()
    assert [f["cc"] for f in d["flows"]] == ["cubic", "bbr", "copa"]
    assert d["bottleneck"]["utilization"] > 0.9
    assert d["total_throughput_mbps"] <= d["bottleneck"]["capacity_mbps"]


@pytest.mark.parametrize(
    "rate, field, words",
    [
        ({"trace": "/nonexistent/trace.down"}, "bottleneck.rate.trace", ["cannot read the trace file", "/nonexistent/trace.down"]),
        ({"schedule": [["0s", "10Mbps"], ["20s", "2Mbps"], ["10s", "5Mbps"]]}, "bottleneck.rate.schedule[2][0]", ["\"10s\"", "out of order"]),
        ({"schedule": [["0s", "10Mbs"]]}, "bottleneck.rate.schedule[0][1]", ["malformed rate \"10Mbs\"", "accepted"]),
        ({"schedule": [["0x", "10Mbps"]]}, "bottleneck.rate.schedule[0][0]", ["malformed time \"0x\""]),
    ],
)
def test_bad_traces_and_schedules_are_one_line_errors(runner, tmp_path, rate, field, words):
    d = base_scenario()
    d["bottleneck"]["rate"] = rate
    assert_one_line_error(runner, tmp_path, d, field, words)


@pytest.mark.parametrize("text, words", [("", ["empty"]), ("5\n3\n", ["line 2", "before the previous line's 5"])])
def test_empty_or_decreasing_traces(runner, tmp_path, text, words):
    (tmp_path / "bad.trace").write_text(text)
    d = base_scenario()
    d["bottleneck"]["rate"] = {"trace": str(tmp_path / "bad.trace")}
    assert_one_line_error(runner, tmp_path, d, "bottleneck.rate.trace", ["is not a mahimahi trace", *words])


def test_a_bad_delay_schedule_from_the_installed_cli(tmp_path):
    d = base_scenario()
    d["bottleneck"]["delay"] = {"schedule": [["0s", "20ms"], ["5s", "20 parsecs"]]}
    path = tmp_path / "s.toml"
    path.write_text(to_toml(d), encoding="utf-8")
    res = run_cmd(find_ccsim_command(), "run", str(path))
    assert res.returncode == 2
    assert res.stderr.strip().startswith(f"error: {path}: bottleneck.delay.schedule[1][1]: malformed time")
    assert "Traceback" not in res.stderr and "panicked" not in res.stderr


def _read(path: Path) -> list[tuple[float, dpkt.ethernet.Ethernet]]:
    with open(path, "rb") as f:
        return [(float(ts), dpkt.ethernet.Ethernet(buf)) for ts, buf in dpkt.pcap.Reader(f)]


def test_a_capture_of_the_bottleneck(tmp_path):
    d = base_scenario()
    d["duration"] = "5s"
    d["bottleneck"]["loss"] = 0.01
    res = ccsim.run(d, pcap=tmp_path / "caps")
    assert list(res.pcap_files) == ["router->receiver"]
    pkts = _read(res.pcap_files["router->receiver"])
    # One record per packet offered to the direction.
    assert len(pkts) == res.bottleneck["packets_in"]
    times = [t for t, _ in pkts]
    assert times == sorted(times) and times[-1] <= 5.0
    seen: dict[tuple[int, int], int] = {}
    mss = 1448
    for _, eth in pkts:
        ip = eth.data
        assert isinstance(ip, dpkt.ip.IP) and ip.p == dpkt.ip.IP_PROTO_TCP
        tcp = ip.data
        # Byte sequence numbers: 1 + segment x MSS; data carries ACK and the timestamps option.
        assert (tcp.seq - 1) % mss == 0
        assert tcp.flags & dpkt.tcp.TH_ACK
        assert any(k == dpkt.tcp.TCP_OPT_TIMESTAMP for k, _ in dpkt.tcp.parse_opts(tcp.opts))
        assert ip.len == 1500  # 1448 + 52
        seen[(tcp.sport, tcp.seq)] = seen.get((tcp.sport, tcp.seq), 0) + 1
    # Two flows from distinct ports; retransmissions: the same sequence number sent twice.
    assert {s for s, _ in seen} == {10000, 10001}
    retx = sum(n - 1 for n in seen.values())
    assert retx > 0
    assert retx == sum(f["retransmits"] for f in res.to_dict()["flows"])


def test_acks_with_sack_blocks_and_ecn_flags(tmp_path):
    d = base_scenario()
    d["duration"] = "5s"
    d["tcp"]["ecn"] = True
    d["bottleneck"].update({"qdisc": "codel", "ecn": True, "loss": 0.01})
    res = ccsim.run(d, pcap=tmp_path, pcap_links=["router->receiver", "receiver->router"], pcap_snaplen=96)
    data = _read(res.pcap_files["router->receiver"])
    acks = _read(res.pcap_files["receiver->router"])
    links = {l["id"]: l for l in res.to_dict()["links"]}
    assert len(acks) == links["receiver->router"]["packets_in"]
    assert len(data) == links["router->receiver"]["packets_in"]
    # Data is ECT(0), retransmissions Not-ECT (RFC 3168 6.1.5; CE set by this queue shows on
    # the next hop, not here); some carry CWR.
    assert {eth.data.tos & 3 for _, eth in data} == {0, 2}
    assert any(eth.data.data.flags & dpkt.tcp.TH_CWR for _, eth in data)
    # ACKs: ACK numbers, some ECE, some SACK blocks; frames cut to the snaplen.
    assert any(eth.data.data.flags & dpkt.tcp.TH_ECE for _, eth in acks)
    sacks = [o for _, eth in acks for k, o in dpkt.tcp.parse_opts(eth.data.data.opts) if k == dpkt.tcp.TCP_OPT_SACK]
    assert sacks and all(len(o) % 8 == 0 for o in sacks)
    assert all((eth.data.data.ack - 1) % 1448 == 0 for _, eth in acks)
    assert all(eth.data.data.dport in (10000, 10001) for _, eth in acks)


def test_capture_from_the_cli_and_its_errors(runner, tmp_path):
    path = tmp_path / "s.toml"
    d = base_scenario()
    d["duration"] = "2s"
    path.write_text(to_toml(d), encoding="utf-8")
    res = runner.invoke(cli, ["run", str(path), "--pcap", str(tmp_path / "c"), "--pcap-links", "router->receiver,receiver->router"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "c" / "router-receiver.pcap").exists() and (tmp_path / "c" / "receiver-router.pcap").exists()
    res = runner.invoke(cli, ["run", str(path), "--pcap", str(tmp_path / "c"), "--pcap-links", "r9->r1"])
    assert res.exit_code == 2
    assert "pcap_links: no link direction \"r9->r1\"; accepted: " in res.stderr and "router->receiver" in res.stderr
    res = runner.invoke(cli, ["run", str(path), "--pcap-links", "router->receiver"])
    assert res.exit_code == 2 and "needs --pcap DIR" in res.stderr


def test_a_capture_of_a_workload_run(tmp_path):
    """Workload flows come and go; each gets its ports when it arrives (from its id in the
    output, as [[flows]] flows do), and its packets are captured like theirs."""
    (tmp_path / "small.cdf").write_text("2000 0\n20000 50\n200000 100\n")
    sc = {"duration": "6s", "seed": 3,
          "bottleneck": {"rate": "10Mbps", "delay": "10ms", "buffer": "20pkt", "loss": 0.01},
          "tcp": {"delayed_ack": False},
          "flows": [{"cc": "cubic", "size": "300KB"}],
          "workloads": [{"cc": "cubic", "sizes": str(tmp_path / "small.cdf"), "arrivals": "15/s", "stop": "3s"},
                        {"cc": "bbr", "sizes": str(tmp_path / "small.cdf"), "arrivals": "10/s", "stop": "3s"}]}
    res = ccsim.run(sc, pcap=tmp_path / "caps", timeseries=False)
    d = res.to_dict()
    pkts = _read(res.pcap_files["router->receiver"])
    assert len(pkts) == d["bottleneck"]["packets_in"]
    flows = d["flows"]
    wl = [f for f in flows if f.get("workload") is not None]
    assert len(wl) > 40 and {f["workload"] for f in wl} == {0, 1} and all(f["completed"] for f in flows)
    first: dict[tuple[int, int], tuple[float, int, bytes]] = {}
    end: dict[tuple[int, int], int] = {}
    seen: dict[tuple[int, int, int], int] = {}
    for t, eth in pkts:
        ip, tcp = eth.data, eth.data.data
        key = (tcp.sport, tcp.dport)
        first.setdefault(key, (t, tcp.seq, ip.src))
        end[key] = max(end.get(key, 0), tcp.seq + ip.len - 20 - 4 * tcp.off)
        seen[(tcp.sport, tcp.dport, tcp.seq)] = seen.get((tcp.sport, tcp.dport, tcp.seq), 0) + 1
    # One port pair per flow, from its id: sender 10000 + id mod 50000, receiver 5001 + id / 50000.
    assert len(first) == len(flows)
    hosts: dict[int, set[bytes]] = {0: set(), 1: set()}
    for f in flows:
        key = (10000 + f["id"] % 50000, 5001 + f["id"] // 50000)
        t, seq, src = first[key]
        # Its first data segment: sequence number 1 (as for every flow), at the bottleneck
        # within a millisecond of its arrival (one 1500-byte packet over its 1 Gbps access link).
        assert seq == 1
        assert f["start_s"] <= t < f["start_s"] + 1e-3, (f["id"], t, f["start_s"])
        # Every byte of it crossed the bottleneck: the last sequence number is its size.
        assert end[key] - 1 == (f.get("size_bytes") or 300_000), f["id"]
        if f.get("workload") is not None:
            hosts[f["workload"]].add(src)
    # Each workload sends from a host (an address) of its own.
    assert len(hosts[0]) == len(hosts[1]) == 1 and hosts[0] != hosts[1]
    retx = sum(n - 1 for n in seen.values())
    assert retx > 100
    assert retx == sum(f["retransmits"] for f in flows)


def _tcp_seen(pkts, sport: int) -> tuple[dict[int, int], list]:
    """Data segments of the flow sending from ``sport``: times each sequence number was seen,
    and the segments in order."""
    seen: dict[int, int] = {}
    segs = []
    for t, eth in pkts:
        ip = eth.data
        if ip.p == dpkt.ip.IP_PROTO_TCP and ip.data.sport == sport:
            seen[ip.data.seq] = seen.get(ip.data.seq, 0) + 1
            segs.append((t, ip))
    return seen, segs


def test_a_capture_of_the_hops_of_a_wireless_line(tmp_path):
    """`--pcap-links "0->1"` on a [wireless] line captures what station 0 sends station 1 over
    the air: each IP packet once, at its first transmission, however many MAC attempts it
    takes (so TCP's analysis sees TCP's retransmissions, not the MAC's). Each capture has its
    hop's `packets` in the summary's `air_hops`."""
    line = {"duration": "12s", "seed": 2, "wireless": {"hops": 3, "fer": 0.05},
            "flows": [{"cc": "cubic", "size": "2MB"}, {"protocol": "udp", "rate": "100pps", "src": 1, "dst": 2}]}
    hops = ["0->1", "1->0", "1->2", "2->1", "2->3", "3->2"]
    res = ccsim.run(line, pcap=tmp_path, pcap_links=hops, timeseries=False)
    d = res.to_dict()
    air = {h["id"]: h for h in d["air_hops"]}
    assert sorted(air) == sorted(hops) and "medium" not in air["0->1"]
    caps = {h: _read(res.pcap_files[h]) for h in hops}
    for h in hops:
        assert len(caps[h]) == air[h]["packets"] > 0, h
        # Every packet sent over the hop is delivered, dropped after the retry limit, or
        # still being sent at the end (at most one).
        assert 0 <= air[h]["packets"] - air[h]["delivered"] - air[h]["retry_drops"] <= 1, air[h]
    # A station's transmissions are its hops' (MAC retries included).
    for st in d["stations"]:
        i = st["station"]
        assert st["tx_attempts"] == sum(air[h]["attempts"] for h in hops if h.startswith(f"{i}->"))
    assert sum(a["attempts"] - a["packets"] for a in air.values()) > 100  # MAC retries happened
    tcp = d["flows"][0]
    assert tcp["completed"]
    # The TCP flow from station 0 (10.0.0.1) to station 3 (10.0.0.4), ports 10000 -> 5001.
    seen, segs = _tcp_seen(caps["0->1"], 10000)
    assert segs[0][1].data.seq == 1 and segs[0][0] <= 0.01
    assert all(ip.src == bytes([10, 0, 0, 1]) and ip.dst == bytes([10, 0, 0, 4]) for _, ip in segs)
    assert max(ip.data.seq + ip.len - 20 - 4 * ip.data.off for _, ip in segs) - 1 == 2_000_000
    # Retransmissions the reader finds on the first hop are TCP's, every one of them.
    retx = sum(n - 1 for n in seen.values())
    assert retx == tcp["retransmits"] and retx > 0
    # Its ACKs come back from station 3; the UDP flow crosses 1->2 only.
    acks = [eth.data for _, eth in caps["3->2"]]
    assert all(ip.data.dport == 10000 and ip.src == bytes([10, 0, 0, 4]) for ip in acks)
    udp = [eth.data for _, eth in caps["1->2"] if eth.data.p == dpkt.ip.IP_PROTO_UDP]
    assert len(udp) > 1000 and all(ip.data.sport == 10001 for ip in udp)
    assert not any(eth.data.p == dpkt.ip.IP_PROTO_UDP for _, eth in caps["0->1"] + caps["2->3"])
    # Without pcap_links: each flow's first hop.
    assert list(ccsim.run(line, pcap=tmp_path / "d", timeseries=False).pcap_files) == ["0->1", "1->2"]


def test_a_capture_of_a_wifi_hop_beside_links(tmp_path, runner):
    """On a [[links]] network with [[wifi]], "ap->sta" names the hop from station ap to sta:
    its capture has the hop's packets, the link direction before it has its own."""
    net = {"duration": "4s",
           "links": [{"between": ["server", "r1"], "rate": "50Mbps", "delay": "5ms", "buffer": "50pkt"},
                     {"between": ["r1", "ap"], "rate": "unlimited", "delay": "1ms"}],
           "wifi": [{"stations": ["ap", "sta"], "fer": 0.02}],
           "flows": [{"cc": "cubic", "src": "server", "dst": "sta", "size": "3MB"}]}
    links = ["r1->ap", "ap->sta", "sta->ap"]
    est = ccsim.limits.estimate(net, timeseries=False, pcap=True, pcap_links=links)
    res = ccsim.run(net, pcap=tmp_path, pcap_links=links, timeseries=False)
    d = res.to_dict()
    air = {h["id"]: h for h in d["air_hops"]}
    assert air["ap->sta"]["medium"] == 0
    wired = {l["id"]: l for l in d["links"]}
    caps = {h: _read(res.pcap_files[h]) for h in links}
    assert len(caps["r1->ap"]) == wired["r1->ap"]["packets_in"]
    assert len(caps["ap->sta"]) == air["ap->sta"]["packets"] and len(caps["sta->ap"]) == air["sta->ap"]["packets"]
    assert air["ap->sta"]["attempts"] > air["ap->sta"]["packets"]
    assert sum(len(c) for c in caps.values()) <= est["captured_packets"]
    # The same data on both sides of the access point, MAC retries not repeated.
    seen_wire, _ = _tcp_seen(caps["r1->ap"], 10000)
    seen_air, segs = _tcp_seen(caps["ap->sta"], 10000)
    assert segs[0][1].data.seq == 1
    assert sum(n - 1 for n in seen_air.values()) == sum(n - 1 for n in seen_wire.values()) == d["flows"][0]["retransmits"]
    assert set(seen_air) == set(seen_wire)
    # An unknown hop: one line listing what is accepted, exit 2.
    path = tmp_path / "n.toml"
    path.write_text(to_toml(net))
    r = runner.invoke(cli, ["run", str(path), "--pcap", str(tmp_path / "x"), "--pcap-links", "sta->r1"])
    assert r.exit_code == 2
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert 'pcap_links: no link direction or Wi-Fi hop "sta->r1"; accepted: server->r1, r1->server, r1->ap, ap->r1, ap->sta, sta->ap' in err, err


def test_a_bad_hop_on_a_wireless_line_lists_its_hops(runner, tmp_path):
    path = tmp_path / "w.toml"
    path.write_text(to_toml({"duration": "1s", "wireless": {"hops": 2}, "flows": [{"cc": "cubic"}]}))
    r = runner.invoke(cli, ["run", str(path), "--pcap", str(tmp_path / "x"), "--pcap-links", "0->2"])
    assert r.exit_code == 2
    assert r.stderr.strip().endswith('pcap_links: no Wi-Fi hop "0->2"; accepted: 0->1, 1->0, 1->2, 2->1'), r.stderr
    r = runner.invoke(cli, ["run", str(path), "--pcap", str(tmp_path / "x"), "--pcap-links", "0->1,0->1"])
    assert r.exit_code == 2 and 'pcap_links: "0->1" is named twice' in r.stderr, r.stderr


def test_a_capture_that_would_not_fit_is_refused_before_running(tmp_path, runner):
    """Captured packets stay in memory until the run ends: the estimate counts them (a bound
    from the captured directions' capacity, known once the routes are), and a run whose
    capture would pass the memory limit is refused before it starts, in one line; nothing is
    written."""
    import json

    sc = ccsim.Scenario.from_dict({"duration": "600s", "bottleneck": {"rate": "100Mbps", "delay": "10ms", "buffer": "1bdp"},
                                   "flows": [{"cc": "cubic"}]})
    need = json.loads(ccsim._core.estimate_memory(sc.to_json(), False))["total_bytes"]
    est = ccsim.limits.estimate(sc, timeseries=False, pcap=True)
    # 600 s at 100 Mbps: 5,000,000 packets of 1,500 bytes, and a quarter more for drops.
    assert est["captured_packets"] == 6_250_001 and est["total_bytes"] == need + est["capture_bytes"]
    limit = need + 20_000_000
    with pytest.raises(ccsim.ScenarioError) as e:
        ccsim.run(sc, pcap=tmp_path / "pcap", memory_limit=limit, timeseries=False)
    msg = str(e.value)
    assert "this run would need about" in msg and "captured packets" in msg and "(up to 6,250,001 packets)" in msg, msg
    assert "to run it: capture fewer directions (pcap_links)" in msg and "\n" not in msg, msg
    assert not list(tmp_path.glob("pcap/*.pcap"))
    # The same capture of a shorter run fits, and is written; so does the 600 s run without one.
    res = ccsim.run(sc.replace("duration", "10s"), pcap=tmp_path / "pcap", memory_limit=limit, timeseries=False)
    assert len(res.pcap_files) == 1
    assert ccsim.limits.estimate(sc.replace("duration", "10s"), timeseries=False, pcap=True)["total_bytes"] <= limit
    path = tmp_path / "s.toml"
    path.write_text(to_toml(sc.to_dict()))
    cli_res = runner.invoke(cli, ["run", str(path), "--pcap", str(tmp_path / "p2"), "--memory-limit", str(limit)])
    assert cli_res.exit_code == 2 and "this run would need about" in cli_res.stderr, cli_res.stderr
    assert len(cli_res.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "p2").exists() or not list((tmp_path / "p2").glob("*.pcap"))


def test_reorder_lets_packets_overtake_after_a_delay_drop():
    """A delay schedule that drops from 50 ms to 1 ms at 5 s: with reorder = true the packets
    sent after the drop overtake those still on the wire, the receiver sees them out of order
    and the sender retransmits segments that were not lost (more retransmissions than drops);
    without it they keep their order, and every retransmission repairs a drop."""
    def run(reorder: bool) -> tuple[int, int]:
        sc = ccsim.Scenario.from_dict({
            "duration": "10s",
            "bottleneck": {"rate": "10Mbps", "delay": {"schedule": [["0s", "50ms"], ["5s", "1ms"]]}, "buffer": "2bdp",
                           "reorder": reorder},
            "flows": [{"cc": "cubic"}]})
        r = ccsim.run(sc, seed=1).to_dict()
        return r["flows"][0]["retransmits"], r["bottleneck"]["drops"]

    retx, drops = run(False)
    assert retx == drops > 0
    retx, drops = run(True)
    assert retx >= drops + 10, (retx, drops)


@pytest.mark.parametrize(
    "extra, field, words",
    [
        ({"tick": "0ms"}, "bottleneck.tick", ["\"0ms\" is out of range", "accepted: a kernel tick from 1us to 1s"]),
        ({"tick": "1 jiffy"}, "bottleneck.tick", ["malformed time \"1 jiffy\""]),
        ({"tick": "1ms", "qdisc": "codel"}, "bottleneck.tick", ["a Dummynet pipe is a FIFO", "accepted"]),
        ({"tick_acks": True}, "bottleneck.tick_acks", ["true needs a Dummynet tick", "accepted"]),
    ],
)
def test_bad_dummynet_ticks_are_one_line_errors(runner, tmp_path, extra, field, words):
    d = base_scenario()
    d["bottleneck"].update(extra)
    assert_one_line_error(runner, tmp_path, d, field, words)


def test_a_dummynet_tick_delivers_the_rate_and_is_kept_in_the_normalised_scenario():
    d = base_scenario()
    d["bottleneck"].update({"tick": "1ms", "tick_acks": True})
    sc = ccsim.Scenario.from_dict(d)
    assert sc.validate().to_dict()["bottleneck"]["tick"] == "1ms"
    res = ccsim.run(sc).to_dict()
    assert res["bottleneck"]["utilization"] > 0.9
    # Without the key: no tick in the normalised form (existing scenarios are unchanged).
    assert "tick" not in ccsim.Scenario.from_dict(base_scenario()).validate().to_dict()["bottleneck"]

"""Counterfactuals (ccsim.experiments.counterfactuals): a failing claim's suspected cause changed
alone, run with the entry's repetitions and reported next to the claim."""

from __future__ import annotations

import pandas as pd
import pytest

from ccsim.experiments import reproduction
from ccsim.experiments.catalogue import BY_ID, _e3_solo_grid
from ccsim.experiments.claims import ClaimResult, Data
from ccsim.experiments.counterfactuals import Counterfactual, derive
from ccsim.experiments.reproduction import CounterfactualResult, ExperimentOutcome, ReproduceReport, reproduce


def _cf(entry: str, cf_id: str) -> Counterfactual:
    return next(c for c in BY_ID[entry].counterfactuals if c.id == cf_id)


def test_a_scenario_change_reaches_every_run_and_only_those_runs():
    e = BY_ID["e1-fig6"]
    x = derive(e, _cf("e1-fig6", "no-delayed-ack"), BY_ID)
    specs = x.specs()
    assert x.id == "e1-fig6+no-delayed-ack" and x.runs_from is None
    assert {s.experiment for s in specs} == {"e1-fig6+no-delayed-ack"}
    assert all(s.scenario["tcp"]["delayed_ack"] is False for s in specs)
    assert {s.tags["cc"] for s in specs} == {"newreno", "ucc"}
    # The entry's repetitions (5 seeds) at each of the 2 x 4 points.
    assert len(specs) == 2 * 4 * e.full.runs
    # The entry itself is unchanged.
    assert all(s.scenario["tcp"].get("delayed_ack", True) is True for s in e.specs())


def test_algorithm_parameters_go_only_to_flows_running_that_algorithm():
    x = derive(BY_ID["e1-fig8"], _cf("e1-fig8", "per-packet-owd"), BY_ID)
    specs = x.specs()
    assert specs, "e1-fig8 reads e1-fig7's runs; its counterfactual makes its own"
    for s in specs:
        for f in s.scenario["flows"]:
            assert (f.get("params", {}).get("per_packet_owd") is True) == (f["cc"] == "ucc"), f


def test_a_change_of_reading_reads_the_entry_runs():
    x = derive(BY_ID["e1-fig6"], _cf("e1-fig6", "read-1.5x"), BY_ID)
    assert x.runs_from == "e1-fig6" and x.specs() == []


def test_needed_entries_are_read_under_the_same_change():
    x = derive(BY_ID["e3-fig5"], _cf("e3-fig5", "lan-rtt"), BY_ID)
    assert x.needs == ("e3-fig4+lan-rtt",)
    assert all(s.scenario["bottleneck"]["delay"] == "0.25ms" for s in x.specs())


def test_a_counterfactual_names_a_known_kind_and_claim():
    with pytest.raises(ValueError, match="kind 'luck'"):
        Counterfactual("x", "y", ("ucc-150pct",), "luck")
    bad = Counterfactual("x", "y", ("no-such-claim",), "setup", set={"tcp.delayed_ack": False})
    with pytest.raises(ValueError, match="no claim 'no-such-claim'"):
        derive(BY_ID["e1-fig6"], bad, BY_ID)


def test_causes_count_failing_claims_by_what_their_counterfactuals_showed():
    def claim(cid, status):
        return ClaimResult("e", cid, "", status, "", "")

    def res(cid, kind, status):
        return CounterfactualResult("e", cid, Counterfactual("c" + cid + kind, "x", (cid,), kind, untestable="-"), status, "")

    o = ExperimentOutcome(BY_ID["e1-fig6"], 1, 0.0, None, [claim("a", "FAIL"), claim("b", "FAIL"), claim("c", "FAIL"),
                                                          claim("d", "PASS")])
    o.counterfactuals = [res("a", "setup", "PASS"), res("a", "ccsim", "FAIL"), res("b", "ccsim", "PASS"),
                         res("c", "reading", "FAIL"), res("c", "testbed", "UNTESTABLE")]
    rep = ReproduceReport(outcomes=[o])
    c = rep.causes()
    assert [x.claim for x in c["outside"]] == ["a"]
    assert [x.claim for x in c["inside"]] == ["b"]
    assert [x.claim for x in c["untestable"]] == ["c"]
    assert c["unexplained"] == []
    assert rep.causes_text() == ("of the 3 seed claims that do not hold, 1 fail for a demonstrated cause outside ccsim, "
                                 "1 for a demonstrated cause in ccsim, 1 for a suspected cause that cannot be tested "
                                 "here, 0 are unexplained")
    o.counterfactuals = o.counterfactuals[:-1]
    assert [x.claim for x in rep.causes()["unexplained"]] == ["c"]
    assert res("c", "testbed", "UNTESTABLE").outcome == "cannot be tested here, because -"


def test_the_grid_check_says_where_the_claim_holds():
    rows = []
    for delay, buf, bbr, exp in [("0.25ms", 10, 95.0, 60.0), ("20ms", 10, 96.0, 95.5)]:
        for cc, thr in (("bbr", bbr), ("bbr-expire", exp)):
            rows.append({"delay": delay, "buffer_bdp": buf, "cc": cc, "throughput_mbps": thr})
    v = _e3_solo_grid(Data(runs=pd.DataFrame(rows)))
    assert v.passed
    assert "RTT 0.5 ms, 10 BDP: 60.00 Mbps vs 95.00 Mbps (0.63x)" in v.measured
    assert v.measured.endswith("Lower by >= 3% at: RTT 0.5 ms, 10 BDP (needs < 0.97x)")
    only_wan = pd.DataFrame([r for r in rows if r["delay"] == "20ms"])
    assert not _e3_solo_grid(Data(runs=only_wan)).passed


def test_reproduce_runs_them_reports_them_and_can_skip_them(tmp_path):
    rep = reproduce(["e1-fig6"], out=tmp_path / "with", quick=True, jobs=2, progress=False)
    (o,) = rep.outcomes
    ids = [c.id for c in BY_ID["e1-fig6"].counterfactuals]
    assert [r.counterfactual.id for r in o.counterfactuals] == ids
    assert all(r.status in ("PASS", "FAIL") for r in o.counterfactuals), [(r.counterfactual.id, r.measured) for r in o.counterfactuals]
    # Runs of a scenario change are stored in their own partition; a change of reading makes none.
    parts = {p.name for p in (tmp_path / "with" / "runs").iterdir()}
    assert "experiment=e1-fig6+no-delayed-ack" in parts and "experiment=e1-fig6+read-1.5x" not in parts
    # Without delayed ACKs UCC gains over NewReno (the measured text carries the ratio).
    no_delack = next(r for r in o.counterfactuals if r.counterfactual.id == "no-delayed-ack")
    base = o.claims[0].measured
    assert no_delack.measured != base and no_delack.runs == 2
    md = (tmp_path / "with" / "report.md").read_text()
    assert "## Counterfactuals" in md
    assert "| e1-fig6 | ucc-150pct | FAIL | no-delayed-ack | setup |" in md
    assert "counterfactual `tick-10ms` (setup)" in md
    html = (tmp_path / "with" / "report.html").read_text()
    assert "<h2>Counterfactuals</h2>" in html
    bare = reproduce(["e1-fig6"], out=tmp_path / "without", quick=True, jobs=2, progress=False, counterfactuals=False)
    assert bare.outcomes[0].counterfactuals == []
    assert {p.name for p in (tmp_path / "without" / "runs").iterdir()} == {"experiment=e1-fig6"}
    assert "## Counterfactuals" not in (tmp_path / "without" / "report.md").read_text()


def test_replace_runs_no_counterfactuals(tmp_path):
    rep = reproduce(["e1-fig6"], out=tmp_path, quick=True, jobs=2, progress=False, replace={"ucc": "cubic"})
    assert rep.outcomes[0].counterfactuals == []


def test_every_catalogue_counterfactual_derives_and_validates():
    for e in BY_ID.values():
        for cf in e.counterfactuals:
            if cf.untestable:
                continue
            x = derive(e, cf, BY_ID)
            assert x.specs(quick=True) or x.runs_from, x.id
            assert x.id.startswith(e.id + "+") and x.counterfactuals == ()

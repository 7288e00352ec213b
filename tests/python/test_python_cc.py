"""Congestion controllers written in Python (ccsim.CongestionControl): the Reno port is
bit-identical to the built-in, the CUBIC port close to it, the hooks come in the engine's
order, file references work in run, sweep (process pool and Ray) and the API, and the user's
errors are reported as theirs."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys

import pytest

import ccsim
from ccsim import _core
from ccsim.cli import cli
from ccsim.sweep import execute, expand

from _support import EXAMPLES, to_toml

PY_CC = EXAMPLES / "python_cc"


def _load_example(name: str):
    spec = importlib.util.spec_from_file_location(f"example_{name}", PY_CC / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module", autouse=True)
def _forget_registrations():
    """Leave no registered algorithm behind for other test modules (their lists of names)."""
    yield
    for name in ccsim.cc.registered():
        ccsim.unregister(name)


@pytest.fixture(scope="module")
def reno():
    mod = _load_example("reno")
    ccsim.register(mod.Reno)
    yield mod.Reno
    ccsim.unregister("pyreno")


def _e1(cc: str, loss: float, delayed_ack: bool, duration: str = "100s") -> ccsim.Scenario:
    """The seed's E1 set-up (examples/e1.toml's network): two flows of cc."""
    return ccsim.Scenario.from_dict({
        "duration": duration,
        "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "50pkt", "loss": loss},
        "tcp": {"mss": 1000, "delayed_ack": delayed_ack},
        "flows": [{"cc": cc, "count": 2, "access_rate": "100Mbps", "access_delay": "0ms"}],
    })


def _json(res: ccsim.Result, name: str) -> str:
    d = res.to_dict()
    d.pop("wall_seconds", None)
    return json.dumps(d, sort_keys=True, default=str).replace(f'"{name}"', '"newreno"')


@pytest.mark.parametrize("loss", [0.0, 0.01])
@pytest.mark.parametrize("delayed_ack", [True, False])
def test_the_python_reno_port_is_bit_identical_to_the_built_in(reno, loss, delayed_ack):
    py = ccsim.run(_e1("pyreno", loss, delayed_ack), seed=1)
    rust = ccsim.run(_e1("newreno", loss, delayed_ack), seed=1)
    assert set(py.summary.cc) == {"pyreno"}
    assert _json(py, "pyreno") == _json(rust, "newreno")
    # The time series too (cwnd per sample).
    assert py.timeseries["cwnd_pkts"].tolist() == rust.timeseries["cwnd_pkts"].tolist()


def test_python_parameters_arrive_validated(reno):
    a = ccsim.run(_e1("pyreno", 0.01, True, "20s").replace("flows.0.params", {"beta": 0.7}), seed=1)
    b = ccsim.run(_e1("newreno", 0.01, True, "20s").replace("flows.0.params", {"beta": 0.7}), seed=1)
    assert _json(a, "pyreno") == _json(b, "newreno")
    with pytest.raises(ccsim.ScenarioError) as e:
        ccsim.run(_e1("pyreno", 0.0, True, "1s").replace("flows.0.params", {"beta": "half"}))
    assert "flows[0].params.beta" in str(e.value)
    with pytest.raises(ccsim.ScenarioError) as e:
        ccsim.run(_e1("pyreno", 0.0, True, "1s").replace("flows.0.params", {"abc": 2}))
    assert "flows[0].params.abc" in str(e.value) and "true or false" in str(e.value)
    with pytest.raises(ccsim.ScenarioError) as e:
        ccsim.run(_e1("pyreno", 0.0, True, "1s").replace("flows.0.params", {"gamma": 1}))
    assert "unknown parameter" in str(e.value) and "beta" in str(e.value)


def test_the_python_cubic_port_stays_within_2_percent_of_the_built_in():
    mod = _load_example("cubic")
    ccsim.register(mod.Cubic)
    try:
        for link in ({"rate": "10Mbps", "delay": "20ms", "buffer": "50pkt", "loss": 0.0},
                     {"rate": "10Mbps", "delay": "20ms", "buffer": "50pkt", "loss": 0.01},
                     {"rate": "100Mbps", "delay": "20ms", "buffer": "1bdp", "loss": 0.0}):
            thr = {}
            for cc in ("pycubic", "cubic"):
                sc = ccsim.Scenario.from_dict({"duration": "60s", "bottleneck": link, "flows": [{"cc": cc}]})
                # mean over seeds: with random loss one seed's losses fall differently
                seeds = (1, 2, 3, 4) if link["loss"] else (1,)
                thr[cc] = sum(ccsim.run(sc, seed=s).summary.throughput_mbps.sum() for s in seeds) / len(seeds)
            assert abs(thr["pycubic"] - thr["cubic"]) <= 0.02 * thr["cubic"], (link, thr)
    finally:
        ccsim.unregister("pycubic")


class _Recorder(ccsim.CongestionControl):
    """Reno that logs every hook call (one flow: the log needs no flow index)."""

    name = "recorder"
    log: list = []

    def init(self, sock):
        self.log.append((sock.now, "init", -1))

    def ssthresh(self, sock):
        self.log.append((sock.now, "ssthresh", -1))
        return max(sock.cwnd >> 1, 2)

    def cong_avoid(self, sock, acked):
        self.log.append((sock.now, "cong_avoid", acked))
        if not sock.cwnd_limited():
            return
        if sock.in_slow_start():
            acked = sock.slow_start(acked)
            if acked == 0:
                return
        sock.cong_avoid_ai(sock.cwnd, acked)

    def set_state(self, sock, state):
        self.log.append((sock.now, "set_state", int(state)))

    def cwnd_event(self, sock, event):
        self.log.append((sock.now, "cwnd_event", int(event)))

    def pkts_acked(self, sock, sample):
        self.log.append((sock.now, "pkts_acked", sample.pkts_acked))

    def in_ack_event(self, sock, flags):
        self.log.append((sock.now, "in_ack_event", flags))

    def skb_marked_lost(self, sock, skb):
        self.log.append((sock.now, "skb_marked_lost", skb.in_flight))

    def undo_cwnd(self, sock):
        self.log.append((sock.now, "undo_cwnd", -1))
        return max(sock.cwnd, sock.prior_cwnd)


def test_hooks_are_called_in_the_engines_order():
    traced = _core.trace_builtin("newreno")
    ccsim.register(_Recorder)
    try:
        def scenario(cc):
            # 10% loss on a shallow buffer: slow start, losses found by dupACKs (Recovery) and
            # retransmission timeouts in Open (CA_EVENT_LOSS, then Loss) within 20 s.
            return ccsim.Scenario.from_dict({
                "duration": "20s",
                "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "20pkt", "loss": 0.1},
                "flows": [{"cc": cc}],
            })

        _core.take_trace()
        rust_res = ccsim.run(scenario(traced), seed=2)
        rust = [(now, hook, arg) for _, now, hook, arg in _core.take_trace()]
        _Recorder.log.clear()
        py_res = ccsim.run(scenario("recorder"), seed=2)
        assert py_res.summary.throughput_mbps.tolist() == rust_res.summary.throughput_mbps.tolist()
        assert _Recorder.log == rust
        hooks = {(h, a) for _, h, a in rust}
        # The sequence covers slow start, Recovery, an RTO (CA_EVENT_LOSS, then Loss) and Open.
        assert any(h == "skb_marked_lost" for _, h, _ in rust)
        assert {("init", -1), ("set_state", int(ccsim.CaState.RECOVERY)), ("cwnd_event", int(ccsim.CaEvent.LOSS)),
                ("set_state", int(ccsim.CaState.LOSS)), ("set_state", int(ccsim.CaState.OPEN)), ("ssthresh", -1)} <= hooks
        assert rust_res.summary.rto_count.sum() > 0 and rust_res.summary.fast_recoveries.sum() > 0
        assert len(rust) > 1000
    finally:
        ccsim.unregister("recorder")
        ccsim.unregister(traced)


# -- registration ----------------------------------------------------------------------------


def test_registration_refuses_what_cannot_be_an_algorithm():
    class NoName(ccsim.CongestionControl):
        pass

    class Builtin(ccsim.CongestionControl):
        name = "cubic"

    class BadParam(ccsim.CongestionControl):
        name = "badparam"
        params = {"x": "fast"}

    for cls, text in ((NoName, "has no name"), (Builtin, "built-in"), (BadParam, "parameter x"),
                      (int, "not a subclass of ccsim.CongestionControl")):
        with pytest.raises(ccsim.AlgorithmError) as e:
            ccsim.register(cls)
        assert text in str(e.value)
    assert "badparam" not in {a["name"] for a in ccsim.algorithms()}


def test_registered_algorithms_are_listed(reno):
    algos = {a["name"]: a for a in ccsim.algorithms()}
    assert algos["pyreno"]["registered"] and not algos["cubic"]["registered"]
    assert {p["name"] for p in algos["pyreno"]["params"]} == {"beta", "abc"}


# -- errors from user code ---------------------------------------------------------------------

BAD = '''
import ccsim


class Boom(ccsim.CongestionControl):
    name = "boom"

    def cong_avoid(self, sock, acked):
        if sock.now > 1_000_000_000:
            raise RuntimeError("the user's bug")
        sock.cwnd += acked


class NoneThresh(ccsim.CongestionControl):
    name = "nonethresh"

    def ssthresh(self, sock):
        return None


class FloatCwnd(ccsim.CongestionControl):
    name = "floatcwnd"

    def cong_avoid(self, sock, acked):
        sock.cwnd = sock.cwnd * 1.5
'''


def _lossy(cc: str) -> dict:
    return {"duration": "5s", "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "20pkt", "loss": 0.02},
            "flows": [{"cc": cc}]}


def test_an_exception_in_a_hook_is_the_users_error_with_their_traceback(tmp_path, runner):
    (tmp_path / "bad.py").write_text(BAD)
    path = tmp_path / "s.toml"
    path.write_text(to_toml(_lossy("bad.py:Boom")))
    with pytest.raises(ccsim.AlgorithmError) as e:
        ccsim.run(ccsim.load(path))
    msg = str(e.value)
    assert 'algorithm "bad.py:Boom", flow 0, hook cong_avoid() at t = 1.' in msg
    assert f'File "{tmp_path / "bad.py"}", line 10, in cong_avoid' in msg and "RuntimeError: the user's bug" in msg
    assert isinstance(e.value.__cause__, RuntimeError)
    res = runner.invoke(cli, ["run", str(path)])
    assert res.exit_code == 2
    assert "line 10, in cong_avoid" in res.stderr and "the user's bug" in res.stderr
    assert "panic" not in res.stderr.lower() and "ccsim/cc.py" not in res.stderr


@pytest.mark.parametrize("cls, text", [
    ("NoneThresh", "hook ssthresh() at t = "),
    ("NoneThresh", "ssthresh() returned: None (NoneType) is not an integer; accepted: an integer in [1, 2147483647]"),
    ("FloatCwnd", "sock.cwnd: 15.0 (float) is not an integer"),
])
def test_a_bad_value_from_a_hook_names_the_hook(tmp_path, runner, cls, text):
    (tmp_path / "bad.py").write_text(BAD)
    path = tmp_path / "s.toml"
    path.write_text(to_toml(_lossy(f"bad.py:{cls}")))
    res = runner.invoke(cli, ["run", str(path)])
    assert res.exit_code == 2 and text in res.stderr, res.stderr


def test_a_bad_file_reference_is_a_clear_error(tmp_path, runner):
    (tmp_path / "bad.py").write_text(BAD)
    for cc, text in (("bad.py:Nope", "has no class Nope; accepted: Boom, FloatCwnd, NoneThresh"),
                     ("missing.py:X", "cannot read"),):
        path = tmp_path / "s.toml"
        path.write_text(to_toml(_lossy(cc)))
        res = runner.invoke(cli, ["run", str(path)])
        assert res.exit_code == 2 and str(path) in res.stderr and text in res.stderr, res.stderr
        assert f"{path}: flows[0].cc: {cc}: " in res.stderr, res.stderr
    (tmp_path / "broken.py").write_text("import ccsim\nclass X(ccsim.CongestionControl):\n    name = 1 +\n")
    path.write_text(to_toml(_lossy("broken.py:X")))
    res = runner.invoke(cli, ["run", str(path)])
    assert res.exit_code == 2 and "SyntaxError" in res.stderr and "broken.py" in res.stderr


# -- file references: run, sweep (process pool, Ray) -------------------------------------------


def _copy_reno(tmp_path):
    shutil.copy(PY_CC / "reno.py", tmp_path / "reno.py")
    return tmp_path / "reno.py"


def test_a_file_reference_runs_from_the_cli_relative_to_the_scenario(tmp_path, runner, monkeypatch):
    _copy_reno(tmp_path)
    sc = _e1("reno.py:Reno", 0.01, True, "10s").to_dict()
    (tmp_path / "s.toml").write_text(to_toml(sc))
    monkeypatch.chdir(sys.path[0] if sys.path[0] else "/")
    res = runner.invoke(cli, ["run", str(tmp_path / "s.toml"), "--json"])
    assert res.exit_code == 0, res.stderr
    out = json.loads(res.stdout)
    ref = ccsim.run(_e1("newreno", 0.01, True, "10s"), seed=out["seed"]).to_dict()
    assert [f["throughput_mbps"] for f in out["flows"]] == [f["throughput_mbps"] for f in ref["flows"]]
    assert {f["cc"] for f in out["flows"]} == {"reno.py:Reno"}


def _sweep_file(tmp_path):
    sc = _e1("reno.py:Reno", 0.0, True, "5s").to_dict()
    sc["sweep"] = {"bottleneck.loss": [0.0, 0.01]}
    sc["runs"] = 2
    path = tmp_path / "sweep.toml"
    path.write_text(to_toml(sc))
    return path


def test_a_sweep_ships_the_module_to_its_workers_and_its_hash_keys_the_runs(tmp_path, runner):
    mod = _copy_reno(tmp_path)
    path = _sweep_file(tmp_path)
    out = tmp_path / "out"
    res = runner.invoke(cli, ["sweep", str(path), "--jobs", "2", "--out", str(out)])
    assert res.exit_code == 0, res.stderr
    df = ccsim.results.load(out)
    assert len(df) == 8 and set(df.cc) == {"reno.py:Reno"}  # 4 runs x 2 flows
    import hashlib

    sha = hashlib.sha256(mod.read_bytes()).hexdigest()
    assert set(df.cc_modules) == {f"reno.py:Reno={sha}"}  # the stored runs record the module
    assert "(4 ran, 0 already stored, 0 failed)" in res.stdout, res.stdout
    # The workers ran the module: the same numbers as the built-in it ports.
    ref = ccsim.run(_e1("newreno", 0.01, True, "5s"), seed=1).summary.throughput_mbps.tolist()
    assert df[(df.loss == 0.01) & (df.seed == 1)].sort_values("flow").throughput_mbps.tolist() == ref
    # Unchanged module: every run is found in the store.
    res = runner.invoke(cli, ["sweep", str(path), "--jobs", "2", "--out", str(out)])
    assert res.exit_code == 0 and "(0 ran, 4 already stored, 0 failed)" in res.stdout, res.stdout
    # An edited module (even a comment) is another algorithm: the runs are made again.
    mod.write_text(mod.read_text() + "\n# edited\n")
    res = runner.invoke(cli, ["sweep", str(path), "--jobs", "2", "--out", str(out)])
    assert res.exit_code == 0 and "(4 ran, 0 already stored, 0 failed)" in res.stdout, res.stdout


def test_a_sweep_with_a_file_reference_runs_on_ray(tmp_path):
    try:
        import ray  # noqa: F401
    except ImportError:
        pytest.fail("Ray is not installed; the ray backend test needs it: pip install 'ccsim[test]' (ray>=2.9,<3)")
    _copy_reno(tmp_path)
    from ccsim.sweep.expansion import load_sweep_file

    base, table, runs = load_sweep_file(_sweep_file(tmp_path))
    specs = expand(base, table, runs, experiment="pycc")
    local = execute(specs, tmp_path / "local", jobs=2, progress=False)
    remote = execute(specs, tmp_path / "ray", backend="ray", jobs=2, progress=False)
    assert (local.ran, remote.ran, remote.failed) == (4, 4, [])
    a = ccsim.results.load(tmp_path / "local").sort_values(["key", "flow"]).reset_index(drop=True)
    b = ccsim.results.load(tmp_path / "ray").sort_values(["key", "flow"]).reset_index(drop=True)
    assert a.throughput_mbps.tolist() == b.throughput_mbps.tolist()


class _Telling(ccsim.CongestionControl):
    """Reno's growth, an event on every state change and a telemetry column."""

    name = "telling"

    def cong_avoid(self, sock, acked):
        if sock.in_slow_start():
            acked = sock.slow_start(acked)
        if acked:
            sock.cong_avoid_ai(sock.cwnd, acked)

    def set_state(self, sock, state):
        sock.record("state", float(state), float(sock.cwnd))

    def telemetry(self):
        return {"rho": 0.5, "queue_state": "rising"}


def test_events_and_telemetry_from_python_reach_the_results():
    ccsim.register(_Telling)
    try:
        sc = ccsim.Scenario.from_dict({"duration": "10s", "sample_interval": "1s",
                                       "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "20pkt", "loss": 0.01},
                                       "flows": [{"cc": "telling"}]})
        res = ccsim.run(sc, seed=1)
        ev = res.cc_events
        assert len(ev) > 0 and set(ev.kind) == {"state"} and set(ev.cc) == {"telling"}
        assert set(ev.value) <= {float(s) for s in ccsim.CaState} and (ev.value2 >= 1).all()
        assert (ev.time_s > 0).all() and ev.time_s.is_monotonic_increasing
        assert (res.timeseries.rho == 0.5).all() and set(res.timeseries.queue_state) == {"rising"}
    finally:
        ccsim.unregister("telling")


@pytest.mark.parametrize("path", sorted(PY_CC.glob("*.toml")), ids=lambda p: p.name)
def test_the_python_cc_examples_run_as_they_are(path, runner):
    res = runner.invoke(cli, ["run", str(path), "--json"])
    assert res.exit_code == 0, res.stderr
    flows = json.loads(res.stdout)["flows"]
    assert all(f["throughput_mbps"] > 0 for f in flows)
    assert any(":" in f["cc"] for f in flows)


def _python_blocks(text: str) -> list[str]:
    return [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]


def test_the_readme_and_docs_examples_run(capsys):
    from _support import REPO

    readme = next(b for b in _python_blocks((REPO / "README.md").read_text()) if "ccsim.CongestionControl" in b)
    scope: dict = {}
    exec(compile(readme, "README.md", "exec"), scope)
    sc = ccsim.Scenario.from_dict({"duration": "20s", "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "1bdp"},
                                   "flows": [{"cc": "myreno"}]})
    mine = ccsim.run(sc, seed=1).summary.throughput_mbps.iloc[0]
    builtin = ccsim.run(sc.replace("flows.0.cc", "newreno"), seed=1).summary.throughput_mbps.iloc[0]
    assert abs(mine - builtin) <= 0.02 * builtin
    ccsim.unregister("myreno")
    docs = next(b for b in _python_blocks((REPO / "docs" / "python_cc.md").read_text()) if "ccsim.register" in b)
    exec(compile(docs, "docs/python_cc.md", "exec"), {})
    assert "myreno" in capsys.readouterr().out


def test_a_reproduction_runs_a_python_algorithm_in_place_of_the_catalogues(tmp_path, runner, monkeypatch):
    _copy_reno(tmp_path)
    monkeypatch.chdir(tmp_path)
    a = runner.invoke(cli, ["reproduce", "e1-fig7", "--quick", "--jobs", "2", "--out", str(tmp_path / "a")])
    b = runner.invoke(cli, ["reproduce", "e1-fig7", "--quick", "--jobs", "2", "--out", str(tmp_path / "b"),
                            "--replace", "newreno=reno.py:Reno"])
    assert a.exit_code == 0 and b.exit_code == 0, a.stderr + b.stderr
    # The port is bit-identical, so every claim comes out the same, to the digit.
    claims = lambda d: [l for l in (tmp_path / d / "report.md").read_text().splitlines() if l.startswith("| e1-fig7 |")]  # noqa: E731
    assert claims("a") == claims("b") and len(claims("a")) == 2
    assert "Algorithms replaced: newreno by reno.py:Reno" in (tmp_path / "b" / "report.md").read_text()
    df = ccsim.results.load(tmp_path / "b", "e1-fig7")
    assert "reno.py:Reno" in set(df.flow_cc) and "newreno" not in set(df.flow_cc)
    for args, text in ((["--replace", "bbr=reno.py:Reno"], "the entries run no 'bbr'"),
                       (["--replace", "newreno=nope"], "unknown algorithm 'nope'"),
                       (["--replace", "newreno"], "expected OLD=NEW")):
        res = runner.invoke(cli, ["reproduce", "e1-fig7", "--quick", "--out", str(tmp_path / "c"), *args])
        assert res.exit_code == 2 and text in res.stderr, res.stderr


class _RateRecorder(ccsim.CongestionControl):
    """An algorithm that owns cwnd (cong_control) and logs every hook: a fixed 20-packet
    window, so that its run differs from BBR's but the engine calls the same hooks."""

    name = "raterecorder"
    log: list = []

    def init(self, sock):
        self.log.append("init")

    def ssthresh(self, sock):
        self.log.append("ssthresh")
        return max(sock.cwnd >> 1, 2)

    def cong_avoid(self, sock, acked):
        self.log.append("cong_avoid")

    def set_state(self, sock, state):
        self.log.append("set_state")

    def cwnd_event(self, sock, event):
        self.log.append("cwnd_event")

    def pkts_acked(self, sock, sample):
        self.log.append("pkts_acked")

    def in_ack_event(self, sock, flags):
        self.log.append("in_ack_event")

    def cong_control(self, sock, rs):
        self.log.append("cong_control")
        sock.cwnd = 20

    def skb_marked_lost(self, sock, skb):
        self.log.append("skb_marked_lost")


def _ack_patterns(hooks: list[str]) -> set[tuple[str, ...]]:
    """The hook sequences between two cong_control calls (one ACK's calls), with repeats of a
    hook in a row merged."""
    out, cur = set(), []
    for h in hooks:
        if not cur or cur[-1] != h:
            cur.append(h)
        if h == "cong_control":
            out.add(tuple(cur))
            cur = []
    return out


def test_cong_control_hooks_come_in_the_engines_order():
    """For an algorithm with cong_control (BBR in Rust, a recorder in Python) the engine calls
    the same hooks in the same order on each ACK, and never cong_avoid."""
    traced = _core.trace_builtin("bbr")
    ccsim.register(_RateRecorder)
    try:
        def scenario(cc):
            return ccsim.Scenario.from_dict({
                "duration": "20s", "bottleneck": {"rate": "10Mbps", "delay": "20ms", "buffer": "20pkt", "loss": 0.05},
                "flows": [{"cc": cc}]})

        _core.take_trace()
        ccsim.run(scenario(traced), seed=2)
        rust = [hook for _, _, hook, _ in _core.take_trace()]
        _RateRecorder.log.clear()
        ccsim.run(scenario("raterecorder"), seed=2)
        py = list(_RateRecorder.log)
        assert "cong_avoid" not in rust and "cong_avoid" not in py
        assert rust[0] == py[0] == "init"
        rp, pp = _ack_patterns(rust), _ack_patterns(py)
        # The plain ACK and the ACK that marks losses and enters Recovery, in both.
        for pattern in (("in_ack_event", "pkts_acked", "cong_control"),
                        ("in_ack_event", "pkts_acked", "skb_marked_lost", "ssthresh", "set_state", "cong_control")):
            assert pattern in rp and pattern in pp, (pattern, rp, pp)
        # Every ACK's sequence the Python algorithm saw, the Rust one saw too (an RTO's among
        # them: ssthresh, cwnd_event, skb_marked_lost for each segment, set_state(Loss)).
        assert pp <= rp, pp - rp
        assert any("cwnd_event" in p for p in rp)
    finally:
        ccsim.unregister("raterecorder")
        ccsim.unregister(traced)

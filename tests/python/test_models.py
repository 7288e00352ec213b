"""ccsim.models: the analytic models of seed paper 000 (E4-model), checked against values
worked out by hand (arithmetic in the comments), against numerical integration, and for the
exponents they give over 2..5 hops."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ccsim import models as m
from ccsim.models import _bisect

NS = np.arange(2, 6)  # the paper's fit range for eq. (7)-(8)
REL = 1e-9


# --------------------------------------------------------------------------- eq. (1)-(3), (6)

def test_mathis_bound():
    # 1448 B / 0.1 s / sqrt(0.01) = 14480 / 0.1 = 144800 B/s
    assert m.mathis_bound(1448, 0.1, 0.01) == pytest.approx(144800, rel=REL)
    np.testing.assert_allclose(m.mathis_bound(1000, 0.1, [0.01, 0.25]), [100000, 20000], rtol=REL)


def test_reno_throughput():
    # sqrt(3 / (2 * 0.015)) = sqrt(100) = 10; 1000 B / 0.1 s * 10 = 100000 B/s
    assert m.reno_throughput(1000, 0.1, 0.015) == pytest.approx(100000, rel=REL)
    # delayed ACKs, b = 2: sqrt(3 / (2 * 2 * 0.0075)) = sqrt(100) = 10
    assert m.reno_throughput(1000, 0.1, 0.0075, b=2) == pytest.approx(100000, rel=REL)
    # eq. (3) is sqrt(3/2) = 1.2247 times eq. (1)'s "bound"
    assert m.reno_throughput(1, 1, 0.01) / m.mathis_bound(1, 1, 0.01) == pytest.approx(math.sqrt(1.5))


def test_reno_is_eq2_with_renos_cycle():
    # Reno cycle with W = 8: R = W/2 = 4 rounds, 1/p = 3 W^2 / 8 = 24 packets, so p = 1/24.
    # Eq. (2): 1000 * 24 / (0.1 * 4) = 60000 B/s; eq. (3): 1000/0.1 * sqrt(3 * 24 / 2) = 10000 * 6.
    assert m.cycle_bandwidth(1000, 0.1, 24, 4) == pytest.approx(60000, rel=REL)
    assert m.reno_throughput(1000, 0.1, 1 / 24) == pytest.approx(60000, rel=REL)


# --------------------------------------------------------------------------- eq. (9)-(10)

def test_loss_ratio_paper_coefficients():
    # n = 2: a (n - b) = 0.0179 * 0.85 = 0.015215
    # w = 1000 pkt/s: ln 1000 - c = 6.907755 - 1.92 = 4.987755
    # p = 0.015215 * 4.987755 - 0.0167 = 0.0758887 - 0.0167 = 0.0591887
    assert m.loss_ratio(1000, 2) == pytest.approx(0.015215 * (math.log(1000) - 1.92) - 0.0167, rel=REL)
    assert m.loss_ratio(1000, 2) == pytest.approx(0.0591887, abs=1e-7)
    # with log10: 0.015215 * (3 - 1.92) - 0.0167 = 0.0164322 - 0.0167 = -0.0002678 (no loss at
    # 2 hops even at 1000 pkt/s: why the paper's log is read as natural, docs/models.md)
    assert m.loss_ratio(1000, 2, log_base=10) == pytest.approx(-0.0002678, abs=1e-9)
    assert m.loss_ratio(1000, 2, log_base=10, clip=True) == 0.0
    # n = 1: a (n - b) = -0.002685; p = -0.002685 * 4.987755 - 0.0167 = -0.0133921 - 0.0167 = -0.0300921
    assert m.loss_ratio(1000, 1) == pytest.approx(-0.0300921, abs=1e-7)


def test_loss_ratio_clip_and_arrays():
    # n = 100, w = 1e6: 0.0179 * 98.85 * (13.8155 - 1.92) - 0.0167 = 21.03 > 1
    assert m.loss_ratio(1e6, 100) > 1
    assert m.loss_ratio(1e6, 100, clip=True) == 1.0
    p = m.loss_ratio([100, 1000], [[2], [5]])  # broadcasting: rows n, columns w
    assert p.shape == (2, 2)
    assert p[1, 1] == pytest.approx(m.loss_ratio(1000, 5), rel=REL)


def test_fit_loss_model_recovers_parameters():
    w, n = np.meshgrid([20, 50, 100, 200, 500, 1000], [2, 3, 4, 5, 6, 7])
    p = m.loss_ratio(w, n)
    fit = m.fit_loss_model(w, n, p)
    assert (fit.a, fit.b, fit.c, fit.d) == pytest.approx((0.0179, 1.15, 1.92, -0.0167), rel=1e-8)
    assert fit.rss == pytest.approx(0, abs=1e-20)
    # other parameters, and noise: still close, and the residual is the noise's size
    truth = (0.03, 0.5, 2.5, 0.01)
    rng = np.random.default_rng(0)
    noisy = m.loss_ratio(w, n, *truth) + rng.normal(0, 1e-4, w.shape)
    fit = m.fit_loss_model(w, n, noisy)
    assert (fit.a, fit.b, fit.c, fit.d) == pytest.approx(truth, rel=0.05, abs=1e-3)
    assert fit.rmse == pytest.approx(1e-4, rel=0.3)


# --------------------------------------------------------------------------- eq. (11)-(12)

def test_cubic_window_and_K():
    # W_max = 250, C = 0.4, beta = 0.2: K = cbrt(0.2 * 250 / 0.4) = cbrt(125) = 5 rounds
    assert m.cubic_K(250) == pytest.approx(5, rel=REL)
    # w(0) = 0.4 * (0 - 5)^3 + 250 = -50 + 250 = 200 = (1 - beta) W_max; w(K) = W_max;
    # w(10) = 0.4 * 125 + 250 = 300
    np.testing.assert_allclose(m.cubic_window([0, 5, 10], 250), [200, 250, 300], rtol=REL)


def test_cubic_integral_closed_form():
    # K W_max (1 - beta/4) = 5 * 250 * 0.95 = 1187.5;
    # W^(4/3) cbrt(beta/C) (1 - beta/4) = 1574.901 * 0.793701 * 0.95 = 1250.0 * 0.95 = 1187.5
    assert m.cubic_integral(250) == pytest.approx(1187.5, rel=REL)


@pytest.mark.parametrize("w_max, C, beta", [(250, 0.4, 0.2), (39.27, 0.4, 0.2), (1000, 0.4, 0.3), (10, 1.0, 0.5)])
def test_cubic_integral_matches_trapezoid_of_eq11(w_max, C, beta):
    K = m.cubic_K(w_max, C, beta)
    r = np.linspace(0, K, 20001)
    numeric = np.trapezoid(m.cubic_window(r, w_max, C, beta), r)
    assert m.cubic_integral(w_max, C, beta) == pytest.approx(numeric, rel=1e-8)


# --------------------------------------------------------------------------- eq. (13)-(14)

def test_bisect():
    assert _bisect(lambda x: x * x - 2, 0, 2) == pytest.approx(math.sqrt(2), rel=1e-12)
    assert _bisect(lambda x: math.cos(x) - x, 0, 1) == pytest.approx(0.7390851332151607, rel=1e-12)
    assert _bisect(lambda x: 2 - x, 0, 5) == pytest.approx(2, rel=1e-12)  # decreasing f
    with pytest.raises(ValueError, match="same sign"):
        _bisect(lambda x: x * x + 1, -1, 1)


def test_wmax_prefactor():
    # (64 * 0.4 / (0.2 * 3.8^3))^(1/4) = (25.6 / 10.9744)^(1/4) = 2.332701^(1/4) = 1.235847
    assert m.wmax_prefactor() == pytest.approx(1.2358472, rel=1e-7)
    # it solves eq. (12) = 1/p: W = pref * p^(-3/4)  =>  integral(W) * p = 1
    w = m.wmax_prefactor() * 0.01 ** -0.75
    assert m.cubic_integral(w) * 0.01 == pytest.approx(1, rel=REL)


def test_wmax_exact_solves_eq5():
    w = m.wmax_exact(NS)
    np.testing.assert_allclose(m.cubic_integral(w) * m.loss_ratio(w, NS), 1, rtol=1e-10)
    # n = 2 by hand: W = 39.2736, ln W - c = 3.67055 - 1.92 = 1.75055,
    # p = 0.015215 * 1.75055 - 0.0167 = 0.009935, integral = 133.51 * 0.793701 * 0.95 = 100.67,
    # 100.67 * 0.009935 = 1.000
    assert m.wmax_exact(2) == pytest.approx(39.2736, rel=1e-5)
    assert m.loss_ratio(m.wmax_exact(2), 2) == pytest.approx(0.009935, rel=1e-3)
    np.testing.assert_allclose(w, [39.2736, 21.8004, 17.0845, 14.7767], rtol=1e-5)


def test_wmax_exact_with_the_loss_model_at_the_rate():
    # loss_rtt = 20 ms: p is evaluated at W / 0.02 pkt/s
    w = m.wmax_exact(2, loss_rtt=0.02)
    assert m.cubic_integral(w) * m.loss_ratio(w / 0.02, 2) == pytest.approx(1, rel=1e-10)
    assert w < m.wmax_exact(2)  # a higher argument means more loss, so a smaller window


def test_wmax_exact_with_r_in_seconds():
    # epoch_rtt = 1 s: seconds and rounds coincide
    np.testing.assert_allclose(m.wmax_exact(NS, epoch_rtt=1.0), m.wmax_exact(NS), rtol=1e-12)
    # RTT = 30 ms at 3 hops: packets per epoch = integral w dt / RTT
    w = m.wmax_exact(3, epoch_rtt=0.03)
    assert m.cubic_integral(w) / 0.03 * m.loss_ratio(w, 3) == pytest.approx(1, rel=1e-10)
    w = m.wmax_exact(NS, epoch_rtt=NS * 0.01)  # one RTT per n
    np.testing.assert_allclose(m.cubic_integral(w) / (NS * 0.01) * m.loss_ratio(w, NS), 1, rtol=1e-10)


def test_eq12_13_match_the_rfc8312_response_function():
    # RFC 8312 sec. 5.1, r in seconds: average W = (C (3 + beta_cubic) / (4 (1 - beta_cubic)))^(1/4)
    # * (RTT / p)^(3/4), beta_cubic = 1 - beta. Here the average over the epoch is
    # integral / K = W_max (1 - beta/4), W_max = prefactor * (p / RTT)^(-3/4).
    # The two are the same expression: prefactor^4 (1 - beta/4)^4
    # = 64 C / (beta (4 - beta)^3) * (4 - beta)^4 / 256 = C (4 - beta) / (4 beta), and
    # 4 - beta = 3 + beta_cubic, beta = 1 - beta_cubic.
    # beta = 0.3: (0.4 * 3.7 / (4 * 0.3))^(1/4) = 1.233333^(1/4) = exp(0.209721 / 4) = 1.053829
    assert m.wmax_prefactor(0.4, 0.3) * (1 - 0.3 / 4) == pytest.approx((0.4 * 3.7 / 1.2) ** 0.25, rel=1e-12)
    assert m.wmax_prefactor(0.4, 0.3) * (1 - 0.3 / 4) == pytest.approx(1.053829, rel=1e-6)
    assert m.wmax_approx(3, beta=0.3, log_w=4.0, epoch_rtt=0.03) == pytest.approx(
        m.wmax_approx(3, beta=0.3, log_w=4.0) * 0.03 ** 0.75, rel=1e-12)


def test_wmax_approx():
    # held at the exact root's log at n_ref: equal there
    assert m.wmax_approx(2) == pytest.approx(m.wmax_exact(2), rel=1e-12)
    assert m.wmax_approx(4, n_ref=4) == pytest.approx(m.wmax_exact(4), rel=1e-12)
    # L = c + 1 = 2.92: p(n = 5) = 0.0179 * 3.85 * 1 - 0.0167 = 0.068915 - 0.0167 = 0.052215,
    # W = 1.235847 * 0.052215^(-0.75) = 1.235847 * exp(0.75 * 2.952385) = 1.235847 * 9.15490 = 11.3141
    assert m.wmax_approx(5, log_w=2.92) == pytest.approx(11.3141, rel=1e-5)
    # p(n = 2) = 0.015215 - 0.0167 < 0: no loss predicted, no finite window
    assert math.isnan(m.wmax_approx(2, log_w=2.92))
    assert math.isnan(m.wmax_approx(1))  # one hop: eq. (10) predicts no loss
    # asymptotic: p = a L' n, W = pref * (0.0179 * 1 * 4)^(-3/4) = 1.235847 * 0.0716^(-0.75)
    assert m.wmax_approx(4, log_w=2.92, asymptotic=True) == pytest.approx(1.235847 * 0.0716 ** -0.75, rel=1e-6)


def test_exponents_over_2_to_5_hops(capsys):
    """The paper claims W_max ~ n^-0.75 and BW ~ n^-1.75 (eq. 13-14). With its constants:
    the asymptotic form (b, d dropped) gives exactly that; eq. (13) with ln W_max held at the
    n = 2 root gives 1.93 / 2.93; the exact root gives 1.07 / 2.07."""
    fits = {}
    for method in ("asymptotic", "approx", "exact"):
        bw = m.bandwidth(NS, method=method)
        w = m.wmax_exact(NS) if method == "exact" else m.wmax_approx(NS, asymptotic=method == "asymptotic")
        fits[method] = (m.exponent(NS, w).k, m.exponent(NS, bw).k)
    with capsys.disabled():
        print("\nexponents over n = 2..5 (W_max, BW):", {k: tuple(round(x, 3) for x in v) for k, v in fits.items()})
    assert fits["asymptotic"] == pytest.approx((0.75, 1.75), abs=1e-9)
    assert fits["approx"] == pytest.approx((1.926, 2.926), abs=1e-3)
    assert fits["exact"] == pytest.approx((1.072, 2.072), abs=1e-3)
    # RTT proportional to n adds exactly 1 to the exponent (eq. 14 from eq. 13)
    for kw, kbw in fits.values():
        assert kbw - kw == pytest.approx(1, abs=1e-9)
    # the exact root flattens with n (ln W_max -> c): the local exponent falls
    assert m.exponent([10, 100], m.wmax_exact([10, 100])).k < 0.2


def test_exponents_with_r_in_seconds(capsys):
    """CUBIC proper (r in seconds) makes W_max grow with RTT^(3/4), so with RTT ~ n the
    paper's asymptotic argument gives BW ~ n^-1 instead of n^-1.75."""
    fits = {meth: m.exponent(NS, m.bandwidth(NS, method=meth, cubic_time=True)).k
            for meth in ("asymptotic", "approx", "exact")}
    with capsys.disabled():
        print("\nBW exponents over n = 2..5, r in seconds, RTT = n * 10 ms:", {k: round(v, 3) for k, v in fits.items()})
    assert fits["asymptotic"] == pytest.approx(1.0, abs=1e-9)
    assert fits["exact"] == pytest.approx(1.916, abs=1e-3)


def test_approx_exponent_depends_on_the_held_log():
    # with L fixed, W ~ (n - n0)^(-3/4), n0 = b - d/(a (L - c)); e.g. L = ln 1000 = 6.907755:
    # n0 = 1.15 + 0.0167 / (0.0179 * 4.987755) = 1.15 + 0.187055 = 1.337055
    assert m.exponent(NS, m.wmax_approx(NS, log_w=math.log(1000))).k == pytest.approx(
        m.exponent(NS, (NS - 1.337055) ** -0.75).k, abs=1e-5)
    # n0 falls to b = 1.15 as L grows, so the 2..5 exponent falls towards that of
    # (n - 1.15)^(-3/4), 1.2396, and never reaches the paper's 0.75
    ks = [m.exponent(NS, m.wmax_approx(NS, log_w=L)).k for L in (math.log(40), math.log(1000), 1e6)]
    assert ks[0] > ks[1] > ks[2]
    assert ks[2] == pytest.approx(m.exponent(NS, (NS - 1.15) ** -0.75).k, abs=1e-5)
    assert ks[2] == pytest.approx(1.2396, abs=1e-4)


def test_bandwidth_by_hand_and_eq6():
    # n = 2, RTT = 2 * 10 ms: 1448 * 0.95 * 39.27358 / 0.02 = 1375.6 * 39.27358 / 0.02 = 2701238 B/s
    assert m.bandwidth(2) == pytest.approx(1375.6 * 39.273576 / 0.02, rel=1e-6)
    assert m.bandwidth(2) * 8e-6 == pytest.approx(21.6099, rel=1e-5)
    # eq. (6): MSS * integral / (RTT * K) with the same window
    w = m.wmax_exact(3)
    assert m.bandwidth(3, 1000, 0.005) == pytest.approx(
        m.cycle_bandwidth(1000, 0.015, m.cubic_integral(w), m.cubic_K(w)), rel=1e-12)
    # rtt_base adds to n * rtt_per_hop
    assert m.bandwidth(3, 1000, 0.005, 0.01) == pytest.approx(m.bandwidth(3, 1000, 0.005) * 0.015 / 0.025, rel=1e-12)


def test_exponent():
    # BW = 8 / n^2: k = 2, A = 8
    fit = m.exponent([1, 2, 4], [8, 2, 0.5])
    assert (fit.k, fit.A, fit.r2) == pytest.approx((2, 8, 1), rel=1e-12)
    # the paper's eq. (7) as data: 60 / n^2.4 over 2..5
    assert m.exponent(NS, 60 / NS ** 2.4)[:2] == pytest.approx((2.4, 60), rel=1e-12)


def test_model_curves():
    df = m.model_curves([2, 3, 4, 5])
    assert list(df.columns) == ["n", "rtt_s", "wmax_approx", "wmax_exact", "p_exact",
                                "bw_approx_mbps", "bw_exact_mbps"]
    np.testing.assert_allclose(df.wmax_exact, m.wmax_exact(NS), rtol=1e-12)
    np.testing.assert_allclose(df.wmax_approx, m.wmax_approx(NS), rtol=1e-12)
    np.testing.assert_allclose(df.bw_exact_mbps, m.bandwidth(NS) * 8e-6, rtol=1e-12)
    np.testing.assert_allclose(df.rtt_s, NS * 0.01, rtol=1e-12)
    assert df.bw_exact_mbps[0] == pytest.approx(21.6099, rel=1e-5)
    np.testing.assert_allclose(df.p_exact, m.loss_ratio(df.wmax_exact, NS), rtol=1e-12)
    rate = m.model_curves(NS, loss_at_rate=True)
    np.testing.assert_allclose(rate.wmax_exact, m.wmax_exact(NS, loss_rtt=NS * 0.01), rtol=1e-12)
    assert rate.wmax_approx[0] == pytest.approx(rate.wmax_exact[0], rel=1e-12)
    secs = m.model_curves(NS, cubic_time=True, loss_at_rate=True)
    np.testing.assert_allclose(secs.wmax_exact, m.wmax_exact(NS, loss_rtt=NS * 0.01, epoch_rtt=NS * 0.01), rtol=1e-12)
    assert secs.wmax_approx[0] == pytest.approx(secs.wmax_exact[0], rel=1e-12)


# --------------------------------------------------------------------------- errors

@pytest.mark.parametrize("call, match", [
    (lambda: m.mathis_bound(1448, 0.1, 0), r"p = 0 is outside the accepted range 0 < p <= 1"),
    (lambda: m.mathis_bound(1448, 0.1, 1.5), r"p = 1.5 is outside .* 0 < p <= 1"),
    (lambda: m.mathis_bound(1448, 0, 0.01), r"rtt = 0 is outside .* rtt > 0"),
    (lambda: m.reno_throughput(-1, 0.1, 0.01), r"mss = -1 is outside .* mss > 0"),
    (lambda: m.reno_throughput(1448, 0.1, 0.01, b=0.5), r"b = 0.5 .* b >= 1"),
    (lambda: m.cycle_bandwidth(1448, 0.1, 10, 0), r"rounds = 0 .* rounds > 0"),
    (lambda: m.loss_ratio(0, 2), r"w = 0 is outside .* w > 0"),
    (lambda: m.loss_ratio(100, 0.5), r"n = 0.5 is outside .* n >= 1"),
    (lambda: m.loss_ratio(100, [2, 0]), r"n = 0 is outside"),
    (lambda: m.loss_ratio(100, 2, log_base=1), r"log_base = 1"),
    (lambda: m.loss_ratio("x", 2), r"w must be a number"),
    (lambda: m.loss_ratio(float("nan"), 2), r"w must be finite"),
    (lambda: m.cubic_window(-1, 100), r"r = -1 .* r >= 0"),
    (lambda: m.cubic_K(100, beta=1), r"beta = 1 .* 0 < beta < 1"),
    (lambda: m.cubic_integral(100, C=0), r"C = 0 .* C > 0"),
    (lambda: m.cubic_integral(0), r"w_max = 0 .* w_max > 0"),
    (lambda: m.wmax_exact(1), r"n = 1 is outside the accepted range a \(n - b\) > 0 \(n > 1.15"),
    (lambda: m.wmax_exact(0), r"n = 0 is outside .* n >= 1"),
    (lambda: m.wmax_exact(2, loss_rtt=0), r"loss_rtt = 0"),
    (lambda: m.wmax_approx(0.5), r"n = 0.5 is outside .* n >= 1"),
    (lambda: m.wmax_approx(3, n_ref=1), r"n = 1 is outside the accepted range a \(n - b\) > 0"),
    (lambda: m.wmax_exact(2, epoch_rtt=-1), r"epoch_rtt = -1 .* epoch_rtt > 0"),
    (lambda: m.wmax_exact(NS, loss_rtt=[0.1, 0.2]), r"loss_rtt must be a scalar or have n's shape"),
    (lambda: m.wmax_approx(3, epoch_rtt=0.03), r"give log_w when epoch_rtt is given"),
    (lambda: m.bandwidth(2, method="x"), r"method = 'x' is not one of"),
    (lambda: m.bandwidth(2, rtt_per_hop=0), r"rtt_per_hop = 0"),
    (lambda: m.exponent([1, 2], [1, 0]), r"bws = 0 .* bws > 0"),
    (lambda: m.exponent([2, 2], [1, 2]), r"two distinct ns"),
    (lambda: m.exponent([1, 2, 3], [1, 2]), r"same length"),
    (lambda: m.fit_loss_model([10, 20, 30], [2, 2, 2], [0.1, 0.2, 0.3]), r"two distinct hop counts"),
    (lambda: m.fit_loss_model([10, 20], [2, 3, 4], [0.1, 0.2, 0.3]), r"same length"),
    (lambda: m.model_curves([0, 2]), r"n = 0 is outside"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()

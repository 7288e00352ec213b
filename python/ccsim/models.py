"""Analytic throughput models of seed paper 000 (Atsuta, Kouya, Sakamoto, "Performance of TCP
CUBIC and TCP BBR on IEEE802.11s Mesh Network", J. Commun. 15(8), 2020; experiment E4).

Equation numbers are the paper's. ``docs/models.md`` gives every equation as implemented, the
units, the reading chosen where the paper is ambiguous, and the exponents these functions give.

Units used throughout:

* ``mss``: bytes of payload per segment; ``rtt``: seconds.
* Throughputs (:func:`mathis_bound`, :func:`reno_throughput`, :func:`cycle_bandwidth`,
  :func:`bandwidth`) are **bytes per second** of payload (MSS / RTT); :func:`model_curves`
  converts to Mbps (10^6 bit/s).
* ``p``: a loss probability, per packet.
* ``r``: round trips since the start of a congestion epoch (the paper's "round"), so the CUBIC
  constant ``C`` is in packets per round^3 and ``K`` is in rounds. CUBIC proper counts
  seconds; ``epoch_rtt``/``cubic_time`` selects that reading.
* ``w``/``w_max``: a congestion window in packets. The paper fitted its loss model (eq. 9-10) on
  UDP input *rates* in packets per second and then evaluates it at *windows*; the functions
  follow the paper (the window's value is used) unless ``loss_rtt``/``loss_at_rate`` asks for
  the rate W / RTT instead.

Only numpy (and pandas for :func:`model_curves`) is used; the root finder is a plain bisection.
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple

import numpy as np

__all__ = [
    "PAPER_LOSS_PARAMS",
    "LossFit",
    "PowerFit",
    "bandwidth",
    "cubic_K",
    "cubic_integral",
    "cubic_window",
    "cycle_bandwidth",
    "exponent",
    "fit_loss_model",
    "loss_ratio",
    "mathis_bound",
    "model_curves",
    "reno_throughput",
    "wmax_approx",
    "wmax_exact",
    "wmax_prefactor",
]

# Eq. (10): the paper's least-squares coefficients of eq. (9), natural log.
PAPER_LOSS_PARAMS: dict[str, float] = {"a": 0.0179, "b": 1.15, "c": 1.92, "d": -0.0167}
A_PAPER, B_PAPER, C_PAPER, D_PAPER = 0.0179, 1.15, 1.92, -0.0167

# Eq. (11): CUBIC constants as the paper gives them (Ha, Rhee, Xu 2008 convention: after a loss
# the window is cut to (1 - beta) W_max). Linux and ccsim's CUBIC use beta = 1 - 717/1024 ~ 0.3.
CUBIC_C = 0.4
CUBIC_BETA = 0.2

BYTES_PER_S_TO_MBPS = 8e-6


# --------------------------------------------------------------------------- input checks

def _array(name: str, value: Any) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a number or an array of numbers, got {value!r}") from exc
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return arr


def _check(name: str, value: Any, ok: Callable[[np.ndarray], np.ndarray], accepted: str) -> np.ndarray:
    """Return value as a float array, or raise ValueError naming the argument, the first bad
    value and the accepted range."""
    arr = _array(name, value)
    bad = ~ok(arr)
    if np.any(bad):
        first = arr[bad].flat[0] if arr.ndim else float(arr)
        raise ValueError(f"{name} = {first:g} is outside the accepted range {accepted}")
    return arr


def _positive(name: str, value: Any) -> np.ndarray:
    return _check(name, value, lambda x: x > 0, f"{name} > 0")


def _probability(name: str, value: Any) -> np.ndarray:
    return _check(name, value, lambda x: (x > 0) & (x <= 1), f"0 < {name} <= 1")


def _hops(value: Any) -> np.ndarray:
    return _check("n", value, lambda x: x >= 1, "n >= 1 (hops)")


def _cubic_params(C: float, beta: float) -> None:
    _positive("C", C)
    _check("beta", beta, lambda x: (x > 0) & (x < 1), "0 < beta < 1")


def _out(arr: np.ndarray) -> float | np.ndarray:
    """A 0-d result as a Python float, anything else as an array."""
    return float(arr) if np.ndim(arr) == 0 else arr


# --------------------------------------------------------------------------- eq. (1)-(3), (6)

def mathis_bound(mss: Any, rtt: Any, p: Any) -> float | np.ndarray:
    """Eq. (1), Mathis et al.: BW < (MSS / RTT) / sqrt(p).

    mss in bytes, rtt in seconds, p the per-packet loss probability (0 < p <= 1).
    Returns bytes per second. The paper writes "<", but the constant 1 is not an upper bound:
    eq. (3) for periodic loss gives sqrt(3/2) ~ 1.22 times this value.
    """
    mss = _positive("mss", mss)
    rtt = _positive("rtt", rtt)
    p = _probability("p", p)
    return _out(mss / rtt / np.sqrt(p))


def reno_throughput(mss: Any, rtt: Any, p: Any, b: float = 1) -> float | np.ndarray:
    """Eq. (3): BW_Reno = (MSS / RTT) sqrt(3 / (2 b p)).

    The paper's eq. (3) is the b = 1 case (one ACK per segment); b is Mathis et al.'s number
    of segments acknowledged per ACK (b = 2 with delayed ACKs). mss in bytes, rtt in seconds,
    0 < p <= 1. Returns bytes per second.
    """
    mss = _positive("mss", mss)
    rtt = _positive("rtt", rtt)
    p = _probability("p", p)
    _check("b", b, lambda x: x >= 1, "b >= 1 (segments per ACK)")
    return _out(mss / rtt * np.sqrt(3.0 / (2.0 * b * p)))


def cycle_bandwidth(mss: Any, rtt: Any, packets: Any, rounds: Any) -> float | np.ndarray:
    """Eq. (2) / (6): BW = MSS * (packets per cycle) / (RTT * R).

    With eq. (5), packets per cycle = 1/p = integral_0^R w(r) dr. mss in bytes, rtt in
    seconds, packets > 0, rounds R > 0 (round trips per cycle). Returns bytes per second.
    """
    mss = _positive("mss", mss)
    rtt = _positive("rtt", rtt)
    packets = _positive("packets", packets)
    rounds = _positive("rounds", rounds)
    return _out(mss * packets / (rtt * rounds))


# --------------------------------------------------------------------------- eq. (9)-(10)

def loss_ratio(
    w: Any,
    n: Any,
    a: float = A_PAPER,
    b: float = B_PAPER,
    c: float = C_PAPER,
    d: float = D_PAPER,
    *,
    clip: bool = False,
    log_base: float = math.e,
) -> float | np.ndarray:
    """Eq. (9): p(w, n) = a (n - b) (log w - c) + d, with eq. (10)'s a, b, c, d as defaults.

    w > 0: in the paper's fit (figs 7-9) the UDP input rate in packets per second (fitted up to
    about 1000 pkt/s); in eq. (13) the paper evaluates it at the window W_max in packets.
    n >= 1: hops. log is natural by default (log_base); with base 10 the paper's coefficients
    give no loss at 2 hops below 1000 pkt/s, contradicting its fig. 7.

    The raw expression can be negative (no loss predicted: always at 1 hop with eq. 10) or
    above 1; clip=True clips it to [0, 1].
    """
    w = _positive("w", w)
    n = _hops(n)
    _check("log_base", log_base, lambda x: (x > 0) & (x != 1), "log_base > 0 and != 1")
    p = a * (n - b) * (np.log(w) / math.log(log_base) - c) + d
    if clip:
        p = np.clip(p, 0.0, 1.0)
    return _out(p)


class LossFit(NamedTuple):
    """Result of :func:`fit_loss_model`: eq. (9)'s coefficients and the fit's residual."""

    a: float
    b: float
    c: float
    d: float
    rss: float  # sum of squared residuals of p
    rmse: float  # sqrt(rss / number of points)


def fit_loss_model(w: Any, n: Any, p: Any) -> LossFit:
    """Least-squares refit of eq. (9)'s a, b, c, d (the paper's eq. 10) on measured points.

    Eq. (9) is bilinear in the unknowns, but expanding it,
        p = a n ln w - a c n - a b ln w + (a b c + d),
    it is linear in theta = (a, -a c, -a b, a b c + d) over the features (n ln w, n, ln w, 1).
    The global least-squares theta is found with numpy.linalg.lstsq and mapped back
    (a = theta1, c = -theta2/a, b = -theta3/a, d = theta4 - a b c); this map is one-to-one
    when a != 0, so the result minimises sum (p - p(w, n))^2 over a, b, c, d as well. The
    paper fitted in two stages (a line in log r per hop count, then lines in n through the
    per-hop coefficients, fig. 8); the joint fit minimises the residual on p directly.

    w > 0 (rates in pkt/s, or windows), n >= 1 (hops), p: equal-length 1-d arrays; at least
    two distinct n and two distinct w are needed. Natural log.
    """
    w = _positive("w", w).ravel()
    n = _hops(n).ravel()
    p = _array("p", p).ravel()
    if not (w.size == n.size == p.size):
        raise ValueError(f"w, n and p must have the same length, got {w.size}, {n.size}, {p.size}")
    if np.unique(n).size < 2 or np.unique(w).size < 2:
        raise ValueError(
            "fit_loss_model needs at least two distinct hop counts n and two distinct w, got "
            f"{np.unique(n).size} distinct n and {np.unique(w).size} distinct w"
        )
    lw = np.log(w)
    design = np.column_stack([n * lw, n, lw, np.ones_like(n)])
    theta, _, rank, _ = np.linalg.lstsq(design, p, rcond=None)
    if rank < 4:
        raise ValueError(f"fit_loss_model: the points do not determine 4 parameters (rank {rank})")
    a = float(theta[0])
    if abs(a) < 1e-12 * max(1.0, float(np.max(np.abs(theta)))):
        raise ValueError("fit_loss_model: fitted a is 0, so b and c are undetermined")
    c = -float(theta[1]) / a
    b = -float(theta[2]) / a
    d = float(theta[3]) - a * b * c
    resid = p - (a * (n - b) * (lw - c) + d)
    rss = float(resid @ resid)
    return LossFit(a, b, c, d, rss, math.sqrt(rss / p.size))


# --------------------------------------------------------------------------- eq. (11)-(12)

def cubic_K(w_max: Any, C: float = CUBIC_C, beta: float = CUBIC_BETA) -> float | np.ndarray:
    """K = cbrt(beta W_max / C) (under eq. 11), in rounds: the round at which w(r) returns to
    W_max, starting from w(0) = (1 - beta) W_max. w_max in packets, C in packets/round^3."""
    w_max = _positive("w_max", w_max)
    _cubic_params(C, beta)
    return _out(np.cbrt(beta * w_max / C))


def cubic_window(r: Any, w_max: Any, C: float = CUBIC_C, beta: float = CUBIC_BETA) -> float | np.ndarray:
    """Eq. (11): w(r) = C (r - K)^3 + W_max, K = cbrt(beta W_max / C).

    r >= 0 in rounds since the loss (the paper counts rounds, where CUBIC proper counts
    seconds), w_max in packets, C = 0.4 packets/round^3, beta = 0.2 (window cut to
    (1 - beta) W_max). Returns the window in packets.
    """
    r = _check("r", r, lambda x: x >= 0, "r >= 0 (rounds)")
    K = cubic_K(w_max, C, beta)
    return _out(C * (r - K) ** 3 + _array("w_max", w_max))


def cubic_integral(w_max: Any, C: float = CUBIC_C, beta: float = CUBIC_BETA) -> float | np.ndarray:
    """Eq. (12): integral_0^K w(r) dr = K W_max (1 - beta/4) = W_max^(4/3) cbrt(beta/C) (1 - beta/4).

    The upper limit R of eq. (5) is K, since w(K) = W_max (the paper's "w(R) = W_max").
    This is the number of packets sent in one epoch, i.e. 1/p in eq. (5). w_max in packets.
    """
    w_max = _positive("w_max", w_max)
    _cubic_params(C, beta)
    return _out(w_max ** (4.0 / 3.0) * np.cbrt(beta / C) * (1.0 - beta / 4.0))


# --------------------------------------------------------------------------- eq. (13)-(14)

def wmax_prefactor(C: float = CUBIC_C, beta: float = CUBIC_BETA) -> float:
    """Eq. (13)'s constant: (64 C / (beta (4 - beta)^3))^(1/4), so that W_max = prefactor *
    p^(-3/4) solves cubic_integral(W_max) = 1/p. 1.23585 for C = 0.4, beta = 0.2."""
    _cubic_params(C, beta)
    return (64.0 * C / (beta * (4.0 - beta) ** 3)) ** 0.25


def _loss_slope(n: float, a: float, b: float) -> float:
    """d p / d ln w at n; eq. (5) has a unique root only where it is positive."""
    s = a * (n - b)
    if not s > 0:
        raise ValueError(
            f"n = {n:g} is outside the accepted range a (n - b) > 0 (n > {b:g} with a = {a:g}): "
            "there the loss model does not rise with the window, so eq. (5) has no solution "
            "(with eq. 10 it predicts no loss at 1 hop)"
        )
    return s


def _bisect(f: Callable[[float], float], lo: float, hi: float, *, xtol: float = 1e-13,
            maxiter: int = 200) -> float:
    """Root of a continuous f with f(lo) <= 0 < f(hi) (or the reverse), by bisection to
    |hi - lo| <= xtol * max(1, |x|). Raises ValueError if the bracket does not straddle a sign
    change."""
    flo, fhi = f(lo), f(hi)
    if flo == 0:
        return lo
    if fhi == 0:
        return hi
    if (flo < 0) == (fhi < 0):
        raise ValueError(f"_bisect: f({lo:g}) = {flo:g} and f({hi:g}) = {fhi:g} have the same sign")
    for _ in range(maxiter):
        mid = 0.5 * (lo + hi)
        if abs(hi - lo) <= xtol * max(1.0, abs(mid)):
            return mid
        fmid = f(mid)
        if fmid == 0:
            return mid
        if (fmid < 0) == (flo < 0):
            lo, flo = mid, fmid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _per_n(name: str, value: Any, shape: tuple[int, ...]) -> np.ndarray:
    """A positive scalar or one value per n, broadcast to n's shape."""
    arr = _positive(name, value)
    try:
        return np.broadcast_to(arr, shape)
    except ValueError as exc:
        raise ValueError(f"{name} must be a scalar or have n's shape {shape}, got shape {arr.shape}") from exc


def wmax_exact(
    n: Any,
    C: float = CUBIC_C,
    beta: float = CUBIC_BETA,
    a: float = A_PAPER,
    b: float = B_PAPER,
    c: float = C_PAPER,
    d: float = D_PAPER,
    *,
    loss_rtt: Any = None,
    epoch_rtt: Any = None,
) -> float | np.ndarray:
    """W_max(n) solving eq. (5) with eq. (12) and eq. (9) exactly (no approximation):

        W_max^(4/3) cbrt(beta/C) (1 - beta/4) * p(W_max, n) = 1.

    Where a (n - b) > 0 the left side is 0 at the W where p(W, n) = 0 and increases without
    bound above it, so the root is unique; it is found by bisection on ln W_max. Returns
    packets. n > b (hops; n = 2.. with eq. 10).

    loss_rtt: None (the paper) evaluates p at the window W_max itself. A value in seconds
    (scalar, or one per n) evaluates p at the sending rate W_max / loss_rtt in packets per
    second, the unit in which eq. (10) was fitted.

    epoch_rtt: None (the paper) counts r in rounds, C in packets/round^3. A value in seconds
    (scalar, or one per n) reads eq. (11) as CUBIC proper, r in seconds and C in
    packets/s^3; the packets sent in the epoch are then integral w dt / RTT, i.e. eq. (12)
    divided by epoch_rtt. epoch_rtt = 1 s gives the paper's result.
    """
    n_arr = _hops(n)
    _cubic_params(C, beta)
    k = float(np.cbrt(beta / C) * (1.0 - beta / 4.0))
    loss_shift = np.zeros(n_arr.shape) if loss_rtt is None else np.log(_per_n("loss_rtt", loss_rtt, n_arr.shape))
    epoch = np.ones(n_arr.shape) if epoch_rtt is None else _per_n("epoch_rtt", epoch_rtt, n_arr.shape)
    out = np.empty(n_arr.shape)
    for idx in np.ndindex(n_arr.shape):
        s = _loss_slope(float(n_arr[idx]), a, b)
        shift = float(loss_shift[idx])  # ln of the loss model's argument is ln W - shift
        kk = k / float(epoch[idx])

        def h(u: float) -> float:  # u = ln W_max; h < 0 below the root, > 0 above
            return kk * math.exp(4.0 * u / 3.0) * (s * (u - shift - c) + d) - 1.0

        lo = c - d / s + shift  # p = 0 here, so h(lo) = -1
        step = 1.0
        hi = lo + step
        while h(hi) <= 0:
            step *= 2.0
            hi = lo + step
        out[idx] = math.exp(_bisect(h, lo, hi))
    return _out(out)


def wmax_approx(
    n: Any,
    C: float = CUBIC_C,
    beta: float = CUBIC_BETA,
    a: float = A_PAPER,
    b: float = B_PAPER,
    c: float = C_PAPER,
    d: float = D_PAPER,
    *,
    log_w: float | None = None,
    n_ref: float = 2.0,
    asymptotic: bool = False,
    epoch_rtt: Any = None,
) -> float | np.ndarray:
    """Eq. (13) with the paper's approximation "log W_max is constant":

        W_max = (64 C / (beta (4 - beta)^3))^(1/4) * (a (n - b)(L - c) + d)^(-3/4),

    with L = log_w held fixed for every n (L is the log of the loss model's argument). The
    paper does not say which L; by default (log_w=None) L = ln wmax_exact(n_ref), so that the
    approximation agrees with the exact root at n_ref (default 2 hops, the start of the
    paper's 2..5 fit). With L fixed, p is affine in n, and W_max ~ (n - n0)^(-3/4),
    n0 = b - d / (a (L - c)); only for n >> n0 is this the paper's n^(-0.75).

    asymptotic=True drops b and d as well (p = a (L - c) n), which is exactly the paper's
    stated proportionality W_max ~ n^(-0.75). epoch_rtt (seconds, scalar or one per n; needs
    an explicit log_w) reads r as seconds as in :func:`wmax_exact`, which multiplies W_max by
    epoch_rtt^(3/4). Returns packets; NaN where the bracket a (n - b)(L - c) + d is not
    positive (no loss predicted, no finite W_max).
    """
    n_arr = _hops(n)
    pref = wmax_prefactor(C, beta)
    if log_w is None:
        if epoch_rtt is not None:
            raise ValueError("wmax_approx: give log_w when epoch_rtt is given (the default L "
                             "would need the epoch RTT at n_ref)")
        log_w = math.log(float(wmax_exact(n_ref, C, beta, a, b, c, d)))
    else:
        log_w = float(_array("log_w", log_w))
    epoch = 1.0 if epoch_rtt is None else _per_n("epoch_rtt", epoch_rtt, n_arr.shape)
    if asymptotic:
        p = a * n_arr * (log_w - c)
    else:
        p = a * (n_arr - b) * (log_w - c) + d
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.where(p > 0, pref * (np.abs(p) / epoch) ** -0.75, np.nan)
    return _out(w)


def bandwidth(
    n: Any,
    mss: float = 1448.0,
    rtt_per_hop: float = 0.01,
    rtt_base: float = 0.0,
    *,
    method: str = "exact",
    C: float = CUBIC_C,
    beta: float = CUBIC_BETA,
    a: float = A_PAPER,
    b: float = B_PAPER,
    c: float = C_PAPER,
    d: float = D_PAPER,
    log_w: float | None = None,
    n_ref: float = 2.0,
    loss_at_rate: bool = False,
    cubic_time: bool = False,
) -> float | np.ndarray:
    """Eq. (6) with eq. (12), the throughput behind eq. (14), in bytes per second:

        BW(n) = MSS * integral_0^K w dr / (RTT(n) * K) = MSS W_max(n) (1 - beta/4) / RTT(n),
        RTT(n) = rtt_base + n * rtt_per_hop.

    The paper only says "when the number of hops increases, RTT also increases"; its step
    from W_max ~ n^-0.75 to BW ~ n^-1.75 needs RTT proportional to n, hence the default
    rtt_base = 0. rtt_per_hop (seconds; default 10 ms) and mss (bytes; default 1448, ccsim's
    default) are not given in the paper: with the paper's reading they scale BW but do not
    change its exponent.

    method: "exact" (:func:`wmax_exact`), "approx" (:func:`wmax_approx` with log_w / n_ref)
    or "asymptotic" (:func:`wmax_approx` with asymptotic=True). The approximations' default
    L is the log of the loss model's argument at the exact root at n_ref.
    loss_at_rate=True evaluates the loss model at W_max / RTT(n) pkt/s instead of at the
    window; cubic_time=True reads eq. (11) with r in seconds (CUBIC proper, epoch_rtt =
    RTT(n) in :func:`wmax_exact`). The BW formula is the same in both readings of r.
    """
    n_arr = _hops(n)
    _positive("mss", mss)
    _positive("rtt_per_hop", rtt_per_hop)
    _check("rtt_base", rtt_base, lambda x: x >= 0, "rtt_base >= 0 (seconds)")
    if method not in ("exact", "approx", "asymptotic"):
        raise ValueError(f"method = {method!r} is not one of 'exact', 'approx', 'asymptotic'")
    rtt = rtt_base + n_arr * rtt_per_hop
    if method == "exact":
        w = wmax_exact(n_arr, C, beta, a, b, c, d, loss_rtt=rtt if loss_at_rate else None,
                       epoch_rtt=rtt if cubic_time else None)
    else:
        if log_w is None:
            rtt_ref = rtt_base + n_ref * rtt_per_hop
            w_ref = float(wmax_exact(n_ref, C, beta, a, b, c, d,
                                     loss_rtt=rtt_ref if loss_at_rate else None,
                                     epoch_rtt=rtt_ref if cubic_time else None))
            log_w = math.log(w_ref / rtt_ref if loss_at_rate else w_ref)
        w = wmax_approx(n_arr, C, beta, a, b, c, d, log_w=log_w, asymptotic=method == "asymptotic",
                        epoch_rtt=rtt if cubic_time else None)
    return _out(mss * np.asarray(w) * (1.0 - beta / 4.0) / rtt)


# --------------------------------------------------------------------------- fits and curves

class PowerFit(NamedTuple):
    """BW = A / n^k fitted by :func:`exponent`."""

    k: float  # the exponent: BW ~ n^(-k)
    A: float  # the prefactor (BW at n = 1), in the units of the data
    r2: float  # coefficient of determination of the log-log fit


def exponent(ns: Any, bws: Any) -> PowerFit:
    """Least-squares line through (ln n, ln BW): ln BW = ln A - k ln n, i.e. BW = A / n^k, as
    the paper fits eq. (7)-(8) over 2..5 hops. ns > 0 and bws > 0, same length, at least two
    distinct ns. Returns PowerFit(k, A, r2); works for W_max(n) as well."""
    ns = _positive("ns", ns).ravel()
    bws = _positive("bws", bws).ravel()
    if ns.size != bws.size:
        raise ValueError(f"ns and bws must have the same length, got {ns.size} and {bws.size}")
    if np.unique(ns).size < 2:
        raise ValueError(f"exponent needs at least two distinct ns, got {np.unique(ns).size}")
    x, y = np.log(ns), np.log(bws)
    slope, intercept = np.polyfit(x, y, 1)
    resid = y - (slope * x + intercept)
    ss_tot = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - float(resid @ resid) / ss_tot if ss_tot > 0 else 1.0
    return PowerFit(float(-slope), float(math.exp(intercept)), r2)


def model_curves(
    ns: Any = (2, 3, 4, 5),
    mss: float = 1448.0,
    rtt_per_hop: float = 0.01,
    rtt_base: float = 0.0,
    *,
    C: float = CUBIC_C,
    beta: float = CUBIC_BETA,
    a: float = A_PAPER,
    b: float = B_PAPER,
    c: float = C_PAPER,
    d: float = D_PAPER,
    log_w: float | None = None,
    n_ref: float = 2.0,
    loss_at_rate: bool = False,
    cubic_time: bool = False,
):
    """The E4 model curves, one row per hop count, for plotting against simulation.

    Columns: n; rtt_s = rtt_base + n rtt_per_hop (seconds); wmax_approx and wmax_exact
    (packets; eq. 13 with log W_max held at L, and the exact root of eq. 5); p_exact (the loss
    ratio at the exact root); bw_approx_mbps and bw_exact_mbps (eq. 6/14, payload Mbps).
    Defaults: the paper's C, beta and eq. (10); mss = 1448 bytes and rtt_per_hop = 10 ms are
    assumptions (the paper gives neither), RTT proportional to n as eq. (14) requires.
    loss_at_rate and cubic_time switch to the other readings of the loss model's w and of
    eq. (11)'s r (see :func:`bandwidth`); log_w and n_ref set the approximation's held log
    (see :func:`wmax_approx`).
    """
    import pandas as pd

    n_arr = _hops(ns).ravel()
    common = dict(C=C, beta=beta, a=a, b=b, c=c, d=d, log_w=log_w, n_ref=n_ref,
                  loss_at_rate=loss_at_rate, cubic_time=cubic_time)
    rtt = rtt_base + n_arr * rtt_per_hop
    bw_exact = np.asarray(bandwidth(n_arr, mss, rtt_per_hop, rtt_base, method="exact", **common))
    bw_approx = np.asarray(bandwidth(n_arr, mss, rtt_per_hop, rtt_base, method="approx", **common))
    # Invert BW = MSS W (1 - beta/4) / RTT for the windows, so both come from one code path.
    per_w = mss * (1.0 - beta / 4.0) / rtt
    w_exact = bw_exact / per_w
    loss_w = w_exact / rtt if loss_at_rate else w_exact
    return pd.DataFrame({
        "n": n_arr,
        "rtt_s": rtt,
        "wmax_approx": bw_approx / per_w,
        "wmax_exact": w_exact,
        "p_exact": np.asarray(loss_ratio(loss_w, n_arr, a, b, c, d)),
        "bw_approx_mbps": bw_approx * BYTES_PER_S_TO_MBPS,
        "bw_exact_mbps": bw_exact * BYTES_PER_S_TO_MBPS,
    })

"""Reno in Python: a line-by-line port of ccsim's built-in `newreno` (Linux
`tcp_reno_ssthresh` and `tcp_reno_cong_avoid`, with RFC 3465 byte counting), which gives
bit-identical results (tests/python/test_python_cc.py).

    ccsim run examples/python_cc/reno.toml     # cc = "reno.py:Reno"
"""

import ccsim


class Reno(ccsim.CongestionControl):
    """Reno (Linux tcp_reno_*), in Python."""

    name = "pyreno"
    params = {"beta": 0.5, "abc": True}

    def ssthresh(self, sock):
        # tcp_reno_ssthresh: half the window, at least 2 (the built-in's exact arithmetic).
        if self.beta == 0.5:
            return max(sock.cwnd >> 1, 2)
        return max(int(sock.cwnd * self.beta), 2)

    def cong_avoid(self, sock, acked):
        # tcp_reno_cong_avoid: slow start up to ssthresh, then +1 packet per cwnd ACKed.
        if not self.abc:
            acked = min(acked, 1)  # RFC 5681 without byte counting: each ACK counts once
        if not sock.cwnd_limited() or acked == 0:
            return
        if sock.cwnd < sock.ssthresh:
            # tcp_slow_start
            cwnd = min(sock.cwnd + acked, sock.ssthresh)
            acked -= cwnd - sock.cwnd
            sock.cwnd = min(cwnd, sock.cwnd_clamp)
            if acked == 0:
                return
        # tcp_cong_avoid_ai(tp, cwnd, acked)
        w = max(sock.cwnd, 1)
        if sock.cwnd_cnt >= w:
            sock.cwnd_cnt = 0
            sock.cwnd += 1
        sock.cwnd_cnt += acked
        if sock.cwnd_cnt >= w:
            delta = sock.cwnd_cnt // w
            sock.cwnd_cnt -= delta * w
            sock.cwnd += delta
        sock.cwnd = min(sock.cwnd, sock.cwnd_clamp)

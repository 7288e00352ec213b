"""CUBIC in Python: Linux's `tcp_cubic.c` structure (epochs, the cubic window W(t) =
C (t - K)^3 + W_max, the Reno-friendly floor, fast convergence, HyStart's ACK-train and
delay-increase detection), in floating point instead of the kernel's fixed point (K, C and
beta are real numbers here; the target window is whole packets, as the kernel's). Its throughput stays within 2% of the built-in `cubic`
(tests/python/test_python_cc.py).

    cc = "cubic.py:Cubic"      # in a scenario next to this file
"""

import math

import ccsim

US = 1_000          # ns
MS = 1_000_000      # ns: the kernel's jiffy at HZ = 1000


class Cubic(ccsim.CongestionControl):
    """CUBIC (RFC 9438, Linux tcp_cubic.c), in floating-point Python."""

    name = "pycubic"
    params = {"beta": 0.7, "c": 0.4, "fast_convergence": True, "tcp_friendliness": True, "hystart": True,
              "hystart_low_window": 16, "hystart_ack_delta_ms": 2.0}

    def init(self, sock):
        self.reset()
        if self.hystart:
            self.hystart_reset(sock)

    def reset(self):
        self.cnt = 0
        self.last_max_cwnd = 0
        self.last_cwnd = 0
        self.last_time = 0
        self.origin = 0.0
        self.k = 0.0            # seconds
        self.delay_min = 0      # us
        self.epoch_start = None  # ms
        self.ack_cnt = 0
        self.tcp_cwnd = 0.0
        self.found = False

    def hystart_reset(self, sock):
        self.round_start = self.last_ack = sock.now // US
        self.end_seq = sock.snd_nxt
        self.curr_rtt = math.inf
        self.sample_cnt = 0

    def update(self, sock, cwnd, acked):
        now_ms = sock.now // MS
        self.ack_cnt += acked
        if self.last_cwnd == cwnd and now_ms - self.last_time <= 1000 // 32:
            return
        if not (self.epoch_start is not None and now_ms == self.last_time):
            self.last_cwnd, self.last_time = cwnd, now_ms
            if self.epoch_start is None:
                self.epoch_start = now_ms
                self.ack_cnt = acked
                self.tcp_cwnd = cwnd
                if self.last_max_cwnd <= cwnd:
                    self.k, self.origin = 0.0, cwnd
                else:
                    self.k = ((self.last_max_cwnd - cwnd) / self.c) ** (1 / 3)
                    self.origin = self.last_max_cwnd
            # the window one RTT (delay_min) ahead
            t = (now_ms - self.epoch_start) / 1e3 + self.delay_min / 1e6
            # whole packets, as the kernel's bic_target: origin -/+ floor(C |t - K|^3)
            delta = int(self.c * abs(t - self.k) ** 3)
            target = self.origin - delta if t < self.k else self.origin + delta
            self.cnt = cwnd // (target - cwnd) if target > cwnd else 100 * cwnd
            if self.last_max_cwnd == 0 and self.cnt > 20:
                self.cnt = 20
        if self.tcp_friendliness:
            # Reno-friendly window: +3(1-beta)/(1+beta) packets per cwnd ACKed
            per = cwnd * (1 + self.beta) / (3 * (1 - self.beta))
            if self.ack_cnt > per > 0:
                n = int(self.ack_cnt // per)
                self.ack_cnt -= n * per
                self.tcp_cwnd += n
            if self.tcp_cwnd > cwnd:
                self.cnt = min(self.cnt, cwnd // (self.tcp_cwnd - cwnd))
        self.cnt = max(self.cnt, 2)

    def cong_avoid(self, sock, acked):
        if not sock.cwnd_limited():
            return
        if sock.cwnd < sock.ssthresh:
            acked = sock.slow_start(acked)
            if acked == 0:
                return
        self.update(sock, sock.cwnd, acked)
        sock.cong_avoid_ai(int(self.cnt), acked)

    def ssthresh(self, sock):
        self.epoch_start = None
        if sock.cwnd < self.last_max_cwnd and self.fast_convergence:
            self.last_max_cwnd = int(sock.cwnd * (1 + self.beta) / 2)
        else:
            self.last_max_cwnd = sock.cwnd
        return max(int(sock.cwnd * self.beta), 2)

    def set_state(self, sock, state):
        if state == ccsim.CaState.LOSS:
            self.reset()
            self.hystart_reset(sock)

    def cwnd_event(self, sock, event):
        if event == ccsim.CaEvent.TX_START and self.epoch_start is not None:
            now_ms = sock.now // MS
            idle = now_ms - sock.lsndtime // MS
            if idle > 0:
                self.epoch_start = min(self.epoch_start + idle, now_ms)

    def pkts_acked(self, sock, sample):
        if sample.rtt < 0:
            return
        if self.epoch_start is not None and sock.now // MS - self.epoch_start < 1000:
            return
        delay = max(sample.rtt // US, 1)
        if self.delay_min == 0 or self.delay_min > delay:
            self.delay_min = delay
        if self.hystart and not self.found and sock.cwnd < sock.ssthresh and sock.cwnd >= self.hystart_low_window:
            if sock.snd_una > self.end_seq:
                self.hystart_reset(sock)
            self.hystart_update(sock, delay)

    def hystart_update(self, sock, delay):
        now = sock.now // US
        if now - self.last_ack <= self.hystart_ack_delta_ms * 1000:  # ACK train
            self.last_ack = now
            ack_delay = min(65536 * 4 * 1_000_000 // sock.pacing_rate, 1000) if sock.pacing_rate else 0
            threshold = self.delay_min + ack_delay
            if not sock.paced:
                threshold //= 2
            if now - self.round_start > threshold:
                self.found = True
                sock.ssthresh = sock.cwnd
        self.curr_rtt = min(self.curr_rtt, delay)  # delay increase
        if self.sample_cnt < 8:
            self.sample_cnt += 1
        elif self.curr_rtt > self.delay_min + min(max(self.delay_min >> 3, 4000), 16000):
            self.found = True
            sock.ssthresh = sock.cwnd

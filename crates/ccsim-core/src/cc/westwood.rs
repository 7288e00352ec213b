//! TCP Westwood+ (Mascolo, Casetti, Gerla et al., MobiCom 2001; Grieco & Mascolo, CCR 2004)
//! as Linux implements it (net/ipv4/tcp_westwood.c): Reno's growth and Reno's halving on
//! entering Recovery, but when a window reduction completes (`CA_EVENT_COMPLETE_CWR`) and
//! after a timeout (`CA_EVENT_LOSS`) ssthresh = max(BWE x RTTmin / MSS, 2), where BWE is an
//! end-to-end bandwidth estimate:
//!
//! - acknowledged bytes are summed over windows of one RTT (at least 50 ms,
//!   `TCP_WESTWOOD_RTT_MIN`), and each window's rate bk / delta (bytes per jiffy) goes through
//!   two low-pass filters in a row, x_new = (7 x_old + sample) / 8 (`westwood_filter`); the
//!   first sample fills both;
//! - RTTmin is the smallest RTT sample (jiffies), restarted from the next sample after a
//!   timeout.
//!
//! ccsim has no header-prediction fast path, so every ACK takes Linux's slow path
//! (`tcp_westwood_ack` with `CA_ACK_SLOWPATH`: `westwood_acked_count`): an ACK that moves
//! snd_una counts the bytes it acknowledges; a duplicate ACK counts one MSS and remembers it
//! (`accounted`), and a later cumulative ACK of more than one MSS subtracts what was
//! remembered. For ACKs that move snd_una with nothing remembered this is exactly the fast
//! path's count (`westwood_fast_bw`); Linux would take the fast path only for ACKs without
//! SACK blocks, and there skips the subtraction. Bytes are packets x MSS (ccsim counts
//! sequence in packets). Time is jiffies at HZ = 1000; RTT samples are `usecs_to_jiffies` of
//! the ACK's RTT in us (rounded up to whole ms). The products are Linux's u32 arithmetic.
//! Linux has no module parameters here; undo is `tcp_reno_undo_cwnd`.

use super::jiffies::{sample_rtt_us, tcp_jiffies32, usecs_to_jiffies, HZ};
use super::newreno::reno_cong_avoid;
use super::{AckSample, AlgorithmInfo, CaEvent, CongestionControl, ParamSpec, SockState};

pub const PARAMS: &[ParamSpec] = &[];

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    name: "westwood",
    summary: "Westwood+: Reno growth; after a loss ssthresh = filtered bandwidth estimate x min RTT (not cwnd/2)",
    source: "Mascolo et al., MobiCom 2001; Grieco & Mascolo, CCR 2004; Linux net/ipv4/tcp_westwood.c",
    params: PARAMS,
};

/// Linux `TCP_WESTWOOD_RTT_MIN` (HZ / 20): the shortest bandwidth-sampling window, 50 ms.
const TCP_WESTWOOD_RTT_MIN: u32 = HZ / 20;
/// Linux `TCP_WESTWOOD_INIT_RTT` (20 x HZ).
const TCP_WESTWOOD_INIT_RTT: u32 = 20 * HZ;

/// Linux `struct westwood`.
pub struct Westwood {
    /// First filter stage, bytes per jiffy.
    pub bw_ns_est: u32,
    /// Bandwidth estimate, bytes per jiffy.
    pub bw_est: u32,
    /// Start of the current sampling window (jiffies).
    rtt_win_sx: u32,
    /// Bytes acknowledged in the current window.
    pub bk: u32,
    /// snd_una in bytes at the previous ACK.
    snd_una: u32,
    cumul_ack: u32,
    /// Bytes credited to duplicate ACKs, not yet cumulatively acknowledged.
    pub accounted: u32,
    /// Latest RTT sample (jiffies).
    pub rtt: u32,
    /// Minimum RTT (jiffies).
    pub rtt_min: u32,
    first_ack: bool,
    reset_rtt_min: bool,
}

impl Westwood {
    pub fn new() -> Self {
        Westwood {
            bw_ns_est: 0,
            bw_est: 0,
            rtt_win_sx: 0,
            bk: 0,
            snd_una: 0,
            cumul_ack: 0,
            accounted: 0,
            rtt: TCP_WESTWOOD_INIT_RTT,
            rtt_min: TCP_WESTWOOD_INIT_RTT,
            first_ack: true,
            reset_rtt_min: true,
        }
    }

    /// tp->snd_una in bytes (ccsim's sequence counts packets).
    fn snd_una_bytes(s: &SockState) -> u32 {
        s.snd_una.wrapping_mul(s.mss)
    }

    /// westwood_do_filter.
    fn do_filter(a: u32, b: u32) -> u32 {
        (7u32.wrapping_mul(a).wrapping_add(b)) >> 3
    }

    /// westwood_filter.
    fn filter(&mut self, delta: u32) {
        if self.bw_ns_est == 0 && self.bw_est == 0 {
            // An empty filter takes the first sample as it is.
            self.bw_ns_est = self.bk / delta;
            self.bw_est = self.bw_ns_est;
        } else {
            self.bw_ns_est = Self::do_filter(self.bw_ns_est, self.bk / delta);
            self.bw_est = Self::do_filter(self.bw_est, self.bw_ns_est);
        }
    }

    /// westwood_update_window: close the sampling window once it is longer than
    /// max(RTT, 50 ms).
    fn update_window(&mut self, s: &SockState) {
        let now = tcp_jiffies32(s.now);
        let delta = now.wrapping_sub(self.rtt_win_sx) as i32;
        if self.first_ack {
            self.snd_una = Self::snd_una_bytes(s);
            self.first_ack = false;
        }
        if self.rtt != 0 && delta as u32 > self.rtt.max(TCP_WESTWOOD_RTT_MIN) {
            self.filter(delta as u32);
            self.bk = 0;
            self.rtt_win_sx = now;
        }
    }

    /// update_rtt_min.
    fn update_rtt_min(&mut self) {
        if self.reset_rtt_min {
            self.rtt_min = self.rtt;
            self.reset_rtt_min = false;
        } else {
            self.rtt_min = self.rtt_min.min(self.rtt);
        }
    }

    /// westwood_acked_count: bytes this ACK stands for (delayed, partial and duplicate ACKs).
    fn acked_count(&mut self, s: &SockState) -> u32 {
        let una = Self::snd_una_bytes(s);
        let mss = s.mss;
        self.cumul_ack = una.wrapping_sub(self.snd_una);
        // A duplicate ACK: it stands for one segment.
        if self.cumul_ack == 0 {
            self.accounted = self.accounted.wrapping_add(mss);
            self.cumul_ack = mss;
        }
        if self.cumul_ack > mss {
            // Partial or delayed ACK.
            if self.accounted >= self.cumul_ack {
                self.accounted -= self.cumul_ack;
                self.cumul_ack = mss;
            } else {
                self.cumul_ack -= self.accounted;
                self.accounted = 0;
            }
        }
        self.snd_una = una;
        self.cumul_ack
    }

    /// tcp_westwood_bw_rttmin: max(bw_est x rtt_min / mss, 2) packets.
    pub fn bw_rttmin(&self, s: &SockState) -> u32 {
        (self.bw_est.wrapping_mul(self.rtt_min) / s.mss).max(2)
    }
}

impl Default for Westwood {
    fn default() -> Self {
        Self::new()
    }
}

impl CongestionControl for Westwood {
    fn name(&self) -> &'static str {
        "westwood"
    }

    /// tcp_westwood_init.
    fn init(&mut self, s: &mut SockState) {
        *self = Westwood::new();
        self.rtt_win_sx = tcp_jiffies32(s.now);
        self.snd_una = Self::snd_una_bytes(s);
    }

    /// tcp_reno_ssthresh.
    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        (s.cwnd >> 1).max(2)
    }

    /// tcp_reno_cong_avoid.
    fn cong_avoid(&mut self, s: &mut SockState, acked: u32) {
        reno_cong_avoid(s, acked);
    }

    /// tcp_westwood_ack, slow path (see the module comment).
    fn in_ack_event(&mut self, s: &mut SockState, _flags: u32) {
        self.update_window(s);
        let n = self.acked_count(s);
        self.bk = self.bk.wrapping_add(n);
        self.update_rtt_min();
    }

    /// tcp_westwood_pkts_acked: the latest RTT sample, in jiffies.
    fn pkts_acked(&mut self, _s: &mut SockState, sample: &AckSample) {
        let rtt_us = sample_rtt_us(sample.rtt);
        if rtt_us > 0 {
            self.rtt = usecs_to_jiffies(rtt_us.min(u32::MAX as i64) as u32);
        }
    }

    /// tcp_westwood_event.
    fn cwnd_event(&mut self, s: &mut SockState, ev: CaEvent) {
        match ev {
            CaEvent::CompleteCwr => {
                s.ssthresh = self.bw_rttmin(s);
                s.cwnd = s.ssthresh;
            }
            CaEvent::Loss => {
                s.ssthresh = self.bw_rttmin(s);
                // RTTmin restarts from the next sample.
                self.reset_rtt_min = true;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    fn sock() -> SockState {
        SockState::new(1000, 10)
    }

    /// An ACK at `ms` with snd_una = `una` packets and an RTT sample of `rtt_ms`.
    fn ack(w: &mut Westwood, s: &mut SockState, ms: u64, una: u32, rtt_ms: u64) {
        s.now = ms * MS;
        s.snd_una = una;
        w.in_ack_event(s, 0);
        w.pkts_acked(s, &AckSample { pkts_acked: 1, rtt: (rtt_ms * MS) as i64, ..AckSample::default() });
    }

    #[test]
    fn filter_on_a_steady_ack_stream() {
        // One 1000-byte packet acknowledged every ms (1000 B/jiffy), RTT 40 ms.
        let mut w = Westwood::new();
        let mut s = sock();
        w.init(&mut s);
        // ACK 1: the first ACK only sets snd_una, so it counts as a duplicate (1 MSS, remembered).
        ack(&mut w, &mut s, 1, 1, 40);
        assert_eq!((w.bk, w.accounted, w.rtt, w.rtt_min), (1000, 1000, 40, 20_000));
        // The window (from t = 0) closes on the first ACK with delta > max(40, 50): t = 51,
        // with ACKs 1..=50 in it: 50000 / 51 = 980; the empty filter takes it as it is.
        for t in 2..=50 {
            ack(&mut w, &mut s, t, t as u32, 40);
        }
        assert_eq!((w.bk, w.bw_est), (50_000, 0));
        assert_eq!(w.rtt_min, 40);
        ack(&mut w, &mut s, 51, 51, 40);
        assert_eq!((w.bw_ns_est, w.bw_est, w.bk), (980, 980, 1000));
        // Next window: t = 51..=101 (51 ACKs), closed at t = 102: 51000 / 51 = 1000.
        // bw_ns = (7 x 980 + 1000) / 8 = 982; bw = (7 x 980 + 982) / 8 = 980.
        for t in 52..=102 {
            ack(&mut w, &mut s, t, t as u32, 40);
        }
        assert_eq!((w.bw_ns_est, w.bw_est), (982, 980));
        // Third window: 1000 again. bw_ns = (6874 + 1000) / 8 = 984; bw = (6860 + 984) / 8 = 980.
        for t in 103..=153 {
            ack(&mut w, &mut s, t, t as u32, 40);
        }
        assert_eq!((w.bw_ns_est, w.bw_est), (984, 980));
        // ssthresh after a timeout: 980 B/ms x 40 ms / 1000 B = 39 packets (not cwnd / 2).
        s.cwnd = 100;
        w.cwnd_event(&mut s, CaEvent::Loss);
        assert_eq!(s.ssthresh, 39);
        assert_eq!(s.cwnd, 100);
        // When a Recovery completes, cwnd = ssthresh = BWE x RTTmin.
        s.ssthresh = w.ssthresh(&mut s); // Reno's halving on entering Recovery: 50
        assert_eq!(s.ssthresh, 50);
        w.cwnd_event(&mut s, CaEvent::CompleteCwr);
        assert_eq!((s.ssthresh, s.cwnd), (39, 39));
    }

    #[test]
    fn filter_two_stage_response_to_a_rate_step() {
        let mut w = Westwood::new();
        w.bk = 100_000;
        w.filter(100);
        assert_eq!((w.bw_ns_est, w.bw_est), (1000, 1000));
        w.bk = 200_000;
        w.filter(100);
        // (7000 + 2000) / 8 = 1125; (7000 + 1125) / 8 = 1015.
        assert_eq!((w.bw_ns_est, w.bw_est), (1125, 1015));
        w.bk = 200_000;
        w.filter(100);
        // (7875 + 2000) / 8 = 1234; (7105 + 1234) / 8 = 1042.
        assert_eq!((w.bw_ns_est, w.bw_est), (1234, 1042));
    }

    #[test]
    fn duplicate_acks_count_one_mss_and_are_subtracted_later() {
        let mut w = Westwood::new();
        let mut s = sock();
        w.init(&mut s);
        ack(&mut w, &mut s, 1, 10, 40); // first ACK: 1 MSS remembered
        w.accounted = 0;
        w.bk = 0;
        // Two duplicate ACKs: 1000 each, remembered.
        ack(&mut w, &mut s, 2, 10, 40);
        ack(&mut w, &mut s, 3, 10, 40);
        assert_eq!((w.bk, w.accounted), (2000, 2000));
        // A cumulative ACK of 3 packets: 3000 - 2000 = 1000 counted.
        ack(&mut w, &mut s, 4, 13, 40);
        assert_eq!((w.bk, w.accounted), (3000, 0));
        // Remembered more than acknowledged: one MSS counted, the rest kept.
        w.accounted = 5000;
        ack(&mut w, &mut s, 5, 16, 40);
        assert_eq!((w.bk, w.accounted), (4000, 2000));
        // A one-packet ACK never subtracts.
        ack(&mut w, &mut s, 6, 17, 40);
        assert_eq!((w.bk, w.accounted), (5000, 2000));
    }

    #[test]
    fn rtt_min_restarts_after_a_timeout_and_floor_is_two() {
        let mut w = Westwood::new();
        let mut s = sock();
        w.init(&mut s);
        ack(&mut w, &mut s, 1, 1, 30);
        ack(&mut w, &mut s, 2, 2, 30);
        assert_eq!(w.rtt_min, 30);
        s.cwnd = 10;
        w.cwnd_event(&mut s, CaEvent::Loss);
        assert_eq!(s.ssthresh, 2, "no bandwidth estimate yet: the floor");
        ack(&mut w, &mut s, 3, 3, 80); // rtt_min = the previous sample (in_ack_event runs first)
        assert_eq!(w.rtt_min, 30);
        ack(&mut w, &mut s, 4, 4, 80);
        assert_eq!(w.rtt_min, 30);
        w.cwnd_event(&mut s, CaEvent::Loss);
        ack(&mut w, &mut s, 5, 5, 80);
        assert_eq!(w.rtt_min, 80);
    }

    #[test]
    fn growth_is_renos_and_undo_is_renos() {
        let mut w = Westwood::new();
        let mut s = sock();
        w.init(&mut s);
        s.cwnd = 20;
        s.ssthresh = 10;
        for _ in 0..20 {
            w.cong_avoid(&mut s, 1);
        }
        assert_eq!(s.cwnd, 21);
        s.prior_cwnd = 40;
        assert_eq!(w.undo_cwnd(&mut s), 40);
        assert_eq!(w.ssthresh(&mut s), 10);
    }
}

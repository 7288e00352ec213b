//! UCC: utilization-based congestion control (seed 002, sections 3-4; algorithms.md section 5).
//!
//! Window growth and timeouts are NewReno's. Between two loss detections UCC counts one-way
//! delay samples: N in all and N_min of them equal to the minimum one-way delay. The
//! bottleneck utilization is then rho = (N - N_min) / N (queueing theory: rho = 1 - p0 for any
//! G/G/1 queue, eq. 10-11). On a loss detected by duplicate ACKs (SACK), UCC halves cwnd only if
//! rho > alpha; otherwise the loss is taken as a link error and cwnd is kept (eq. 12).
//!
//! Interpretations, documented in docs/algorithms.md:
//! - One-way delay = the ACK's TSval (receiver clock) minus its TSecr (echoed sender clock),
//!   in timestamp ticks (`[tcp] timestamp_tick`, default 1 ms). Only the difference matters:
//!   the clocks' offset cancels against the minimum. "Equal to the minimum" means in the same
//!   tick.
//! - A sample is taken from each ACK that acknowledges new data cumulatively (RFC 7323's RTTM
//!   rule for a valid TSecr). Duplicate ACKs echo an old TSecr while the receiver's clock runs
//!   on, so they would count queueing that is not there.
//! - With delayed ACKs the TSecr is the earlier of the two segments' TSval (RFC 7323 4.3), so a
//!   sample also holds the gap between the two segments' sending. `per_packet_owd` (off by
//!   default: a counterfactual for the seed experiment, not the paper's reading) instead takes
//!   the sample from the newest acknowledged segment's own send time (the time the stack
//!   stamped it, known to the sender): the one-way delay that segment saw, at the tick.
//! - The base (minimum) one-way delay is the lifetime minimum; with `base_window` > 0 it is the
//!   minimum over that window (the paper says the minimum must be refreshed periodically).
//! - With no sample since the previous loss, rho is unknown and UCC halves (the safe side).

use super::newreno::{NewReno, NewRenoConfig};
use super::{AckSample, AlgorithmInfo, CongestionControl, CcTelemetry, ParamSpec, Params, SockState};
use crate::time::{Time, SEC};

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::num("alpha", 0.99, 0.0, 1.0, "fraction", "Halve cwnd on a loss only if the estimated utilization rho exceeds this (seed 002, eq. 12)."),
    ParamSpec::num(
        "base_window",
        0.0,
        0.0,
        3600.0,
        "s",
        "Window of the minimum one-way delay; 0 = lifetime minimum (seed 002 section 4: refresh periodically).",
    ),
    ParamSpec::flag(
        "per_packet_owd",
        false,
        "Sample the one-way delay of the newest acknowledged segment (its own send tick) instead of the echoed TSecr, \
         which with delayed ACKs is the earlier segment's; not the paper's reading (a counterfactual).",
    ),
];

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    name: "ucc",
    summary: "Utilization-based: rho = (N - N_min)/N from one-way delays; halve on loss only when rho > alpha",
    source: "Utsumi & Zabir, \"Utilization-Based Congestion Control\" (seed 002), sections 3-4; RFC 7323 timestamps",
    params: PARAMS,
};

#[derive(Debug, Clone)]
pub struct UccConfig {
    pub alpha: f64,
    pub base_window: Time,
    pub per_packet_owd: bool,
}

impl UccConfig {
    pub fn from_params(p: &Params) -> Self {
        UccConfig {
            alpha: p.get("alpha"),
            base_window: (p.get("base_window") * SEC as f64) as Time,
            per_packet_owd: p.flag("per_packet_owd"),
        }
    }
}

impl Default for UccConfig {
    fn default() -> Self {
        Self::from_params(&Params::defaults(PARAMS))
    }
}

pub struct Ucc {
    cfg: UccConfig,
    growth: NewReno,
    /// Minimum one-way delay (ticks, including the clock offset) and when it was seen.
    base: Option<(u32, Time)>,
    /// Samples since the previous loss detection.
    pub n: u64,
    pub n_min: u64,
    /// rho evaluated at the last loss (for the time series between losses).
    last_rho: f64,
}

impl Ucc {
    pub fn new(cfg: UccConfig) -> Self {
        Ucc { cfg, growth: NewReno::new(NewRenoConfig::default()), base: None, n: 0, n_min: 0, last_rho: f64::NAN }
    }

    /// Count one one-way-delay sample (in ticks).
    pub fn add_sample(&mut self, owd: u32, now: Time) {
        let expired = match self.base {
            Some((_, t)) => self.cfg.base_window > 0 && now > t + self.cfg.base_window,
            None => true,
        };
        match self.base {
            Some((b, _)) if !expired && owd > b => {}
            Some((b, _)) if !expired && owd == b => {
                self.base = Some((b, now));
                self.n_min += 1;
            }
            _ => {
                // A new minimum: earlier samples of this interval were all above it.
                self.base = Some((owd, now));
                self.n_min = 1;
            }
        }
        self.n += 1;
    }

    /// rho = (N - N_min) / N; None before any sample.
    pub fn rho(&self) -> Option<f64> {
        if self.n == 0 {
            None
        } else {
            Some((self.n - self.n_min) as f64 / self.n as f64)
        }
    }

    fn start_interval(&mut self) {
        self.n = 0;
        self.n_min = 0;
    }
}

impl CongestionControl for Ucc {
    fn name(&self) -> &'static str {
        "ucc"
    }

    fn pkts_acked(&mut self, s: &mut SockState, sample: &AckSample) {
        if sample.pkts_acked == 0 {
            return;
        }
        if self.cfg.per_packet_owd {
            // The newest newly acked segment was sent at now - rtt, stamped with the sender's
            // clock at that time (tcp/sender.rs: TSval = now / tick). A retransmitted one has
            // no RTT (Karn): no sample.
            if sample.rtt >= 0 {
                let sent_tick = ((s.now - sample.rtt as Time) / s.ts_tick) as u32;
                self.add_sample(sample.ts_val.wrapping_sub(sent_tick), s.now);
            }
        } else {
            self.add_sample(sample.owd_ticks(), s.now);
        }
    }

    fn cong_avoid(&mut self, s: &mut SockState, acked: u32) {
        self.growth.cong_avoid(s, acked);
    }

    /// Loss detected by duplicate ACKs: halve only if the bottleneck is saturated. A timeout is
    /// NewReno's: ssthresh = half the window, cwnd = 1 (set by the stack).
    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        if s.loss_is_timeout {
            self.start_interval();
            return (s.cwnd / 2).max(2);
        }
        let rho = self.rho();
        let congested = rho.map_or(true, |r| r > self.cfg.alpha);
        self.last_rho = rho.unwrap_or(f64::NAN);
        s.record("ucc_loss", self.last_rho, if congested { 1.0 } else { 0.0 });
        self.start_interval();
        if congested {
            (s.cwnd / 2).max(2)
        } else {
            s.cwnd
        }
    }

    fn telemetry(&self) -> CcTelemetry {
        CcTelemetry { rho: self.rho().unwrap_or(self.last_rho), ..CcTelemetry::default() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ucc() -> Ucc {
        Ucc::new(UccConfig::default())
    }

    #[test]
    fn rho_counts_samples_at_the_minimum() {
        let mut u = ucc();
        // One-way delays in ticks (clock offset 1000): 3 of 10 at the minimum 1020.
        for d in [1025, 1020, 1030, 1020, 1041, 1022, 1020, 1050, 1033, 1021] {
            u.add_sample(d, 0);
        }
        assert_eq!((u.n, u.n_min), (10, 3));
        assert!((u.rho().unwrap() - 0.7).abs() < 1e-12);
    }

    #[test]
    fn a_new_minimum_restarts_the_count_of_minimum_samples() {
        let mut u = ucc();
        for d in [1020, 1020, 1030] {
            u.add_sample(d, 0);
        }
        u.add_sample(1015, 0);
        u.add_sample(1015, 0);
        assert_eq!((u.n, u.n_min), (5, 2));
        assert!((u.rho().unwrap() - 0.6).abs() < 1e-12);
    }

    fn sock(cwnd: u32) -> SockState {
        let mut s = SockState::new(1000, 10);
        s.cwnd = cwnd;
        s
    }

    #[test]
    fn halves_only_when_rho_exceeds_alpha() {
        // rho = 0.995 > 0.99: congestion, halve.
        let mut u = ucc();
        u.add_sample(1000, 0);
        for _ in 0..199 {
            u.add_sample(1010, 0);
        }
        assert_eq!(u.rho(), Some(199.0 / 200.0));
        let mut s = sock(40);
        assert_eq!(u.ssthresh(&mut s), 20);
        assert_eq!(u.n, 0, "a loss starts a new measurement interval");
        // rho = 0.98 < 0.99: link error, keep cwnd.
        let mut u = ucc();
        for i in 0..100 {
            u.add_sample(if i < 2 { 1000 } else { 1010 }, 0);
        }
        assert_eq!(u.rho(), Some(0.98));
        let mut s = sock(40);
        assert_eq!(u.ssthresh(&mut s), 40);
        assert_eq!(s.events.len(), 1);
        assert_eq!(s.events[0].kind, "ucc_loss");
        assert_eq!((s.events[0].value, s.events[0].value2), (0.98, 0.0));
    }

    #[test]
    fn rho_exactly_alpha_keeps_cwnd() {
        let mut u = ucc();
        u.add_sample(1000, 0);
        for _ in 0..99 {
            u.add_sample(1001, 0);
        }
        assert_eq!(u.rho(), Some(0.99));
        assert_eq!(u.ssthresh(&mut sock(40)), 40);
    }

    #[test]
    fn no_sample_means_halve() {
        let mut u = ucc();
        assert_eq!(u.ssthresh(&mut sock(40)), 20);
    }

    #[test]
    fn per_packet_owd_samples_the_newest_segment_not_the_echo() {
        // A delayed ACK at 100 ms (receiver clock offset 1000 ticks) for two segments sent at
        // 60 ms and 70 ms: TSecr echoes the first (60), the newest was sent at now - rtt = 70.
        let ack = AckSample { pkts_acked: 2, rtt: 30_000_000, in_flight: 2, ts_val: 1100, ts_ecr: 60 };
        let mut s = sock(10);
        s.now = 100 * crate::time::MS;
        let mut echo = ucc();
        echo.pkts_acked(&mut s, &ack);
        assert_eq!(echo.base.unwrap().0, 1040, "the echo: 1100 - 60");
        let mut per_packet = Ucc::new(UccConfig { per_packet_owd: true, ..UccConfig::default() });
        per_packet.pkts_acked(&mut s, &ack);
        assert_eq!(per_packet.base.unwrap().0, 1030, "the newest segment's own delay: 1100 - 70");
        // A retransmission (no RTT, Karn) gives no sample in that mode.
        per_packet.pkts_acked(&mut s, &AckSample { rtt: -1, ..ack });
        assert_eq!(per_packet.n, 1);
        // The default is the paper's reading.
        assert!(!UccConfig::default().per_packet_owd);
    }

    #[test]
    fn windowed_base_expires() {
        let mut u = Ucc::new(UccConfig { base_window: 10 * SEC, ..UccConfig::default() });
        u.add_sample(1000, 0);
        u.add_sample(1005, 5 * SEC);
        assert_eq!(u.n_min, 1);
        // After 10 s without a sample at the base, the base moves up to the current sample.
        u.add_sample(1005, 11 * SEC);
        assert_eq!(u.base.unwrap().0, 1005);
        assert_eq!(u.n_min, 1);
    }
}

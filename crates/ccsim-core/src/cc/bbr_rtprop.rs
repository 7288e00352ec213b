//! BBR with RTprop update (seed 004 section 3; algorithms.md section 7).
//!
//! Plain BBR v1 with the same trigger as forced expire (RTT / RTprop > rate_th on each RTT
//! sample; optionally a loss), but the action only moves RTprop towards the RTT: no PROBE_RTT
//! and no cwnd cut.
//!
//! The seed writes the new RTprop as (1 - alpha) RTT + alpha RTprop, but its text and figures
//! say that alpha = 1 adopts the RTT as it is. The formula and the text disagree. ccsim follows
//! the text: RTprop := alpha x RTT + (1 - alpha) x RTprop. So alpha = 1 adopts the RTT,
//! alpha = 0 changes nothing, and alpha = 0.5 is the same either way.
//!
//! Whether the update restarts the 10 s RTprop window is not said. By default it does not
//! (`restart_window = false`). Note that with alpha = 1 the new RTprop equals the sample, so
//! BBR's own `rtt <= min_rtt` test refreshes the window on that ACK anyway. Each update is
//! recorded as an `rtprop_update` event (value = new RTprop, ms; value2 = the RTT sample, ms).

use super::bbr::{self, Bbr, BbrConfig, BbrHooks, BbrVariant, Mode};
use super::params::concat;
use super::{AlgorithmInfo, CongestionControl, ParamSpec, Params, RateSample, SockState};
use crate::rng::Rng;
use crate::time::MS;

const OWN: &[ParamSpec] = &[
    ParamSpec::num("rate_th", 2.0, 1.0, 100.0, "x", "Update RTprop when RTT / RTprop exceeds this (seed 004: 2.0)."),
    ParamSpec::num("alpha", 0.5, 0.0, 1.0, "fraction", "RTprop := alpha RTT + (1 - alpha) RTprop (seed 004's text; 1 = adopt the RTT)."),
    ParamSpec::flag("loss_trigger", false, "Also update on a detected packet loss (the seed does not study it)."),
    ParamSpec::flag("restart_window", false, "An update also restarts the 10 s RTprop window (the seed does not say)."),
];
const ALL: [ParamSpec; bbr::PARAMS.len() + 4] = concat(bbr::PARAMS, OWN);
pub const PARAMS: &[ParamSpec] = &ALL;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    name: "bbr-rtprop",
    summary: "BBR v1 that moves RTprop towards the RTT (alpha RTT + (1 - alpha) RTprop) when RTT/RTprop > rate_th",
    source: "Katsumata, Ogawa & Yamaguchi, \"A study on updating TCP BBR's RTprop and improving TCP fairness\" (seed 004) section 3; on Linux tcp_bbr.c",
    params: PARAMS,
};

/// The RTprop-update trigger and action (the variant's own state).
pub struct RtpropUpdate {
    pub rate_th: f64,
    pub alpha: f64,
    pub loss_trigger: bool,
    pub restart_window: bool,
}

pub type BbrRtprop = BbrVariant<RtpropUpdate>;

/// The new RTprop in microseconds: alpha x RTT + (1 - alpha) x RTprop, rounded to a microsecond.
pub fn updated_rtprop_us(rtprop_us: u32, rtt_us: u32, alpha: f64) -> u32 {
    (alpha * rtt_us as f64 + (1.0 - alpha) * rtprop_us as f64).round() as u32
}

impl BbrRtprop {
    pub fn new(p: &Params, rng: Rng) -> Self {
        BbrVariant {
            bbr: Bbr::new(BbrConfig::from_params(p), rng),
            hooks: RtpropUpdate {
                rate_th: p.get("rate_th"),
                alpha: p.get("alpha"),
                loss_trigger: p.flag("loss_trigger"),
                restart_window: p.flag("restart_window"),
            },
        }
    }
}

impl BbrHooks for RtpropUpdate {
    const NAME: &'static str = "bbr-rtprop";
    fn cong_control(&mut self, bbr: &mut Bbr, s: &mut SockState, rs: &RateSample) {
        if bbr.mode != Mode::ProbeRtt && bbr.min_rtt_us != u32::MAX && rs.rtt >= 0 {
            let rtt_us = (rs.rtt as u64 / 1000).min(u32::MAX as u64 - 1) as u32;
            let rtprop = bbr.min_rtt_us;
            let by_rtt = rtt_us as f64 / rtprop as f64 > self.rate_th;
            if by_rtt || (self.loss_trigger && rs.losses > 0) {
                let new = updated_rtprop_us(rtprop, rtt_us, self.alpha);
                bbr.min_rtt_us = new;
                if self.restart_window {
                    bbr.min_rtt_stamp = s.now / MS;
                }
                s.record("rtprop_update", new as f64 / 1000.0, rtt_us as f64 / 1000.0);
            }
        }
        bbr.cong_control(s, rs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng;

    #[test]
    fn new_rtprop_for_alpha_1_half_and_0() {
        assert_eq!(updated_rtprop_us(40_000, 120_000, 1.0), 120_000, "alpha = 1 adopts the RTT");
        assert_eq!(updated_rtprop_us(40_000, 120_000, 0.5), 80_000);
        assert_eq!(updated_rtprop_us(40_000, 120_000, 0.0), 40_000, "alpha = 0 changes nothing");
    }

    #[test]
    fn updates_only_above_rate_th_and_never_enters_probe_rtt() {
        let mut p = Params::defaults(PARAMS);
        p.set("alpha", 0.5);
        let mut b = BbrRtprop::new(&p, rng::derive(2, 7));
        let mut s = SockState::new(1448, 10);
        b.init(&mut s);
        s.packets_out = 50;
        s.now = crate::time::SEC;
        let ack = |b: &mut BbrRtprop, s: &mut SockState, rtt_ms: u64| {
            s.now += 10 * MS;
            s.srtt = rtt_ms * MS;
            let prior = s.delivered;
            s.delivered += 10;
            s.delivered_mstamp = s.now;
            let rs = RateSample {
                prior_delivered: prior,
                prior_mstamp: Some(s.now - 40 * MS),
                delivered: 10,
                interval: (40 * MS) as i64,
                rtt: (rtt_ms * MS) as i64,
                acked_sacked: 10,
                prior_in_flight: s.packets_in_flight(),
                ..RateSample::default()
            };
            b.cong_control(s, &rs);
        };
        ack(&mut b, &mut s, 40);
        ack(&mut b, &mut s, 80); // ratio exactly 2.0: not above
        assert_eq!(b.bbr.min_rtt_us, 40_000);
        ack(&mut b, &mut s, 100); // 2.5 > 2.0: 0.5 x 100 + 0.5 x 40 = 70 ms
        assert_eq!(b.bbr.min_rtt_us, 70_000);
        assert_ne!(b.bbr.mode, Mode::ProbeRtt);
        assert_eq!(s.events.len(), 1);
        assert_eq!((s.events[0].kind, s.events[0].value, s.events[0].value2), ("rtprop_update", 70.0, 100.0));
    }
}

//! BBR with forced expire (seed 004 section 2.3; Sasaki et al., CANDAR 2020; algorithms.md
//! section 6).
//!
//! Plain BBR v1 ([`super::bbr`]), plus one trigger: on each RTT sample, if RTT / RTprop >
//! rate_th (and BBR is not already in PROBE_RTT), BBR runs its "expire processing" at once,
//! exactly what it does when the 10 s RTprop window runs out. The current sample becomes RTprop
//! (including any queueing delay). BBR enters PROBE_RTT (cwnd 4 for at least 200 ms and a
//! round), lower samples taken there replace RTprop, and the window restarts on exit. Optional
//! trigger B (`loss_trigger`, off by default) does the same on a detected loss. Each trigger is
//! recorded as a `forced_expire` event (value = RTprop before, ms; value2 = the RTT sample, ms).

use super::bbr::{self, Bbr, BbrConfig, Mode};
use super::params::concat;
use super::{AlgorithmInfo, CaEvent, CaState, CcTelemetry, CongestionControl, ParamSpec, Params, RateSample, SockState};
use crate::rng::Rng;

const OWN: &[ParamSpec] = &[
    ParamSpec::num("rate_th", 2.4, 1.0, 100.0, "x", "Force the expire processing when RTT / RTprop exceeds this (seed 004: 2.4; 2 to 3 best)."),
    ParamSpec::flag("loss_trigger", false, "Also force it on a detected packet loss (trigger B; the seed does not study it)."),
];
const ALL: [ParamSpec; bbr::PARAMS.len() + 2] = concat(bbr::PARAMS, OWN);
pub const PARAMS: &[ParamSpec] = &ALL;

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    name: "bbr-expire",
    summary: "BBR v1 that forces its RTprop expiry (PROBE_RTT, re-measure) when RTT/RTprop > rate_th",
    source: "Seed 004 section 2.3 (Sasaki et al., CANDAR 2020) on Linux tcp_bbr.c",
    params: PARAMS,
};

pub struct BbrExpire {
    pub bbr: Bbr,
    pub rate_th: f64,
    pub loss_trigger: bool,
}

impl BbrExpire {
    pub fn new(p: &Params, rng: Rng) -> Self {
        BbrExpire { bbr: Bbr::new(BbrConfig::from_params(p), rng), rate_th: p.get("rate_th"), loss_trigger: p.flag("loss_trigger") }
    }

    /// Trigger check for one ACK; returns true if the expire processing was forced.
    pub fn check_trigger(&mut self, s: &mut SockState, rs: &RateSample) -> bool {
        if self.bbr.mode == Mode::ProbeRtt || self.bbr.min_rtt_us == u32::MAX {
            return false;
        }
        let rtprop_us = self.bbr.min_rtt_us as f64;
        let rtt_us = if rs.rtt >= 0 { rs.rtt as f64 / 1000.0 } else { f64::NAN };
        let by_rtt = rs.rtt >= 0 && rtt_us / rtprop_us > self.rate_th;
        let by_loss = self.loss_trigger && rs.losses > 0;
        if by_rtt || by_loss {
            self.bbr.force_expire = true;
            s.record("forced_expire", rtprop_us / 1000.0, rtt_us / 1000.0);
            return true;
        }
        false
    }
}

impl CongestionControl for BbrExpire {
    fn name(&self) -> &'static str {
        "bbr-expire"
    }
    fn init(&mut self, s: &mut SockState) {
        self.bbr.init(s)
    }
    fn has_cong_control(&self) -> bool {
        true
    }
    fn wants_pacing(&self) -> bool {
        true
    }
    fn cong_control(&mut self, s: &mut SockState, rs: &RateSample) {
        self.check_trigger(s, rs);
        self.bbr.cong_control(s, rs);
    }
    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        self.bbr.ssthresh(s)
    }
    fn set_state(&mut self, s: &mut SockState, new: CaState) {
        self.bbr.set_state(s, new)
    }
    fn cwnd_event(&mut self, s: &mut SockState, ev: CaEvent) {
        self.bbr.cwnd_event(s, ev)
    }
    fn telemetry(&self) -> CcTelemetry {
        self.bbr.telemetry()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng;
    use crate::time::{MS, US};

    fn setup(rate_th: f64) -> (BbrExpire, SockState) {
        let mut p = Params::defaults(PARAMS);
        p.set("rate_th", rate_th);
        let mut b = BbrExpire::new(&p, rng::derive(1, 7));
        let mut s = SockState::new(1448, 10);
        b.init(&mut s);
        s.packets_out = 50;
        s.now = crate::time::SEC;
        (b, s)
    }

    fn ack(b: &mut BbrExpire, s: &mut SockState, rtt_ms: u64) {
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
    }

    #[test]
    fn enters_probe_rtt_when_the_ratio_crosses_rate_th_and_not_below_it() {
        let (mut b, mut s) = setup(2.4);
        ack(&mut b, &mut s, 40); // RTprop = 40 ms
        assert_eq!(b.bbr.min_rtt_us, 40_000);
        // 95 ms / 40 ms = 2.375 < 2.4: nothing happens.
        ack(&mut b, &mut s, 95);
        assert_ne!(b.bbr.mode, Mode::ProbeRtt);
        assert!(s.events.is_empty());
        // 97 ms / 40 ms = 2.425 > 2.4: expire processing now.
        ack(&mut b, &mut s, 97);
        assert_eq!(b.bbr.mode, Mode::ProbeRtt);
        assert_eq!(s.cwnd, 4);
        assert_eq!(b.bbr.min_rtt_us, 97_000, "the current sample becomes RTprop, as on expiry");
        assert_eq!(s.events.len(), 1);
        assert_eq!((s.events[0].kind, s.events[0].value, s.events[0].value2), ("forced_expire", 40.0, 97.0));
        // A lower RTT measured in PROBE_RTT replaces it.
        ack(&mut b, &mut s, 60);
        assert_eq!(b.bbr.min_rtt_us, 60_000);
        let _ = US;
    }

    #[test]
    fn loss_trigger_is_off_by_default_and_works_when_on() {
        let (mut b, mut s) = setup(2.4);
        ack(&mut b, &mut s, 40);
        let rs = RateSample { losses: 1, rtt: -1, ..RateSample::default() };
        assert!(!b.check_trigger(&mut s, &rs));
        b.loss_trigger = true;
        assert!(b.check_trigger(&mut s, &rs));
        assert!(b.bbr.force_expire);
    }
}

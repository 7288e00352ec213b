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

use super::bbr::{self, Bbr, BbrConfig, BbrHooks, BbrVariant, Mode};
use super::params::concat;
use super::{AlgorithmInfo, CongestionControl, ParamSpec, Params, RateSample, SockState};
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
    source: "Katsumata, Ogawa & Yamaguchi, \"A study on updating TCP BBR's RTprop and improving TCP fairness\" (seed 004) section 2.3, after Sasaki et al., CANDAR 2020; on Linux tcp_bbr.c",
    params: PARAMS,
};

/// The forced-expire trigger (the variant's own state).
pub struct Expire {
    pub rate_th: f64,
    pub loss_trigger: bool,
}

pub type BbrExpire = BbrVariant<Expire>;

impl BbrExpire {
    pub fn new(p: &Params, rng: Rng) -> Self {
        BbrVariant {
            bbr: Bbr::new(BbrConfig::from_params(p), rng),
            hooks: Expire { rate_th: p.get("rate_th"), loss_trigger: p.flag("loss_trigger") },
        }
    }
}

impl Expire {
    /// Trigger check for one ACK; returns true if the expire processing was forced.
    pub fn check_trigger(&mut self, bbr: &mut Bbr, s: &mut SockState, rs: &RateSample) -> bool {
        if bbr.mode == Mode::ProbeRtt || bbr.min_rtt_us == u32::MAX {
            return false;
        }
        let rtprop_us = bbr.min_rtt_us as f64;
        let rtt_us = if rs.rtt >= 0 { rs.rtt as f64 / 1000.0 } else { f64::NAN };
        let by_rtt = rs.rtt >= 0 && rtt_us / rtprop_us > self.rate_th;
        let by_loss = self.loss_trigger && rs.losses > 0;
        if by_rtt || by_loss {
            bbr.force_expire = true;
            s.record("forced_expire", rtprop_us / 1000.0, rtt_us / 1000.0);
            return true;
        }
        false
    }
}

impl BbrHooks for Expire {
    const NAME: &'static str = "bbr-expire";
    fn cong_control(&mut self, bbr: &mut Bbr, s: &mut SockState, rs: &RateSample) {
        self.check_trigger(bbr, s, rs);
        bbr.cong_control(s, rs);
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
        assert!(!b.hooks.check_trigger(&mut b.bbr, &mut s, &rs));
        b.hooks.loss_trigger = true;
        assert!(b.hooks.check_trigger(&mut b.bbr, &mut s, &rs));
        assert!(b.bbr.force_expire);
    }
}

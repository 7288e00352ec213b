//! The retransmission timer's state: RFC 6298 (the default), or Linux's variance tracking
//! (`[tcp] rto_estimator = "linux"`).

use crate::time::Time;

/// How the RTO is computed from the RTT samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RtoEstimator {
    /// RFC 6298 (2.2)/(2.3): RTO = SRTT + max(G, 4 RTTVAR), clamped to [min_rto, max_rto].
    Rfc6298,
    /// Linux `tcp_rtt_estimator` and `__tcp_set_rto` (net/ipv4/tcp_input.c): RTO = SRTT +
    /// rttvar, where rttvar follows the largest mean deviation (x 4) seen in each round trip,
    /// never below min_rto (`tcp_rto_min`), and decays towards it once per round trip; capped
    /// at max_rto (`tcp_bound_rto`). So the floor is added to SRTT instead of clamping the sum.
    Linux,
}

/// Linux's variance state (`tcp_sock` `mdev_us`, `mdev_max_us`, `rttvar_us`, `rtt_seq`), in ns.
#[derive(Debug, Clone, Default)]
struct LinuxVar {
    /// Mean deviation x 4, smoothed with gain 1/4 (1/32 while the RTT falls).
    mdev: i64,
    /// The largest `mdev` in the current round trip, at least min_rto.
    mdev_max: i64,
    /// What the RTO adds to SRTT.
    rttvar: i64,
    /// The round trip ends when snd_una passes this (snd_nxt when it began).
    rtt_seq: u32,
}

#[derive(Debug, Clone)]
pub struct RttEstimator {
    pub srtt: Time,
    pub rttvar: Time,
    /// Current RTO before backoff.
    pub rto: Time,
    /// Number of consecutive RTO expirations (the timer is rto << backoff).
    pub backoff: u32,
    pub min_rto: Time,
    pub max_rto: Time,
    /// Clock granularity G.
    pub granularity: Time,
    pub has_sample: bool,
    /// Linux's variance state (None: RFC 6298).
    linux: Option<Box<LinuxVar>>,
}

impl RttEstimator {
    pub fn new(initial_rto: Time, min_rto: Time, max_rto: Time, granularity: Time) -> Self {
        RttEstimator {
            srtt: 0,
            rttvar: 0,
            rto: initial_rto,
            backoff: 0,
            min_rto,
            max_rto,
            granularity,
            has_sample: false,
            linux: None,
        }
    }

    /// The same, computing the RTO as `kind` says.
    pub fn with_estimator(mut self, kind: RtoEstimator) -> Self {
        self.linux = (kind == RtoEstimator::Linux).then(Box::default);
        self
    }

    /// RFC 6298 (2.2)/(2.3): fold in a valid sample (never from a retransmitted segment) and
    /// recompute RTO; a valid sample also ends exponential backoff (Karn). `snd_una` (already
    /// advanced by the ACK) and `snd_nxt` delimit Linux's round trips of the variance.
    pub fn sample(&mut self, r: Time, snd_una: u32, snd_nxt: u32) {
        if self.linux.is_some() {
            return self.sample_linux(r, snd_una, snd_nxt);
        }
        if !self.has_sample {
            self.srtt = r;
            self.rttvar = r / 2;
            self.has_sample = true;
        } else {
            let err = self.srtt.abs_diff(r);
            // RTTVAR <- 3/4 RTTVAR + 1/4 |SRTT - R'|; SRTT <- 7/8 SRTT + 1/8 R'
            self.rttvar = (3 * self.rttvar + err) / 4;
            self.srtt = (7 * self.srtt + r) / 8;
        }
        let rto = self.srtt + self.granularity.max(4 * self.rttvar);
        self.rto = rto.clamp(self.min_rto, self.max_rto);
        self.backoff = 0;
    }

    /// Linux `tcp_rtt_estimator` then `tcp_set_rto` (tcp_input.c). SRTT is the same EWMA as
    /// RFC 6298's (Linux keeps it x 8 in us; here in ns, rounded as above); the variance:
    ///
    /// - first sample: mdev = 2 R, rttvar = mdev_max = max(mdev, min_rto) ("rto = 3 rtt");
    /// - then, with err = R - SRTT (before the update): mdev += |err| - mdev/4, but when the
    ///   RTT fell (err < 0) a positive step is divided by 8 (Linux's Eifel-like finer gain);
    ///   a new mdev above mdev_max raises mdev_max, and rttvar with it;
    /// - once snd_una passes rtt_seq (a round trip of data), rttvar moves a quarter of the way
    ///   down to mdev_max, mdev_max restarts at min_rto and rtt_seq becomes snd_nxt.
    ///
    /// RTO = SRTT + rttvar, rounded up to the clock granularity G (`usecs_to_jiffies`, a jiffy
    /// of 1 ms at HZ = 1000) and capped at max_rto (`tcp_bound_rto`); no lower clamp: rttvar is
    /// at least min_rto.
    fn sample_linux(&mut self, r: Time, snd_una: u32, snd_nxt: u32) {
        let min_rto = self.min_rto as i64;
        let v = self.linux.as_deref_mut().expect("Linux's variance state");
        if !self.has_sample {
            self.srtt = r;
            self.rttvar = r / 2;
            self.has_sample = true;
            v.mdev = 2 * r as i64;
            v.rttvar = v.mdev.max(min_rto);
            v.mdev_max = v.rttvar;
            v.rtt_seq = snd_nxt;
        } else {
            let err = r as i64 - self.srtt as i64;
            let mut m = err.abs() - v.mdev / 4;
            if err < 0 && m > 0 {
                m /= 8;
            }
            v.mdev += m;
            if v.mdev > v.mdev_max {
                v.mdev_max = v.mdev;
                v.rttvar = v.rttvar.max(v.mdev_max);
            }
            if snd_una > v.rtt_seq {
                if v.mdev_max < v.rttvar {
                    v.rttvar -= (v.rttvar - v.mdev_max) / 4;
                }
                v.rtt_seq = snd_nxt;
                v.mdev_max = min_rto;
            }
            // The RFC 6298 state, kept for the outputs that read it.
            self.rttvar = (3 * self.rttvar + self.srtt.abs_diff(r)) / 4;
            self.srtt = (7 * self.srtt + r) / 8;
        }
        // usecs_to_jiffies rounds up to a clock tick (here the timestamp clock's, G).
        let rto = (self.srtt + v.rttvar as Time).div_ceil(self.granularity.max(1)) * self.granularity.max(1);
        self.rto = rto.min(self.max_rto);
        self.backoff = 0;
    }

    /// The timer value now in force: RTO doubled per expiry, capped at max_rto (RFC 6298 5.5).
    pub fn current(&self) -> Time {
        let mut t = self.rto;
        for _ in 0..self.backoff {
            t = (t * 2).min(self.max_rto);
        }
        t
    }

    pub fn on_timeout(&mut self) {
        if self.current() < self.max_rto {
            self.backoff += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{MS, SEC};

    #[test]
    fn rfc6298_first_and_later_samples() {
        let mut e = RttEstimator::new(SEC, 200 * MS, 120 * SEC, MS);
        assert_eq!(e.current(), SEC);
        e.sample(100 * MS, 0, 0);
        assert_eq!(e.srtt, 100 * MS);
        assert_eq!(e.rttvar, 50 * MS);
        assert_eq!(e.rto, 300 * MS); // 100 + 4 * 50
        e.sample(200 * MS, 0, 0);
        // RTTVAR = 3/4 * 50 + 1/4 * 100 = 62.5; SRTT = 7/8 * 100 + 1/8 * 200 = 112.5
        assert_eq!(e.rttvar, 62_500_000);
        assert_eq!(e.srtt, 112_500_000);
        assert_eq!(e.rto, 362_500_000);
    }

    #[test]
    fn min_rto_clamps_and_backoff_doubles_to_max() {
        let mut e = RttEstimator::new(SEC, 200 * MS, 1600 * MS, MS);
        e.sample(10 * MS, 0, 0);
        assert_eq!(e.rto, 200 * MS); // 10 + 20 < 200
        e.on_timeout();
        assert_eq!(e.current(), 400 * MS);
        e.on_timeout();
        e.on_timeout();
        assert_eq!(e.current(), 1600 * MS);
        e.on_timeout();
        assert_eq!(e.current(), 1600 * MS);
        e.sample(10 * MS, 0, 0);
        assert_eq!(e.current(), 200 * MS, "a valid sample ends backoff");
    }

    #[test]
    fn linux_adds_the_floor_to_srtt_instead_of_clamping() {
        // tcp_rtt_estimator's first sample: mdev = 2 R, rttvar = max(mdev, tcp_rto_min).
        let mut rfc = RttEstimator::new(SEC, 200 * MS, 120 * SEC, MS);
        let mut linux = RttEstimator::new(SEC, 200 * MS, 120 * SEC, MS).with_estimator(RtoEstimator::Linux);
        rfc.sample(10 * MS, 0, 10);
        linux.sample(10 * MS, 0, 10);
        assert_eq!(rfc.rto, 200 * MS); // max(200, 10 + 4 * 5)
        assert_eq!(linux.rto, 210 * MS); // 10 + max(20, 200)
        assert_eq!(linux.srtt, rfc.srtt);
        let mut linux = RttEstimator::new(SEC, 200 * MS, 120 * SEC, MS).with_estimator(RtoEstimator::Linux);
        linux.sample(100 * MS, 0, 10);
        assert_eq!(linux.rto, 300 * MS, "rto = 3 rtt above the floor");
    }

    #[test]
    fn linux_variance_follows_tcp_rtt_estimator_step_by_step() {
        let mut e = RttEstimator::new(SEC, 200 * MS, 120 * SEC, MS).with_estimator(RtoEstimator::Linux);
        let var = |e: &RttEstimator| {
            let v = e.linux.as_deref().unwrap();
            (v.mdev, v.mdev_max, v.rttvar, v.rtt_seq)
        };
        // First sample at snd_nxt 10: mdev 80 ms, rttvar = mdev_max = 200 ms.
        e.sample(40 * MS, 0, 10);
        assert_eq!(var(&e), (80_000_000, 200_000_000, 200_000_000, 10));
        assert_eq!(e.rto, 240 * MS);
        // Same RTT, still in the round trip: mdev -= mdev / 4.
        e.sample(40 * MS, 5, 12);
        assert_eq!(var(&e), (60_000_000, 200_000_000, 200_000_000, 10));
        // snd_una passes 10: the round trip ends (rttvar = mdev_max: no decay), rtt_seq = 20.
        e.sample(40 * MS, 11, 20);
        assert_eq!(var(&e), (45_000_000, 200_000_000, 200_000_000, 20));
        // A spike: err = +100 ms, mdev += 100 - 45/4 ms; SRTT 52.5 ms; RTO rounded up to 1 ms.
        e.sample(140 * MS, 12, 21);
        assert_eq!(var(&e).0, 133_750_000);
        assert_eq!(e.srtt, 52_500_000);
        assert_eq!(e.rto, 253 * MS);
        // The RTT falls: err = -12.5 ms, |err| - mdev/4 = -20.9375 ms is negative, so the full
        // step (Linux divides only a positive one by 8).
        e.sample(40 * MS, 13, 22);
        assert_eq!(var(&e).0, 112_812_500);
        assert_eq!(e.srtt, 50_937_500);
        assert_eq!(e.rto, 251 * MS);
        // A 1 s sample: mdev above mdev_max raises mdev_max and rttvar with it.
        e.sample(SEC, 14, 23);
        assert_eq!(var(&e), (1_033_671_875, 1_033_671_875, 1_033_671_875, 20));
        assert_eq!(e.srtt, 169_570_312);
        assert_eq!(e.rto, 1_204 * MS);
        // An RTT near SRTT as snd_una passes 20: the round trip ends; rttvar equals mdev_max, so
        // no decay; mdev_max restarts at 200 ms.
        e.sample(170 * MS, 21, 30);
        let (mdev, mdev_max, rttvar, seq) = var(&e);
        assert_eq!((mdev_max, rttvar, seq), (200_000_000, 1_033_671_875, 30));
        assert!(mdev < 1_033_671_875);
        // Next round trip: mdev (about 582 ms) becomes mdev_max, then at its end rttvar moves a
        // quarter of the way down to it.
        e.sample(170 * MS, 31, 40);
        let (mdev2, _, rttvar2, _) = var(&e);
        let expected_mdev2 = mdev + ((170 * MS) as i64 - 169_624_023).abs() - mdev / 4;
        assert_eq!(mdev2, expected_mdev2);
        assert_eq!(rttvar2, 1_033_671_875 - (1_033_671_875 - mdev2) / 4);
    }

    #[test]
    fn linux_divides_a_positive_step_by_8_when_the_rtt_falls() {
        let mut e = RttEstimator::new(SEC, 200 * MS, 120 * SEC, MS).with_estimator(RtoEstimator::Linux);
        e.sample(100 * MS, 0, 10); // mdev 200 ms
        // Pull mdev down: five samples equal to SRTT take it to 200 * (3/4)^5 ms.
        for k in 0..5 {
            e.sample(100 * MS, 1 + k, 10);
        }
        let mdev = e.linux.as_deref().unwrap().mdev;
        assert_eq!(mdev, 47_460_938); // 200 ms x 0.75^5, mdev/4 truncated at each step
        // The RTT falls by 80 ms: |err| - mdev/4 = 80 - 11.865 ms > 0, divided by 8.
        e.sample(20 * MS, 6, 10);
        assert_eq!(e.linux.as_deref().unwrap().mdev, mdev + (80_000_000 - mdev / 4) / 8);
    }
}

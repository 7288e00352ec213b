//! RFC 6298 retransmission timer state.

use crate::time::Time;

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
        }
    }

    /// RFC 6298 (2.2)/(2.3): fold in a valid sample (never from a retransmitted segment) and
    /// recompute RTO; a valid sample also ends exponential backoff (Karn).
    pub fn sample(&mut self, r: Time) {
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
        e.sample(100 * MS);
        assert_eq!(e.srtt, 100 * MS);
        assert_eq!(e.rttvar, 50 * MS);
        assert_eq!(e.rto, 300 * MS); // 100 + 4 * 50
        e.sample(200 * MS);
        // RTTVAR = 3/4 * 50 + 1/4 * 100 = 62.5; SRTT = 7/8 * 100 + 1/8 * 200 = 112.5
        assert_eq!(e.rttvar, 62_500_000);
        assert_eq!(e.srtt, 112_500_000);
        assert_eq!(e.rto, 362_500_000);
    }

    #[test]
    fn min_rto_clamps_and_backoff_doubles_to_max() {
        let mut e = RttEstimator::new(SEC, 200 * MS, 1600 * MS, MS);
        e.sample(10 * MS);
        assert_eq!(e.rto, 200 * MS); // 10 + 20 < 200
        e.on_timeout();
        assert_eq!(e.current(), 400 * MS);
        e.on_timeout();
        e.on_timeout();
        assert_eq!(e.current(), 1600 * MS);
        e.on_timeout();
        assert_eq!(e.current(), 1600 * MS);
        e.sample(10 * MS);
        assert_eq!(e.current(), 200 * MS, "a valid sample ends backoff");
    }
}

//! Rate adaptation (`[wireless] rate_control`): which rate of the profile's ladder
//! ([`super::phy::Phy::ladder`]) a station sends its next data frame to a neighbour at.
//!
//! - `fixed` (default): the profile's top rate, always (ccsim's behaviour before this option).
//! - `arf`: Auto Rate Fallback (Kamerman and Monteban, 1997) as ns-3 implements it:
//!   ns-3-dev `src/wifi/model/rate-control/arf-wifi-manager.cc`, `ArfWifiManager::DoReportDataOk`
//!   and `ArfWifiManager::DoReportDataFailed`, attributes `TimerThreshold` = 15 and
//!   `SuccessThreshold` = 10, a new station starting at the lowest rate (`DoCreateStation`).
//! - `aarf`: Adaptive ARF (Lacage, Manshaei and Turletti, 2004) as ns-3 implements it:
//!   `src/wifi/model/rate-control/aarf-wifi-manager.cc`, `AarfWifiManager::DoReportDataOk` and
//!   `DoReportDataFailed`, attributes `SuccessK` = 2, `TimerK` = 2, `MaxSuccessThreshold` = 60,
//!   `MinTimerThreshold` = 15, `MinSuccessThreshold` = 10. ns-3's recovery fallback sets the
//!   timer threshold to max(timer x TimerK, MinSuccessThreshold) (not MinTimerThreshold); ccsim
//!   copies that as it is.
//!
//! Every transmission attempt without its MAC ACK is a failure (a retry is a new attempt at
//! the rate current then), every ACK a success. ns-3 refuses ARF and AARF on HT stations; ccsim
//! applies the same rules to the HT profile's MCS 0..7 ladder (ccsim's choice). The channel has
//! no SNR: a lower rate does not lower `fer` or the collision probability, it only lengthens
//! frames. So this isolates what rate fallback on collision and noise losses costs, the known
//! weakness of ARF (it reads collisions as a bad channel).

/// ARF's constants (ns-3 `ArfWifiManager` attribute defaults).
pub const ARF_TIMER_THRESHOLD: u32 = 15;
pub const ARF_SUCCESS_THRESHOLD: u32 = 10;
/// AARF's constants (ns-3 `AarfWifiManager` attribute defaults).
pub const AARF_SUCCESS_K: f64 = 2.0;
pub const AARF_TIMER_K: f64 = 2.0;
pub const AARF_MAX_SUCCESS_THRESHOLD: u32 = 60;
pub const AARF_MIN_TIMER_THRESHOLD: u32 = 15;
pub const AARF_MIN_SUCCESS_THRESHOLD: u32 = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateControl {
    Fixed,
    Arf,
    Aarf,
}

pub const RATE_CONTROLS: &[&str] = &["fixed", "arf", "aarf"];

impl RateControl {
    pub fn from_name(s: &str) -> Option<RateControl> {
        match s {
            "fixed" => Some(RateControl::Fixed),
            "arf" => Some(RateControl::Arf),
            "aarf" => Some(RateControl::Aarf),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            RateControl::Fixed => "fixed",
            RateControl::Arf => "arf",
            RateControl::Aarf => "aarf",
        }
    }
}

/// One sender's state toward one receiver (ns-3's `ArfWifiRemoteStation` /
/// `AarfWifiRemoteStation`).
#[derive(Debug, Clone, PartialEq)]
pub struct Arf {
    adaptive: bool,
    /// Index into the ladder (0 = lowest).
    pub rate: usize,
    n_rates: usize,
    timer: u32,
    success: u32,
    failed: u32,
    recovery: bool,
    success_threshold: u32,
    timer_timeout: u32,
}

impl Arf {
    /// A new station: lowest rate, thresholds at their minimum. `adaptive`: AARF.
    pub fn new(adaptive: bool, n_rates: usize) -> Arf {
        let (s, t) = if adaptive { (AARF_MIN_SUCCESS_THRESHOLD, AARF_MIN_TIMER_THRESHOLD) } else { (ARF_SUCCESS_THRESHOLD, ARF_TIMER_THRESHOLD) };
        Arf { adaptive, rate: 0, n_rates, timer: 0, success: 0, failed: 0, recovery: false, success_threshold: s, timer_timeout: t }
    }

    /// A transmission acknowledged (`DoReportDataOk`).
    pub fn ok(&mut self) {
        self.timer += 1;
        self.success += 1;
        self.failed = 0;
        self.recovery = false;
        if (self.success == self.success_threshold || self.timer == self.timer_timeout) && self.rate + 1 < self.n_rates {
            self.rate += 1;
            self.timer = 0;
            self.success = 0;
            self.recovery = true;
        }
    }

    /// A transmission without its ACK (`DoReportDataFailed`).
    pub fn failed(&mut self) {
        self.timer += 1;
        self.failed += 1;
        self.success = 0;
        if self.recovery {
            if self.failed == 1 {
                // Recovery fallback: the first try at a new rate failed.
                if self.adaptive {
                    self.success_threshold = ((self.success_threshold as f64 * AARF_SUCCESS_K).min(AARF_MAX_SUCCESS_THRESHOLD as f64)) as u32;
                    self.timer_timeout = ((self.timer_timeout as f64 * AARF_TIMER_K).max(AARF_MIN_SUCCESS_THRESHOLD as f64)) as u32;
                }
                self.rate = self.rate.saturating_sub(1);
            }
            self.timer = 0;
        } else {
            if (self.failed - 1) % 2 == 1 {
                // Normal fallback: every second consecutive failure.
                if self.adaptive {
                    self.timer_timeout = AARF_MIN_TIMER_THRESHOLD;
                    self.success_threshold = AARF_MIN_SUCCESS_THRESHOLD;
                }
                self.rate = self.rate.saturating_sub(1);
            }
            if self.failed >= 2 {
                self.timer = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arf_climbs_after_ten_successes_and_falls_after_two_failures() {
        let mut a = Arf::new(false, 8);
        assert_eq!(a.rate, 0);
        for _ in 0..9 {
            a.ok();
        }
        assert_eq!(a.rate, 0);
        a.ok();
        assert_eq!(a.rate, 1); // the 10th success
        // Recovery: the first attempt at the new rate fails -> back down at once.
        a.failed();
        assert_eq!(a.rate, 0);
        // Climb again: 10 successes; then one success at rate 1 ends recovery.
        for _ in 0..10 {
            a.ok();
        }
        assert_eq!(a.rate, 1);
        a.ok();
        // Out of recovery: one failure keeps the rate, the second falls, the third keeps,
        // the fourth falls (every second consecutive failure).
        a.failed();
        assert_eq!(a.rate, 1);
        a.failed();
        assert_eq!(a.rate, 0);
        a.failed();
        assert_eq!(a.rate, 0);
        // The timer: 15 reports since the last reset also climb (successes 1..9 with
        // failures resetting the success count but not the timer).
        let mut b = Arf::new(false, 8);
        for _ in 0..7 {
            b.ok();
        }
        b.failed(); // timer 8, success 0
        for _ in 0..6 {
            b.ok();
        }
        assert_eq!(b.rate, 0); // timer 14
        b.ok(); // timer 15
        assert_eq!(b.rate, 1);
        // The top of the ladder is a ceiling.
        let mut c = Arf::new(false, 2);
        for _ in 0..100 {
            c.ok();
        }
        assert_eq!(c.rate, 1);
    }

    #[test]
    fn aarf_doubles_its_success_threshold_after_a_failed_probe() {
        let mut a = Arf::new(true, 8);
        for _ in 0..10 {
            a.ok();
        }
        assert_eq!(a.rate, 1);
        a.failed(); // failed probe: back to 0, threshold 20, timer threshold max(30, 10) = 30
        assert_eq!(a.rate, 0);
        assert_eq!((a.success_threshold, a.timer_timeout), (20, 30));
        for _ in 0..19 {
            a.ok();
        }
        assert_eq!(a.rate, 0);
        a.ok();
        assert_eq!(a.rate, 1);
        a.failed(); // 40, 60
        assert_eq!((a.success_threshold, a.timer_timeout), (40, 60));
        for _ in 0..40 {
            a.ok();
        }
        a.failed(); // 60 (capped), 120
        assert_eq!((a.rate, a.success_threshold, a.timer_timeout), (0, 60, 120));
        // Two consecutive failures out of recovery reset both thresholds.
        a.ok();
        a.failed();
        a.failed();
        assert_eq!((a.rate, a.success_threshold, a.timer_timeout), (0, 10, 15));
    }
}

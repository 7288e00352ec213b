//! CUBIC as Linux implements it (net/ipv4/tcp_cubic.c as of v6.x, mirrored by
//! tools/testing/selftests/bpf/progs/bpf_cubic.c), with the original HyStart (not HyStart++).
//!
//! Integer arithmetic follows the kernel: time in units of 2^-10 s (BICTCP_HZ = 10), the cubic
//! coefficient as `cube_rtt_scale = bic_scale * 10` and `cube_factor = 2^40 / cube_rtt_scale`,
//! jiffies at HZ = 1000. One deviation: `cubic_root` is an exact integer cube root, where the
//! kernel uses a table plus one Newton step (it differs by at most about 0.2%).

use super::{AlgorithmInfo, CaEvent, CaState, CongestionControl, ParamSpec, Params, SockState, AckSample};
use crate::time::{Time, MS, US};

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec::int("beta", 717.0, 1.0, 1023.0, "1/1024", "Kept fraction of cwnd on loss, x1024 (717 = 0.7; tcp_cubic.c `beta`)."),
    ParamSpec::int("bic_scale", 41.0, 1.0, 1024.0, "1/1024 x 10", "Cubic coefficient: C = bic_scale x 10 / 1024 (41 -> C = 0.4; tcp_cubic.c)."),
    ParamSpec::flag("fast_convergence", true, "Release bandwidth faster when W_max shrinks (RFC 9438 4.7)."),
    ParamSpec::flag("tcp_friendliness", true, "Never grow slower than the Reno-friendly estimate (RFC 9438 4.3)."),
    ParamSpec::flag("hystart", true, "Leave slow start early with HyStart (Ha & Rhee 2011)."),
    ParamSpec::int("hystart_detect", 3.0, 1.0, 3.0, "bitmask", "1 = ACK-train, 2 = delay increase, 3 = both (tcp_cubic.c)."),
    ParamSpec::int("hystart_low_window", 16.0, 2.0, 1_000_000.0, "pkts", "HyStart is active only when cwnd >= this."),
    ParamSpec::num("hystart_ack_delta", 2.0, 0.001, 100.0, "ms", "ACKs closer than this belong to one ACK train."),
];

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    name: "cubic",
    summary: "CUBIC window growth W(t) = C (t - K)^3 + W_max with HyStart slow-start exit (Linux default)",
    source: "RFC 9438; Linux net/ipv4/tcp_cubic.c (bpf_cubic.c), HyStart: Ha & Rhee 2011",
    params: PARAMS,
};

const BICTCP_BETA_SCALE: u64 = 1024;
const BICTCP_HZ: u32 = 10;
const HYSTART_ACK_TRAIN: u32 = 1;
const HYSTART_DELAY: u32 = 2;
const HYSTART_MIN_SAMPLES: u32 = 8;
/// Linux HZ = 1000: one jiffy is 1 ms.
const JIFFY: Time = MS;
/// Linux GSO_MAX_SIZE (64 KiB), used in hystart_ack_delay.
const GSO_MAX_SIZE: u64 = 65536;

#[derive(Debug, Clone)]
pub struct CubicConfig {
    pub beta: u32,
    pub bic_scale: u32,
    pub fast_convergence: bool,
    pub tcp_friendliness: bool,
    pub hystart: bool,
    pub hystart_detect: u32,
    pub hystart_low_window: u32,
    pub hystart_ack_delta_us: u64,
}

impl CubicConfig {
    pub fn from_params(p: &Params) -> Self {
        CubicConfig {
            beta: p.get("beta") as u32,
            bic_scale: p.get("bic_scale") as u32,
            fast_convergence: p.flag("fast_convergence"),
            tcp_friendliness: p.flag("tcp_friendliness"),
            hystart: p.flag("hystart"),
            hystart_detect: p.get("hystart_detect") as u32,
            hystart_low_window: p.get("hystart_low_window") as u32,
            hystart_ack_delta_us: (p.get("hystart_ack_delta") * 1000.0).round() as u64,
        }
    }
}

impl Default for CubicConfig {
    fn default() -> Self {
        Self::from_params(&Params::defaults(PARAMS))
    }
}

pub struct Cubic {
    cfg: CubicConfig,
    /// Derived constants (cubictcp_register).
    beta_scale: u32,
    cube_rtt_scale: u64,
    cube_factor: u64,
    // struct bictcp
    pub cnt: u32,
    pub last_max_cwnd: u32,
    last_cwnd: u32,
    last_time: u64,
    pub bic_origin_point: u32,
    /// K in units of 2^-10 s.
    pub bic_k: u64,
    /// Minimum RTT in us (0 = none yet).
    pub delay_min: u64,
    /// Epoch start in jiffies; None = no epoch (Linux uses 0).
    pub epoch_start: Option<u64>,
    ack_cnt: u32,
    pub tcp_cwnd: u32,
    pub found: bool,
    round_start: u64,
    end_seq: u32,
    last_ack: u64,
    curr_rtt: u64,
    sample_cnt: u32,
}

/// Exact floor cube root.
pub fn cubic_root(a: u64) -> u64 {
    if a == 0 {
        return 0;
    }
    let mut x = (a as f64).cbrt().round() as u64;
    while x > 0 && x.saturating_mul(x).saturating_mul(x) > a {
        x -= 1;
    }
    while (x + 1).saturating_mul(x + 1).saturating_mul(x + 1) <= a {
        x += 1;
    }
    x
}

impl Cubic {
    pub fn new(cfg: CubicConfig) -> Self {
        let beta_scale = 8 * (BICTCP_BETA_SCALE as u32 + cfg.beta) / 3 / (BICTCP_BETA_SCALE as u32 - cfg.beta);
        let cube_rtt_scale = cfg.bic_scale as u64 * 10;
        let cube_factor = (1u64 << (10 + 3 * BICTCP_HZ)) / cube_rtt_scale;
        let mut c = Cubic {
            cfg,
            beta_scale,
            cube_rtt_scale,
            cube_factor,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            bic_origin_point: 0,
            bic_k: 0,
            delay_min: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            found: false,
            round_start: 0,
            end_seq: 0,
            last_ack: 0,
            curr_rtt: u64::MAX,
            sample_cnt: 0,
        };
        c.reset();
        c
    }

    /// bictcp_reset.
    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.bic_origin_point = 0;
        self.bic_k = 0;
        self.delay_min = 0;
        self.epoch_start = None;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.found = false;
    }

    fn hystart_reset(&mut self, s: &SockState) {
        self.round_start = s.now / US;
        self.last_ack = self.round_start;
        self.end_seq = s.snd_nxt;
        self.curr_rtt = u64::MAX;
        self.sample_cnt = 0;
    }

    /// bictcp_update: compute `cnt`, the number of ACKed packets per +1 cwnd.
    pub fn update(&mut self, s: &SockState, cwnd: u32, acked: u32) {
        let now_j = s.now / JIFFY;
        self.ack_cnt = self.ack_cnt.wrapping_add(acked);
        if self.last_cwnd == cwnd && now_j.saturating_sub(self.last_time) <= 1000 / 32 {
            return;
        }
        // The cubic function updates cnt at most once per jiffy.
        if !(self.epoch_start.is_some() && now_j == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = now_j;
            if self.epoch_start.is_none() {
                self.epoch_start = Some(now_j);
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.bic_k = 0;
                    self.bic_origin_point = cwnd;
                } else {
                    // K = cbrt((W_max - cwnd) / C), in 2^-10 s units.
                    self.bic_k = cubic_root(self.cube_factor * (self.last_max_cwnd - cwnd) as u64);
                    self.bic_origin_point = self.last_max_cwnd;
                }
            }
            // t = elapsed + delay_min: the curve is evaluated one min-RTT ahead.
            let mut t = (now_j - self.epoch_start.unwrap()) * (JIFFY / US);
            t += self.delay_min;
            t = (t << BICTCP_HZ) / 1_000_000;
            let offs = if t < self.bic_k { self.bic_k - t } else { t - self.bic_k };
            // delta = C (t - K)^3 in packets.
            let delta = ((self.cube_rtt_scale as u128 * offs as u128 * offs as u128 * offs as u128)
                >> (10 + 3 * BICTCP_HZ)) as u64;
            let delta = delta.min(u32::MAX as u64) as u32;
            let bic_target = if t < self.bic_k {
                self.bic_origin_point.saturating_sub(delta)
            } else {
                self.bic_origin_point.saturating_add(delta)
            };
            self.cnt = if bic_target > cwnd { cwnd / (bic_target - cwnd) } else { 100 * cwnd };
            // Initial growth without a W_max is capped at 5% per RTT.
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        // TCP friendliness: the Reno-friendly window grows 1 pkt per (cwnd * beta_scale / 8) ACKs.
        if self.cfg.tcp_friendliness {
            let delta = (cwnd * self.beta_scale) >> 3;
            if self.ack_cnt > delta && delta > 0 {
                let n = self.ack_cnt / delta;
                self.ack_cnt -= n * delta;
                self.tcp_cwnd += n;
            }
            if self.tcp_cwnd > cwnd {
                let d = self.tcp_cwnd - cwnd;
                let max_cnt = cwnd / d;
                if self.cnt > max_cnt {
                    self.cnt = max_cnt;
                }
            }
        }
        // At most 1 pkt per 2 ACKed (1.5x per RTT).
        self.cnt = self.cnt.max(2);
    }

    /// hystart_ack_delay: how long a burst may be stretched by pacing (us).
    fn hystart_ack_delay(s: &SockState) -> u64 {
        if s.pacing_rate == 0 {
            return 0;
        }
        (GSO_MAX_SIZE * 4 * 1_000_000 / s.pacing_rate).min(1000)
    }

    fn hystart_update(&mut self, s: &mut SockState, delay: u64) {
        let paced = s.paced;
        if self.found {
            return;
        }
        if self.cfg.hystart_detect & HYSTART_ACK_TRAIN != 0 {
            let now = s.now / US;
            if now.saturating_sub(self.last_ack) <= self.cfg.hystart_ack_delta_us {
                self.last_ack = now;
                let mut threshold = self.delay_min + Self::hystart_ack_delay(s);
                // Without pacing, an ACK train lasting delay_min / 2 signals a full pipe.
                if !paced {
                    threshold >>= 1;
                }
                if now.saturating_sub(self.round_start) > threshold {
                    self.found = true;
                    s.ssthresh = s.cwnd;
                }
            }
        }
        if self.cfg.hystart_detect & HYSTART_DELAY != 0 {
            if self.curr_rtt > delay {
                self.curr_rtt = delay;
            }
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else {
                // HYSTART_DELAY_THRESH: clamp(delay_min / 8, 4 ms, 16 ms).
                let thresh = (self.delay_min >> 3).clamp(4000, 16000);
                if self.curr_rtt > self.delay_min + thresh {
                    self.found = true;
                    s.ssthresh = s.cwnd;
                }
            }
        }
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn init(&mut self, s: &mut SockState) {
        self.reset();
        if self.cfg.hystart {
            self.hystart_reset(s);
        }
    }

    fn cwnd_event(&mut self, s: &mut SockState, ev: CaEvent) {
        if ev == CaEvent::TxStart {
            // Shift the epoch by the idle time so the curve does not jump after idle.
            // The idle time is measured from the last transmission (tcp_sock.lsndtime).
            if let Some(ep) = self.epoch_start {
                let now_j = s.now / JIFFY;
                let delta = now_j.saturating_sub(s.lsndtime / JIFFY);
                if delta > 0 {
                    self.epoch_start = Some((ep + delta).min(now_j));
                }
            }
        }
    }

    fn cong_avoid(&mut self, s: &mut SockState, acked: u32) {
        if !s.cwnd_limited() {
            return;
        }
        let mut acked = acked;
        if s.in_slow_start() {
            acked = s.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        let cwnd = s.cwnd;
        self.update(s, cwnd, acked);
        let cnt = self.cnt;
        s.cong_avoid_ai(cnt, acked);
    }

    /// cubictcp_recalc_ssthresh.
    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        self.epoch_start = None;
        if s.cwnd < self.last_max_cwnd && self.cfg.fast_convergence {
            // W_max = cwnd (1 + beta) / 2.
            self.last_max_cwnd = ((s.cwnd as u64 * (BICTCP_BETA_SCALE + self.cfg.beta as u64))
                / (2 * BICTCP_BETA_SCALE)) as u32;
        } else {
            self.last_max_cwnd = s.cwnd;
        }
        (((s.cwnd as u64 * self.cfg.beta as u64) / BICTCP_BETA_SCALE) as u32).max(2)
    }

    fn set_state(&mut self, s: &mut SockState, new: CaState) {
        if new == CaState::Loss {
            self.reset();
            self.hystart_reset(s);
        }
    }

    /// cubictcp_acked: track delay_min and run HyStart.
    fn pkts_acked(&mut self, s: &mut SockState, sample: &AckSample) {
        if sample.rtt < 0 {
            return;
        }
        // Discard delay samples right after a loss epoch starts (they may hold queueing delay).
        if let Some(ep) = self.epoch_start {
            if (s.now / JIFFY).saturating_sub(ep) < 1000 {
                return;
            }
        }
        let delay = (sample.rtt as u64 / US).max(1);
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
        if self.cfg.hystart && !self.found && s.in_slow_start() && s.cwnd >= self.cfg.hystart_low_window {
            // bictcp_hystart_reset at the start of each round (snd_una past end_seq).
            if s.snd_una > self.end_seq {
                self.hystart_reset(s);
            }
            self.hystart_update(s, delay);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sock(cwnd: u32) -> SockState {
        SockState::with_window(cwnd, 2)
    }

    #[test]
    fn constants_match_kernel() {
        let c = Cubic::new(CubicConfig::default());
        assert_eq!(c.beta_scale, 15);
        assert_eq!(c.cube_rtt_scale, 410);
        assert_eq!(c.cube_factor, (1u64 << 40) / 410);
    }

    #[test]
    fn loss_sets_wmax_and_ssthresh_with_fast_convergence() {
        let mut c = Cubic::new(CubicConfig::default());
        let mut s = sock(100);
        assert_eq!(c.ssthresh(&mut s), 70); // 100 * 717 / 1024 = 70.02
        assert_eq!(c.last_max_cwnd, 100);
        // A second loss below W_max releases bandwidth: W_max = 80 * (1 + 0.7) / 2 = 68.
        s.cwnd = 80;
        assert_eq!(c.ssthresh(&mut s), 56);
        assert_eq!(c.last_max_cwnd, 68);
        // Without fast convergence W_max is just cwnd.
        let mut c2 = Cubic::new(CubicConfig { fast_convergence: false, ..CubicConfig::default() });
        c2.last_max_cwnd = 100;
        assert_eq!(c2.ssthresh(&mut s), 56);
        assert_eq!(c2.last_max_cwnd, 80);
    }

    #[test]
    fn k_and_w_of_t_follow_the_cubic_function() {
        // W_max = 100, cwnd = 70 after the cut: K = cbrt(30 / 0.4) s = 4.217 s.
        let mut c = Cubic::new(CubicConfig { tcp_friendliness: false, ..CubicConfig::default() });
        c.last_max_cwnd = 100;
        let mut s = sock(70);
        s.now = 10 * crate::time::SEC;
        c.update(&s, 70, 1);
        // C in the kernel is 410/1024 = 0.4004, so K = cbrt(30 * 1024 / 410) = 4.2143 s.
        let k_secs = c.bic_k as f64 / 1024.0;
        assert!((k_secs - (30.0f64 * 1024.0 / 410.0).cbrt()).abs() < 2e-3, "K = {k_secs}");
        assert_eq!(c.bic_origin_point, 100);
        // At t = 0 the target is W_max - C K^3. K is floored to whole 2^-10 s units, so C K^3 is
        // just under 30 and the kernel's integer target is 100 - 29 = 71: cnt = 70 / (71 - 70).
        let delta0 = ((410u128 * (c.bic_k as u128).pow(3)) >> 40) as u32;
        assert_eq!(delta0, 29);
        assert_eq!(c.cnt, 70);
        // At t = K (delay_min = 0) the target is W_max; at t = K + 2 s it is 100 + 0.4 * 8 = 103.
        let k_ns = c.bic_k * crate::time::SEC / 1024;
        s.now = 10 * crate::time::SEC + k_ns + 2 * crate::time::SEC;
        c.update(&s, 100, 1);
        // target = 100 + floor(410 * offs^3 >> 40) with offs = 2048 units (2 s): 103.
        assert_eq!(c.cnt, 100 / 3);
        // Midway, t = K/2: target = 100 - 0.4 (K/2)^3 = 100 - 3.75 -> 96 (integer floor).
        s.now = 10 * crate::time::SEC + k_ns / 2;
        c.update(&s, 90, 1);
        let t = ((k_ns / 2) / crate::time::MS * 1000) << 10;
        let t = t / 1_000_000;
        let offs = c.bic_k - t;
        let delta = ((410u128 * (offs as u128).pow(3)) >> 40) as u32;
        assert_eq!(c.cnt, 90 / (100 - delta - 90));
    }

    #[test]
    fn first_epoch_without_wmax_grows_at_most_5_percent_per_rtt() {
        let mut c = Cubic::new(CubicConfig { tcp_friendliness: false, ..CubicConfig::default() });
        let s = sock(50);
        c.update(&s, 50, 1);
        assert_eq!(c.cnt, 20);
    }

    #[test]
    fn reno_friendliness_caps_cnt() {
        let mut c = Cubic::new(CubicConfig::default());
        c.last_max_cwnd = 1000;
        let mut s = sock(100);
        s.now = crate::time::SEC;
        c.update(&s, 100, 1);
        // Far below W_max the cubic curve is flat; force the Reno estimate above cwnd.
        c.tcp_cwnd = 110;
        c.last_cwnd = 0;
        s.now += 5 * crate::time::MS;
        c.update(&s, 100, 1);
        assert_eq!(c.cnt, 10); // cwnd / (tcp_cwnd - cwnd)
    }

    #[test]
    fn hystart_delay_detection_exits_slow_start() {
        let mut c = Cubic::new(CubicConfig { hystart_detect: HYSTART_DELAY, ..CubicConfig::default() });
        let mut s = SockState::new(1448, 10);
        s.cwnd = 32;
        s.snd_nxt = 100;
        c.init(&mut s);
        let sample = |rtt_ms: u64| AckSample { pkts_acked: 1, rtt: (rtt_ms * MS) as i64, in_flight: 32, ..AckSample::default() };
        // First round: 40 ms RTTs establish delay_min.
        s.snd_una = 50;
        for _ in 0..10 {
            c.pkts_acked(&mut s, &sample(40));
        }
        assert!(!c.found);
        // Next round (snd_una passes end_seq = 100): RTT 44 ms is below 40 + max(5, 4) = 45 ms.
        s.snd_nxt = 200;
        s.snd_una = 101;
        for _ in 0..10 {
            c.pkts_acked(&mut s, &sample(44));
        }
        assert!(!c.found);
        // A round whose first 8 samples are all 46 ms: 46 > 45 -> exit, ssthresh = cwnd.
        s.snd_una = 201;
        s.snd_nxt = 300;
        for _ in 0..9 {
            c.pkts_acked(&mut s, &sample(46));
        }
        assert!(c.found);
        assert_eq!(s.ssthresh, 32);
        assert_eq!(s.cwnd, 32, "HyStart never reduces cwnd");
    }

    #[test]
    fn hystart_ack_train_detection_exits_slow_start() {
        let mut c = Cubic::new(CubicConfig { hystart_detect: HYSTART_ACK_TRAIN, ..CubicConfig::default() });
        let mut s = SockState::new(1448, 10);
        s.cwnd = 40;
        s.snd_nxt = 100;
        c.init(&mut s);
        c.delay_min = 40_000; // 40 ms
        s.snd_una = 101; // new round starts at t = 0
        s.snd_nxt = 200;
        // ACKs 1 ms apart: the train lasts until now - round_start > delay_min / 2 = 20 ms.
        for i in 0..=20u64 {
            s.now = i * MS;
            c.pkts_acked(&mut s, &AckSample { pkts_acked: 1, rtt: (41 * MS) as i64, in_flight: 40, ..AckSample::default() });
            assert!(!c.found, "found too early at {i} ms");
        }
        s.now = 21 * MS;
        c.pkts_acked(&mut s, &AckSample { pkts_acked: 1, rtt: (41 * MS) as i64, in_flight: 40, ..AckSample::default() });
        assert!(c.found);
        assert_eq!(s.ssthresh, 40);
    }

    #[test]
    fn hystart_ack_train_breaks_on_gap() {
        let mut c = Cubic::new(CubicConfig { hystart_detect: HYSTART_ACK_TRAIN, ..CubicConfig::default() });
        let mut s = SockState::new(1448, 10);
        s.cwnd = 40;
        c.init(&mut s);
        c.delay_min = 40_000;
        s.snd_una = 1;
        s.snd_nxt = 100;
        // ACKs 3 ms apart (> ack_delta 2 ms) never extend the train.
        for i in 0..20u64 {
            s.now = i * 3 * MS;
            c.pkts_acked(&mut s, &AckSample { pkts_acked: 1, rtt: (41 * MS) as i64, in_flight: 40, ..AckSample::default() });
        }
        assert!(!c.found);
    }

    #[test]
    fn rto_resets_state() {
        let mut c = Cubic::new(CubicConfig::default());
        let mut s = sock(100);
        c.ssthresh(&mut s);
        c.delay_min = 5000;
        c.set_state(&mut s, CaState::Loss);
        assert_eq!(c.last_max_cwnd, 0);
        assert_eq!(c.delay_min, 0);
    }

    #[test]
    fn cube_root_is_exact() {
        for a in [0u64, 1, 7, 8, 26, 27, 1_000_000, 999_999, u32::MAX as u64 * 1000] {
            let r = cubic_root(a);
            assert!(r * r * r <= a && (r + 1) * (r + 1) * (r + 1) > a, "{a}");
        }
    }
}

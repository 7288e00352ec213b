//! HighSpeed TCP (RFC 3649, Floyd 2003) as Linux implements it (net/ipv4/tcp_highspeed.c):
//! Reno below 38 packets; above, the additive increase a(w) and the multiplicative decrease
//! b(w) come from the AIMD table of RFC 3649 appendix B, as Linux's `hstcp_aimd_vals` (cwnd
//! bounds, b(w) x 256), with a(w) = the row's index + 1.
//!
//! Linux details kept: the row `ai` is updated only in congestion avoidance (it is not
//! recomputed at a loss: `hstcp_ssthresh` reads the row of the last increase); the increase
//! is ai + 1 per ACK that reaches `cong_avoid`, however many packets it acknowledges (Linux
//! adds `ca->ai + 1` to `snd_cwnd_cnt` per call); slow start ignores the leftover of an ACK
//! that crosses ssthresh (`tcp_slow_start`'s return value is dropped); `hstcp_init` clamps
//! cwnd to 0xffffffff / 128. No module parameters; undo is `tcp_reno_undo_cwnd`.

use super::{AlgorithmInfo, CongestionControl, ParamSpec, SockState};

pub const PARAMS: &[ParamSpec] = &[];

pub const INFO: AlgorithmInfo = AlgorithmInfo {
    name: "highspeed",
    summary: "HighSpeed TCP (RFC 3649): Reno below 38 pkts, above it a(w) up to 72 pkts/RTT and b(w) down to 0.1 from the RFC's table",
    source: "RFC 3649; Linux net/ipv4/tcp_highspeed.c",
    params: PARAMS,
};

/// Linux `hstcp_aimd_vals` (RFC 3649 appendix B): (cwnd upper bound of the row, b(w) x 256).
pub const HSTCP_AIMD_VALS: [(u32, u32); 72] = [
    (38, 128),
    (118, 112),
    (221, 104),
    (347, 98),
    (495, 93),
    (663, 89),
    (851, 86),
    (1058, 83),
    (1284, 81),
    (1529, 78),
    (1793, 76),
    (2076, 74),
    (2378, 72),
    (2699, 71),
    (3039, 69),
    (3399, 68),
    (3778, 66),
    (4177, 65),
    (4596, 64),
    (5036, 62),
    (5497, 61),
    (5979, 60),
    (6483, 59),
    (7009, 58),
    (7558, 57),
    (8130, 56),
    (8726, 55),
    (9346, 54),
    (9991, 53),
    (10661, 52),
    (11358, 52),
    (12082, 51),
    (12834, 50),
    (13614, 49),
    (14424, 48),
    (15265, 48),
    (16137, 47),
    (17042, 46),
    (17981, 45),
    (18955, 45),
    (19965, 44),
    (21013, 43),
    (22101, 43),
    (23230, 42),
    (24402, 41),
    (25618, 41),
    (26881, 40),
    (28193, 39),
    (29557, 39),
    (30975, 38),
    (32450, 38),
    (33986, 37),
    (35586, 36),
    (37253, 36),
    (38992, 35),
    (40808, 35),
    (42707, 34),
    (44694, 33),
    (46776, 33),
    (48961, 32),
    (51258, 32),
    (53677, 31),
    (56230, 30),
    (58932, 30),
    (61799, 29),
    (64851, 28),
    (68113, 28),
    (71617, 27),
    (75401, 26),
    (79517, 26),
    (84035, 25),
    (89053, 24),
];

/// Linux `HSTCP_AIMD_MAX` (ARRAY_SIZE(hstcp_aimd_vals)): above the last row's 89053 packets
/// the last row applies.
const HSTCP_AIMD_MAX: usize = HSTCP_AIMD_VALS.len();

/// Linux `struct hstcp`.
pub struct HighSpeed {
    /// Row of the AIMD table: a(w) = ai + 1, b(w) = md / 256.
    pub ai: u32,
}

impl HighSpeed {
    pub fn new() -> Self {
        HighSpeed { ai: 0 }
    }
}

impl Default for HighSpeed {
    fn default() -> Self {
        Self::new()
    }
}

impl CongestionControl for HighSpeed {
    fn name(&self) -> &'static str {
        "highspeed"
    }

    /// hstcp_init: ai = 0; cwnd clamped to 0xffffffff / 128 so that the MD product fits.
    fn init(&mut self, s: &mut SockState) {
        self.ai = 0;
        s.cwnd_clamp = s.cwnd_clamp.min(0xffff_ffff / 128);
    }

    /// hstcp_cong_avoid.
    fn cong_avoid(&mut self, s: &mut SockState, acked: u32) {
        if !s.cwnd_limited() {
            return;
        }
        if s.in_slow_start() {
            s.slow_start(acked);
            return;
        }
        // Keep vals[ai - 1].cwnd < cwnd <= vals[ai].cwnd.
        let cwnd = s.cwnd;
        let mut ai = self.ai as usize;
        if cwnd > HSTCP_AIMD_VALS[ai].0 {
            while cwnd > HSTCP_AIMD_VALS[ai].0 && ai < HSTCP_AIMD_MAX - 1 {
                ai += 1;
            }
        } else if ai > 0 && cwnd <= HSTCP_AIMD_VALS[ai - 1].0 {
            while ai > 0 && cwnd <= HSTCP_AIMD_VALS[ai - 1].0 {
                ai -= 1;
            }
        }
        self.ai = ai as u32;
        // cwnd += a(w) / cwnd, per ACK.
        if s.cwnd < s.cwnd_clamp {
            s.cwnd_cnt += self.ai + 1;
            if s.cwnd_cnt >= s.cwnd {
                s.cwnd_cnt -= s.cwnd;
                s.cwnd += 1;
            }
        }
    }

    /// hstcp_ssthresh: max(cwnd - cwnd x b(w), 2), b(w) from the current row.
    fn ssthresh(&mut self, s: &mut SockState) -> u32 {
        let md = HSTCP_AIMD_VALS[self.ai as usize].1;
        (s.cwnd - ((s.cwnd * md) >> 8)).max(2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sock(cwnd: u32) -> SockState {
        SockState::with_window(cwnd, 2)
    }

    /// One ACK in congestion avoidance at `cwnd`, then the loss response; returns (ai, ssthresh).
    fn row_at(cwnd: u32) -> (u32, u32) {
        let mut h = HighSpeed::new();
        let mut s = sock(cwnd);
        h.init(&mut s);
        h.cong_avoid(&mut s, 1);
        s.cwnd = cwnd;
        let ss = h.ssthresh(&mut s);
        (h.ai, ss)
    }

    #[test]
    fn table_lookup_gives_rfc3649_ai_and_md() {
        // w <= 38: Reno (a = 1, b = 0.5).
        assert_eq!(row_at(38), (0, 19));
        // 38 < w <= 118: a = 2, b = 112/256; 39 - floor(39 x 112 / 256) = 39 - 17.
        assert_eq!(row_at(39), (1, 22));
        // 851 < 1000 <= 1058: row 7, a = 8, b = 83/256: 1000 - 324.
        assert_eq!(row_at(1000), (7, 676));
        // Exactly on a bound: 1058 stays in row 7.
        assert_eq!(row_at(1058).0, 7);
        assert_eq!(row_at(1059).0, 8);
        // Beyond the table: the last of the 72 rows (a = 72, b = 24/256 = 0.094): 100000 - 9375.
        assert_eq!(row_at(100_000), (71, 90_625));
    }

    #[test]
    fn the_row_moves_down_when_cwnd_shrinks() {
        let mut h = HighSpeed::new();
        let mut s = sock(5000);
        h.cong_avoid(&mut s, 1);
        assert_eq!(h.ai, 19); // 4596 < 5000 <= 5036
        s.cwnd = 100;
        h.cong_avoid(&mut s, 1);
        assert_eq!(h.ai, 1);
    }

    #[test]
    fn increase_is_a_of_w_per_window_of_acks() {
        // At cwnd 1000 (a = 8): 125 ACKs add 8 x 125 = 1000 to the count: +1 packet.
        let mut h = HighSpeed::new();
        let mut s = sock(1000);
        for _ in 0..124 {
            h.cong_avoid(&mut s, 1);
        }
        assert_eq!((s.cwnd, s.cwnd_cnt), (1000, 992));
        h.cong_avoid(&mut s, 1);
        assert_eq!((s.cwnd, s.cwnd_cnt), (1001, 0));
        // Per ACK, not per packet: a stretch ACK of 10 still adds a(w) = 8 only.
        h.cong_avoid(&mut s, 10);
        assert_eq!(s.cwnd_cnt, 8);
    }

    #[test]
    fn slow_start_drops_the_leftover() {
        let mut h = HighSpeed::new();
        let mut s = sock(98);
        s.ssthresh = 100;
        h.cong_avoid(&mut s, 5);
        assert_eq!((s.cwnd, s.cwnd_cnt), (100, 0));
    }

    #[test]
    fn init_clamps_cwnd_and_undo_is_renos() {
        let mut h = HighSpeed::new();
        let mut s = sock(10);
        h.init(&mut s);
        assert_eq!(s.cwnd_clamp, 33_554_431);
        s.prior_cwnd = 50;
        assert_eq!(h.undo_cwnd(&mut s), 50);
    }
}

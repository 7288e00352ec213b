//! 802.11 PHY profiles and frame airtime (OFDM: 4 us symbols, 16 service bits, 6 tail bits).

use crate::time::{Time, US};

#[derive(Debug, Clone, PartialEq)]
pub struct Phy {
    pub name: &'static str,
    /// Data frames' PHY rate.
    pub data_rate_bps: u64,
    /// Rate of control frames (ACK): the highest basic rate not above the data rate.
    pub basic_rate_bps: u64,
    pub slot: Time,
    pub sifs: Time,
    /// PLCP preamble and header of data frames.
    pub preamble: Time,
    /// Preamble of control frames (ACKs): legacy OFDM, 20 us, in both profiles.
    pub ack_preamble: Time,
    /// AIFSN: slots after SIFS before the countdown (2 = DCF's DIFS; 3 = EDCA best effort,
    /// which HT stations use for QoS data).
    pub aifsn: u32,
    /// 2.4 GHz OFDM signal extension after every frame (802.11g ERP-OFDM, 802.11n at 2.4 GHz).
    pub signal_ext: Time,
    pub cw_min: u32,
    pub cw_max: u32,
    /// Bytes the MAC adds to an IP packet: 24 header + 4 FCS + 8 LLC/SNAP (+ 2 QoS control for 11n).
    pub mac_overhead: u32,
    pub ack_bytes: u32,
}

impl Phy {
    /// DIFS (AIFS for QoS stations): SIFS + AIFSN slots.
    pub fn difs(&self) -> Time {
        self.sifs + self.aifsn as Time * self.slot
    }

    /// Airtime of a PSDU of `bytes` at `rate_bps`: preamble + ceil((16 + 8 bytes + 6) / bits
    /// per symbol) symbols of 4 us + signal extension.
    pub fn airtime(&self, bytes: u32, rate_bps: u64) -> Time {
        self.airtime_with(self.preamble, bytes, rate_bps)
    }

    fn airtime_with(&self, preamble: Time, bytes: u32, rate_bps: u64) -> Time {
        let bits = 16 + 8 * bytes as u64 + 6;
        let bits_per_symbol = rate_bps * 4 / 1_000_000;
        let symbols = bits.div_ceil(bits_per_symbol);
        preamble + symbols * 4 * US + self.signal_ext
    }

    /// Airtime of a data frame carrying an IP packet of `ip_bytes`.
    pub fn data_airtime(&self, ip_bytes: u32) -> Time {
        self.airtime(ip_bytes + self.mac_overhead, self.data_rate_bps)
    }

    /// An ACK: a legacy OFDM frame at the basic rate, with the legacy preamble.
    pub fn ack_airtime(&self) -> Time {
        self.airtime_with(self.ack_preamble, self.ack_bytes, self.basic_rate_bps)
    }

    /// The data rates rate adaptation chooses from (`[wireless] rate_control`), lowest first,
    /// each with the rate of the ACK it elicits: the highest basic rate (6, 12, 24 Mbps, the
    /// mandatory OFDM rates) not above the data rate, or for HT not above the MCS's non-HT
    /// reference rate (IEEE 802.11-2016 10.6.6.5.2 and 10.6.6.5.3; MCS 0..7 reference 6, 12,
    /// 18, 24, 36, 48, 54, 54 Mbps). The last entry is the profile's fixed rate and ACK rate.
    pub fn ladder(&self) -> &'static [(u64, u64)] {
        const M: u64 = 1_000_000;
        match self.name {
            "80211g" => &[(6 * M, 6 * M), (9 * M, 6 * M), (12 * M, 12 * M), (18 * M, 12 * M), (24 * M, 24 * M), (36 * M, 24 * M), (48 * M, 24 * M), (54 * M, 24 * M)],
            _ => &[(6_500_000, 6 * M), (13 * M, 12 * M), (19_500_000, 12 * M), (26 * M, 24 * M), (39 * M, 24 * M), (52 * M, 24 * M), (58_500_000, 24 * M), (65 * M, 24 * M)],
        }
    }

    /// Airtime of a data frame carrying an IP packet of `ip_bytes` at `rate_bps`.
    pub fn data_airtime_at(&self, ip_bytes: u32, rate_bps: u64) -> Time {
        self.airtime(ip_bytes + self.mac_overhead, rate_bps)
    }

    /// An ACK at `rate_bps` (legacy preamble).
    pub fn ack_airtime_at(&self, rate_bps: u64) -> Time {
        self.airtime_with(self.ack_preamble, self.ack_bytes, rate_bps)
    }

    /// A legacy OFDM frame of `bytes` (MPDU) at `rate_bps`, such as a management frame at the
    /// lowest basic rate: legacy preamble (20 us).
    pub fn legacy_airtime(&self, bytes: u32, rate_bps: u64) -> Time {
        self.airtime_with(self.ack_preamble, bytes, rate_bps)
    }

    /// How long a sender waits for the ACK before retrying: SIFS + slot + the ACK's preamble
    /// (the receiver must have started the ACK by then), plus the ACK itself.
    pub fn ack_timeout(&self) -> Time {
        self.sifs + self.slot + self.ack_airtime()
    }
}

/// 802.11g (ERP-OFDM) at 54 Mbps; ACKs at 24 Mbps.
pub fn ieee80211g() -> Phy {
    Phy {
        name: "80211g",
        data_rate_bps: 54_000_000,
        basic_rate_bps: 24_000_000,
        slot: 9 * US,
        sifs: 10 * US,
        preamble: 20 * US,
        ack_preamble: 20 * US,
        aifsn: 2,
        signal_ext: 6 * US,
        cw_min: 15,
        cw_max: 1023,
        mac_overhead: 36,
        ack_bytes: 14,
    }
}

/// 802.11n, 20 MHz, one spatial stream, MCS 7 (64-QAM 5/6), long guard interval: 65 Mbps.
/// HT-mixed preamble (36 us), no A-MPDU aggregation; ACKs at 24 Mbps (legacy OFDM, 20 us
/// preamble). The paper's USB adapter (Buffalo WLI-UCG301N) is a single-stream 2.4 GHz device;
/// MCS 7 is its highest rate.
pub fn ieee80211n_20mhz() -> Phy {
    Phy {
        name: "80211n-20mhz",
        data_rate_bps: 65_000_000,
        basic_rate_bps: 24_000_000,
        slot: 9 * US,
        sifs: 10 * US,
        preamble: 36 * US,
        ack_preamble: 20 * US,
        aifsn: 3,
        signal_ext: 6 * US,
        cw_min: 15,
        cw_max: 1023,
        mac_overhead: 38,
        ack_bytes: 14,
    }
}

pub const PROFILES: &[&str] = &["80211g", "80211n-20mhz"];

pub fn profile(name: &str) -> Option<Phy> {
    match name {
        "80211g" => Some(ieee80211g()),
        "80211n-20mhz" => Some(ieee80211n_20mhz()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ofdm_airtime() {
        let g = ieee80211g();
        // 1534-byte MPDU at 54 Mbps: 12294 bits / 216 per symbol = 57 symbols = 228 us.
        assert_eq!(g.airtime(1534, 54_000_000), (20 + 228 + 6) * US);
        // ACK, 14 bytes at 24 Mbps: 134 bits / 96 = 2 symbols.
        assert_eq!(g.ack_airtime(), (20 + 8 + 6) * US);
        assert_eq!(g.difs(), 28 * US);
    }

    /// The ladders end at the fixed rates, so `rate_control = "fixed"` and the top rung agree.
    #[test]
    fn ladders_end_at_the_profiles_rates() {
        for p in [ieee80211g(), ieee80211n_20mhz()] {
            let &(top, ack) = p.ladder().last().unwrap();
            assert_eq!((top, ack), (p.data_rate_bps, p.basic_rate_bps));
            assert_eq!(p.data_airtime_at(1500, top), p.data_airtime(1500));
            assert_eq!(p.ack_airtime_at(ack), p.ack_airtime());
            // Every rate gives a whole number of bits per 4 us symbol.
            for &(r, a) in p.ladder() {
                assert_eq!(r * 4 % 1_000_000, 0);
                assert_eq!(a * 4 % 1_000_000, 0);
            }
        }
        // MCS 0: 1538-byte MPDU, (16 + 12304 + 6) / 26 = 474.1 -> 475 symbols = 1900 us.
        let n = ieee80211n_20mhz();
        assert_eq!(n.data_airtime_at(1500, 6_500_000), (36 + 1900 + 6) * US);
        // ACK at 6 Mbps: 134 bits / 24 = 5.6 -> 6 symbols.
        assert_eq!(n.ack_airtime_at(6_000_000), (20 + 24 + 6) * US);
    }
}

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
}

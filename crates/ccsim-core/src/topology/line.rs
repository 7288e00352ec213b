//! The 802.11 line of a `[wireless]` scenario, as a network: stations `0` ..= `hops` (node
//! names are the station numbers) on one shared medium ([`crate::net::wifi::Dcf`]), no wired
//! links. A flow from station `src` to `dst` crosses the medium station by station, and its
//! ACKs come back the same way. Random streams: the DCF's backoffs and frame errors draw from
//! stream BOTTLENECK_LOSS and its background frames from ACK_LOSS, as when the line was a
//! simulator of its own.

use super::Built;
use crate::net::link::QueueLimit;
use crate::net::wifi::{Dcf, TcpAcks};
use crate::net::{Network, Step};
use crate::rng::{self, stream};
use crate::scenario::WirelessScenario;

/// The hops from station `a` to station `b` of medium `m`, one station at a time.
pub fn air_steps(m: u16, a: usize, b: usize) -> Vec<Step> {
    let mut steps = Vec::with_capacity(a.abs_diff(b));
    let mut at = a;
    while at != b {
        let next = if b > at { at + 1 } else { at - 1 };
        steps.push(Step::Air { medium: m, from: at as u16, to: next as u16 });
        at = next;
    }
    steps
}

pub fn build(sc: &WirelessScenario, seed: u64) -> Built {
    let mut net = Network::default();
    let nodes: Vec<u32> = (0..=sc.config.hops).map(|i| net.add_node(i.to_string())).collect();
    let cfg = sc.config.clone();
    let m = net.add_medium(|base, index| Dcf::new(cfg, nodes.clone(), base, index, rng::derive(seed, stream::BOTTLENECK_LOSS), rng::derive(seed, stream::ACK_LOSS)));
    if sc.config.hwmp {
        // One HWMP path per direction a flow uses: its data's, and a TCP flow's ACKs'.
        let mut paths: Vec<(usize, usize, crate::time::Time)> = Vec::new();
        for f in &sc.flows {
            let tcp = matches!(f.kind, crate::scenario::WFlowKind::Tcp { .. });
            for (a, b) in [(f.src, f.dst), (f.dst, f.src)].into_iter().take(if tcp { 2 } else { 1 }) {
                match paths.iter_mut().find(|p| p.0 == a && p.1 == b) {
                    Some(p) => p.2 = p.2.min(f.start),
                    None => paths.push((a, b, f.start)),
                }
            }
        }
        net.media[m as usize].set_hwmp_paths(paths);
    }
    let routes = sc
        .flows
        .iter()
        .map(|f| {
            let fwd = net.route_steps(&air_steps(m, f.src, f.dst));
            let rev = match (sc.config.tcp_acks, &f.kind) {
                (TcpAcks::OutOfBand, crate::scenario::WFlowKind::Tcp { .. }) => {
                    // ACKs off the channel: a wire of their own, 10 Gbps, no delay, no queue limit.
                    let d = net.add_dir(nodes[f.dst], nodes[f.src], 10_000_000_000, 0, QueueLimit::Unlimited, 0.0, None);
                    net.route_steps(&[Step::Dir(d)])
                }
                _ => net.route_steps(&air_steps(m, f.dst, f.src)),
            };
            (fwd, rev)
        })
        .collect();
    Built { net, routes }
}

/// The DCF's behaviour, end to end through the run loop: Bianchi's model, hidden terminals,
/// saturation, the host model, TCP over the line.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::Params;
    use crate::net::wifi::{phy, Host, WirelessConfig, UDP_IP_HEADER};
    use crate::output::wireless::WirelessOutput;
    use crate::scenario::{WFlow, WFlowKind};
    use crate::tcp::TcpConfig;
    use crate::time::{Time, SEC};

    /// A run of the line `cfg` with `flows` (no time series).
    fn run_wireless(cfg: WirelessConfig, flows: &[WFlow], duration: Time, seed: u64) -> WirelessOutput {
        let sc = WirelessScenario { name: None, duration, seed, sample_interval: 100 * crate::time::MS, config: cfg, flows: flows.to_vec(), normalized: serde_json::Value::Null };
        let mut sim = crate::sim::Sim::line(&sc, seed, false);
        sim.run_to_end();
        sim.wireless_output(0.0)
    }

    fn udp(src: usize, dst: usize, pps: f64) -> WFlow {
        WFlow { group: 0, src, dst, start: 0, stop: None, kind: WFlowKind::Udp { pps, size: 1470 } }
    }

    fn total_collisions(out: &WirelessOutput) -> u64 {
        out.stations.iter().map(|s| s.collisions_at_rx).sum()
    }

    /// Bianchi's model for one saturated station: payload / (DIFS + mean backoff + data +
    /// SIFS + ACK), mean backoff = CWmin / 2 slots.
    #[test]
    fn one_saturated_station_reaches_bianchis_throughput() {
        for p in [phy::ieee80211g(), phy::ieee80211n_20mhz()] {
            let ip = 1470 + UDP_IP_HEADER;
            let cycle = p.difs() as f64 + p.cw_min as f64 / 2.0 * p.slot as f64 + p.data_airtime(ip) as f64 + p.sifs as f64 + p.ack_airtime() as f64;
            let model = 1470.0 * 8.0 / (cycle / 1e9) / 1e6;
            let out = run_wireless(WirelessConfig::new(1, p.clone()), &[udp(0, 1, 20_000.0)], 20 * SEC, 1);
            let thr = out.flows[0].throughput_mbps;
            assert!((thr / model - 1.0).abs() < 0.05, "{}: {thr} Mbps vs Bianchi {model}", p.name);
            assert_eq!(total_collisions(&out), 0);
        }
    }

    /// Bianchi (2000): collision probability p of n saturated stations, from the fixed point
    /// tau = 2(1 - 2p) / ((1 - 2p)(W + 1) + p W (1 - (2p)^m)), p = 1 - (1 - tau)^(n - 1).
    fn bianchi_p(n: u32, cw_min: u32, cw_max: u32) -> f64 {
        let w = (cw_min + 1) as f64;
        let m = (((cw_max + 1) / (cw_min + 1)) as f64).log2();
        let (mut lo, mut hi) = (0.0f64, 0.4999f64);
        for _ in 0..100 {
            let p = (lo + hi) / 2.0;
            let tau = 2.0 * (1.0 - 2.0 * p) / ((1.0 - 2.0 * p) * (w + 1.0) + p * w * (1.0 - (2.0 * p).powf(m)));
            let p2 = 1.0 - (1.0 - tau).powi(n as i32 - 1);
            if p2 > p {
                lo = p;
            } else {
                hi = p;
            }
        }
        (lo + hi) / 2.0
    }

    /// Senders at both ends of a 3-hop line (0 -> 1 and 3 -> 2): 3 is three hops from 0, so it
    /// does not sense 0, but it is two hops from 0's receiver and corrupts its frames. When all
    /// stations sense each other, the hidden-terminal collisions vanish: what remains is DCF's
    /// own contention (two stations ending their backoff in the same slot), as Bianchi predicts.
    #[test]
    fn hidden_terminals_collide_and_vanish_when_everyone_senses_everyone() {
        let flows = [udp(0, 1, 1500.0), udp(3, 2, 1500.0)];
        let g = phy::ieee80211g();
        let hidden = run_wireless(WirelessConfig::new(3, g.clone()), &flows, 10 * SEC, 1);
        let mut all = WirelessConfig::new(3, g.clone());
        all.cs_reach = 3;
        let sensed = run_wireless(all, &flows, 10 * SEC, 1);
        let frac = |o: &WirelessOutput| o.stations[0].ack_timeouts as f64 / o.stations[0].tx_attempts as f64;
        let contention = bianchi_p(2, g.cw_min, g.cw_max);
        assert!(frac(&hidden) > 2.5 * contention, "hidden: {} vs contention {contention}", frac(&hidden));
        assert!(hidden.stations[0].retry_drops > 0 && hidden.stations[3].retry_drops > 0);
        assert!((frac(&sensed) / contention - 1.0).abs() < 0.25, "sensed: {} vs Bianchi {contention}", frac(&sensed));
        assert_eq!(sensed.stations[0].retry_drops + sensed.stations[3].retry_drops, 0);
        assert!(total_collisions(&sensed) * 2 < total_collisions(&hidden));
    }

    #[test]
    fn udp_cbr_saturates_with_hops_and_loses_from_two_hops_on() {
        let run = |hops: usize, pps: f64| {
            let out = run_wireless(WirelessConfig::new(hops, phy::ieee80211g()), &[udp(0, hops, pps)], 10 * SEC, 1);
            (out.flows[0].throughput_mbps, out.flows[0].loss_ratio)
        };
        for hops in 1..=4 {
            let rates = [200.0, 500.0, 1000.0, 4000.0, 8000.0];
            let thr: Vec<f64> = rates.iter().map(|&r| run(hops, r).0).collect();
            // Below saturation the line carries the offered load...
            assert!((thr[0] / (200.0 * 1470.0 * 8.0 / 1e6) - 1.0).abs() < 0.02, "{hops} hops: {thr:?}");
            // ...then it stops rising (4000 and 8000 pps are past saturation for any hop
            // count): the delivered rate stays far below the offered load and no longer grows.
            // Past saturation a line of 3+ hops may lose a little (2% at 3 hops): the source
            // takes airtime its relays need, the 802.11 chain effect.
            assert!(thr[4] < 1.02 * thr[3] && thr[3] < 0.8 * (4000.0 * 1470.0 * 8.0 / 1e6), "{hops} hops: {thr:?}");
            assert!(thr[3] > 0.95 * thr[2], "{hops} hops: {thr:?}");
        }
        assert!(run(1, 4000.0).0 > run(2, 4000.0).0 && run(2, 4000.0).0 > run(3, 4000.0).0);
        // Loss: none for one hop below saturation; present from two hops on at higher rates.
        assert_eq!(run(1, 2000.0).1, 0.0);
        assert!(run(2, 2000.0).1 > 0.1);
        // (Packets still queued at the end are in flight, not lost.)
        assert!(run(3, 500.0).1 == 0.0 && run(3, 1500.0).1 > 0.2);
    }

    /// With the host model, a source generating w packets/s spends w x ingress of its CPU on
    /// them and has (1 - w x ingress) / egress frames/s left to hand to its NIC: below that the
    /// line carries the offered load, above it the delivered rate falls as w rises (the seed's
    /// second mode), at every hop count.
    #[test]
    fn host_processing_makes_throughput_rise_then_fall() {
        let host = Host { ingress: 600 * crate::time::US, egress: 600 * crate::time::US, backlog: 1000 };
        let pps_out = |hops: usize, pps: f64| {
            let mut cfg = WirelessConfig::new(hops, phy::ieee80211g());
            cfg.host = host.clone();
            let out = run_wireless(cfg, &[udp(0, hops, pps)], 10 * SEC, 1);
            (out.flows[0].received as f64 / 10.0, out.flows[0].loss_ratio)
        };
        for hops in 1..=4 {
            let rates = [200.0, 400.0, 700.0, 1000.0, 1300.0];
            let got: Vec<f64> = rates.iter().map(|&r| pps_out(hops, r).0).collect();
            eprintln!("{hops} hops: {got:?}");
            let peak = got.iter().cloned().fold(0.0, f64::max);
            let k = got.iter().position(|&x| x == peak).unwrap();
            assert!(k > 0 && k < rates.len() - 1, "{hops} hops: no interior peak in {got:?}");
            assert!(got[rates.len() - 1] < 0.8 * peak, "{hops} hops: no fall past saturation in {got:?}");
        }
        // One hop, past the peak: the source's CPU limit (1 - w x 0.6 ms) / 0.6 ms.
        for w in [1000.0, 1300.0] {
            let model = (1.0 - w * 600e-6) / 600e-6;
            let (got, _) = pps_out(1, w);
            assert!((got / model - 1.0).abs() < 0.03, "w = {w}: {got} pkt/s vs {model}");
        }
    }

    #[test]
    fn tcp_over_the_line_conserves_bytes() {
        for cc in ["cubic", "bbr", "newreno"] {
            let p = Params::defaults(crate::cc::find(cc).unwrap().params);
            let flow = WFlow {
                group: 0,
                src: 0,
                dst: 4,
                start: 0,
                stop: None,
                kind: WFlowKind::Tcp { cc: cc.into(), params: p, tcp: TcpConfig::default(), size: Some(2_000_000) },
            };
            let out = run_wireless(WirelessConfig::new(4, phy::ieee80211n_20mhz()), &[flow], 60 * SEC, 3);
            let t = out.flows[0].tcp.as_ref().unwrap();
            assert!(t.completed, "{cc} did not complete over 4 hops");
            assert_eq!(t.bytes_delivered, 2_000_000, "{cc}: every byte exactly once");
            assert!(t.throughput_mbps > 1.0, "{cc}: {}", t.throughput_mbps);
        }
    }

    fn tcp(src: usize, dst: usize) -> WFlow {
        let p = Params::defaults(crate::cc::find("cubic").unwrap().params);
        WFlow { group: 0, src, dst, start: 0, stop: None, kind: WFlowKind::Tcp { cc: "cubic".into(), params: p, tcp: TcpConfig::default(), size: None } }
    }

    /// `rate_control`: alone on the channel, ARF climbs from the lowest rate to the top in 70
    /// frames and stays there, so a saturated hop carries what the fixed rate does (within
    /// 1%). With frames lost at random (fer 0.3, the same at every rate in ccsim) it falls
    /// back (two failures in a row) and sends longer frames for the same losses: less
    /// throughput. So does AARF.
    #[test]
    fn rate_control_arf_matches_fixed_alone_and_falls_back_on_losses() {
        use crate::net::wifi::RateControl;
        let run = |rc: RateControl, fer: f64| {
            let mut cfg = WirelessConfig::new(1, phy::ieee80211n_20mhz());
            cfg.rate_control = rc;
            cfg.fer = fer;
            run_wireless(cfg, &[udp(0, 1, 20_000.0)], 10 * SEC, 1).flows[0].throughput_mbps
        };
        let (fixed, arf, aarf) = (run(RateControl::Fixed, 0.0), run(RateControl::Arf, 0.0), run(RateControl::Aarf, 0.0));
        assert!((arf / fixed - 1.0).abs() < 0.01 && (aarf / fixed - 1.0).abs() < 0.01, "{fixed} {arf} {aarf}");
        let (fixed, arf, aarf) = (run(RateControl::Fixed, 0.3), run(RateControl::Arf, 0.3), run(RateControl::Aarf, 0.3));
        assert!(arf < 0.8 * fixed, "fer 0.3: fixed {fixed}, arf {arf}");
        assert!(aarf < 0.8 * fixed, "fer 0.3: fixed {fixed}, aarf {aarf}");
    }

    /// `hwmp` and `mesh_beacons` through the run loop: a TCP flow 0 -> 3 has two paths; each
    /// PREQ flood is 1 PREQ from the originator + 2 forwarded (stations 1 and 2; the target
    /// answers instead) and 3 PREPs (target, then 2 and 1 relaying to the originator): 6
    /// frames per path per 5.12 s, floods at 0, 5.12 and 10.24 s in a 12 s run. Beacons: 4
    /// stations every 0.5 s from i x 0.125 s: 24 each, and station 0's at 12 s itself (the
    /// run includes its last instant). The airtime costs the flow a little.
    #[test]
    fn hwmp_and_beacons_queue_the_expected_frames() {
        let mut cfg = WirelessConfig::new(3, phy::ieee80211n_20mhz());
        let plain = run_wireless(cfg.clone(), &[tcp(0, 3)], 12 * SEC, 1).flows[0].throughput_mbps;
        cfg.hwmp = true;
        cfg.mesh_beacons = true;
        let sc = WirelessScenario { name: None, duration: 12 * SEC, seed: 1, sample_interval: 100 * crate::time::MS, config: cfg, flows: vec![tcp(0, 3)], normalized: serde_json::Value::Null };
        let mut sim = crate::sim::Sim::line(&sc, 1, false);
        sim.run_to_end();
        assert_eq!(sim.network().media[0].mgmt_queued, [97, 2 * 3 * 3, 2 * 3 * 3]);
        let with = sim.wireless_output(0.0).flows[0].throughput_mbps;
        assert!(with < plain && with > 0.97 * plain, "plain {plain}, with HWMP and beacons {with}");
    }

    /// `tcp_acks = out-of-band`: the ACKs leave the channel, so the data get all the airtime.
    #[test]
    fn out_of_band_acks_free_the_channel() {
        let mut cfg = WirelessConfig::new(2, phy::ieee80211n_20mhz());
        let air = run_wireless(cfg.clone(), &[tcp(0, 2)], 10 * SEC, 1);
        cfg.tcp_acks = crate::net::wifi::TcpAcks::OutOfBand;
        let oob = run_wireless(cfg, &[tcp(0, 2)], 10 * SEC, 1);
        assert!(oob.flows[0].throughput_mbps > 1.15 * air.flows[0].throughput_mbps);
        // The receiver (station 2) sends no data frames.
        assert!(air.stations[2].tx_attempts > 0);
        assert_eq!(oob.stations[2].tx_attempts, 0);
    }

    #[test]
    fn same_seed_same_result() {
        let flows = [udp(0, 3, 1200.0), udp(3, 0, 300.0)];
        let mut cfg = WirelessConfig::new(3, phy::ieee80211g());
        cfg.fer = 0.05;
        cfg.background_load = 0.2;
        let a = serde_json::to_value(run_wireless(cfg.clone(), &flows, 5 * SEC, 9)).unwrap();
        let b = serde_json::to_value(run_wireless(cfg.clone(), &flows, 5 * SEC, 9)).unwrap();
        let c = serde_json::to_value(run_wireless(cfg, &flows, 5 * SEC, 10)).unwrap();
        let strip = |mut v: serde_json::Value| {
            v.as_object_mut().unwrap().remove("wall_seconds");
            v
        };
        assert_eq!(strip(a.clone()), strip(b));
        assert_ne!(strip(a)["flows"], strip(c)["flows"]);
    }
}

//! Any network of `[[links]]` and `[[wifi]]` lines: named nodes, full-duplex links between
//! pairs of them, lines of stations sharing an 802.11 channel, flows between any two nodes
//! along a given path or the fewest-hop one.
//!
//! Each link is two directions; each `[[wifi]]` entry is one medium whose consecutive stations
//! are one hop apart (a frame crosses the line station by station). A flow's data crosses the directions of its path; its ACKs
//! cross the reverse directions of the same links, so they queue behind whatever else uses
//! them (reverse traffic). A buffer given as `Nbdp` is N x the direction's rate x the shortest
//! base RTT (propagation there and back) of the flows whose data or ACKs cross it, in packets
//! of the `[tcp]` MSS plus headers (a Wi-Fi hop adds no propagation delay). Random streams:
//! direction `d` of link `i` (0 = as written, 1 = reverse) draws its losses from stream
//! `LINK_BASE + 2 i + d`; Wi-Fi line `w` its backoffs and frame errors from `MEDIUM_BASE + 2 w`
//! and its background frames from `MEDIUM_BASE + 2 w + 1`.

use super::Built;
use crate::net::wifi::{Dcf, WirelessConfig};
use crate::net::{Network, QueueLimit, Step};
use crate::rng::{self, stream};
use crate::time::{Time, SEC};
use std::collections::VecDeque;

/// A direction's buffer as written; `Bdp` is resolved against the flows that use it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Buffer {
    Unlimited,
    Packets(u64),
    Bytes(u64),
    Bdp(f64),
}

/// One direction of a link, as configured.
#[derive(Debug, Clone, PartialEq)]
pub struct DirSpec {
    /// Bits per second; 0 = unlimited (a pure propagation delay).
    pub rate_bps: u64,
    pub delay: Time,
    pub buffer: Buffer,
    pub loss: f64,
    /// The direction's queue discipline (the FIFO fast path by default).
    pub qdisc: crate::scenario::qdisc::QdiscConfig,
    /// A trace or schedules in place of the constant rate, delay or loss.
    pub vary: crate::scenario::varying::VarySpec,
    /// A FreeBSD Dummynet pipe on this kernel tick (see [`crate::net::link::TickPipe`]); None:
    /// the exact link.
    pub tick: Option<Time>,
}

/// A full-duplex link between nodes `a` and `b` (indices into [`Topology::nodes`]).
#[derive(Debug, Clone, PartialEq)]
pub struct LinkSpec {
    pub a: u32,
    pub b: u32,
    /// a -> b.
    pub fwd: DirSpec,
    /// b -> a.
    pub rev: DirSpec,
}

/// A line of stations (indices into [`Topology::nodes`]) sharing one 802.11 channel.
#[derive(Debug, Clone, PartialEq)]
pub struct WifiSpec {
    pub stations: Vec<u32>,
    /// The channel's settings (`hops` = stations - 1).
    pub config: WirelessConfig,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Topology {
    pub nodes: Vec<String>,
    pub links: Vec<LinkSpec>,
    pub wifi: Vec<WifiSpec>,
}

/// One hop of a path: a link in one direction, or a hop between neighbouring stations of a
/// Wi-Fi line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Crossing {
    /// Link `i`, reversed (b -> a) or not.
    Link(usize, bool),
    /// Wi-Fi line `w`, from station `from` to station `to` (positions in the line).
    Air { wifi: usize, from: usize, to: usize },
}

impl Crossing {
    /// The same hop the other way.
    pub fn reverse(self) -> Crossing {
        match self {
            Crossing::Link(i, r) => Crossing::Link(i, !r),
            Crossing::Air { wifi, from, to } => Crossing::Air { wifi, from: to, to: from },
        }
    }
}

impl Topology {
    pub fn node(&self, name: &str) -> Option<u32> {
        self.nodes.iter().position(|n| n == name).map(|i| i as u32)
    }

    /// The link between `a` and `b` (either way round) and whether `a -> b` is its reverse.
    pub fn link_between(&self, a: u32, b: u32) -> Option<(usize, bool)> {
        self.links.iter().position(|l| (l.a, l.b) == (a, b) || (l.a, l.b) == (b, a)).map(|i| (i, self.links[i].a != a))
    }

    /// The hop from `a` to `b`: a link between them, or neighbouring stations of a Wi-Fi line.
    pub fn hop_between(&self, a: u32, b: u32) -> Option<Crossing> {
        if let Some((i, r)) = self.link_between(a, b) {
            return Some(Crossing::Link(i, r));
        }
        for (w, line) in self.wifi.iter().enumerate() {
            let pa = line.stations.iter().position(|&n| n == a);
            let pb = line.stations.iter().position(|&n| n == b);
            if let (Some(pa), Some(pb)) = (pa, pb) {
                if pa.abs_diff(pb) == 1 {
                    return Some(Crossing::Air { wifi: w, from: pa, to: pb });
                }
            }
        }
        None
    }

    /// The fewest-hop path from `src` to `dst` (node indices, both ends included): breadth
    /// first, each node's links tried in file order, then its Wi-Fi neighbours in file order,
    /// so among equally short paths the one through earlier links wins. None when `dst` cannot
    /// be reached.
    pub fn shortest_path(&self, src: u32, dst: u32) -> Option<Vec<u32>> {
        let n = self.nodes.len();
        let mut adj: Vec<Vec<u32>> = vec![Vec::new(); n];
        for l in &self.links {
            adj[l.a as usize].push(l.b);
            adj[l.b as usize].push(l.a);
        }
        for line in &self.wifi {
            for w in line.stations.windows(2) {
                adj[w[0] as usize].push(w[1]);
                adj[w[1] as usize].push(w[0]);
            }
        }
        let mut parent: Vec<Option<u32>> = vec![None; n];
        let mut seen = vec![false; n];
        seen[src as usize] = true;
        let mut queue = VecDeque::from([src]);
        while let Some(u) = queue.pop_front() {
            if u == dst {
                let mut path = vec![dst];
                let mut v = dst;
                while let Some(p) = parent[v as usize] {
                    path.push(p);
                    v = p;
                }
                path.reverse();
                return Some(path);
            }
            for &v in &adj[u as usize] {
                if !seen[v as usize] {
                    seen[v as usize] = true;
                    parent[v as usize] = Some(u);
                    queue.push_back(v);
                }
            }
        }
        None
    }

    /// The hops a path crosses, data way (`fwd`) and ACK way (`rev`, in the ACKs' order). The
    /// path must follow links and Wi-Fi lines.
    pub fn crossings(&self, path: &[u32]) -> (Vec<Crossing>, Vec<Crossing>) {
        let fwd: Vec<Crossing> = path.windows(2).map(|w| self.hop_between(w[0], w[1]).expect("path follows links")).collect();
        let rev = fwd.iter().rev().map(|c| c.reverse()).collect();
        (fwd, rev)
    }

    fn spec(&self, (i, reversed): (usize, bool)) -> &DirSpec {
        if reversed {
            &self.links[i].rev
        } else {
            &self.links[i].fwd
        }
    }

    /// Base RTT of a path: the propagation delay of every direction crossed, there and back
    /// (a Wi-Fi hop has none).
    pub fn base_rtt(&self, path: &[u32]) -> Time {
        let (fwd, rev) = self.crossings(path);
        fwd.iter()
            .chain(rev.iter())
            .map(|&c| match c {
                Crossing::Link(i, r) => self.spec((i, r)).delay,
                Crossing::Air { .. } => 0,
            })
            .sum()
    }
}

/// Build the network for flows along `paths` (node paths, both ends included). `mss` sizes
/// the packets of a buffer given in BDP.
pub fn build(topo: &Topology, paths: &[Vec<u32>], mss: u32, seed: u64) -> Built {
    // Shortest base RTT of the flows crossing each direction (for Nbdp buffers).
    let mut min_rtt: Vec<[Option<Time>; 2]> = vec![[None, None]; topo.links.len()];
    for path in paths {
        let rtt = topo.base_rtt(path);
        let (fwd, rev) = topo.crossings(path);
        for c in fwd.into_iter().chain(rev) {
            if let Crossing::Link(i, r) = c {
                let m = &mut min_rtt[i][r as usize];
                *m = Some(m.map_or(rtt, |x| x.min(rtt)));
            }
        }
    }
    let mut net = Network::default();
    for name in &topo.nodes {
        net.add_node(name.clone());
    }
    // Directions in file order: link i as written is direction 2i, its reverse 2i + 1.
    for (i, l) in topo.links.iter().enumerate() {
        for (r, (from, to, spec)) in [(l.a, l.b, &l.fwd), (l.b, l.a, &l.rev)].into_iter().enumerate() {
            let limit = limit(spec, min_rtt[i][r], mss);
            let rng = (spec.loss > 0.0).then(|| rng::derive(seed, stream::LINK_BASE + 2 * i as u64 + r as u64));
            let d = net.add_dir(from, to, spec.rate_bps, spec.delay, limit, spec.loss, rng);
            super::install_varying(&mut net, d, &spec.vary);
            if let Some(t) = spec.tick {
                net.dirs[d as usize].link.set_tick(t);
            }
            super::install_qdisc(&mut net, d, &spec.qdisc, mss + crate::tcp::HEADER_BYTES, seed);
        }
    }
    // Wi-Fi lines in file order: line w is medium w.
    for (w, line) in topo.wifi.iter().enumerate() {
        let (cfg, stations) = (line.config.clone(), line.stations.clone());
        let rng = rng::derive(seed, stream::MEDIUM_BASE + 2 * w as u64);
        let bg = rng::derive(seed, stream::MEDIUM_BASE + 2 * w as u64 + 1);
        net.add_medium(|base, index| Dcf::new(cfg, stations, base, index, rng, bg));
    }
    let routes = paths
        .iter()
        .map(|path| {
            let (fwd, rev) = topo.crossings(path);
            let steps = |cs: Vec<Crossing>| {
                cs.into_iter()
                    .map(|c| match c {
                        Crossing::Link(i, r) => Step::Dir((2 * i + r as usize) as u32),
                        Crossing::Air { wifi, from, to } => Step::Air { medium: wifi as u16, from: from as u16, to: to as u16 },
                    })
                    .collect::<Vec<Step>>()
            };
            let (f, b) = (steps(fwd), steps(rev));
            (net.route_steps(&f), net.route_steps(&b))
        })
        .collect();
    Built { net, routes }
}

/// The queue limit of a direction; `Nbdp` from the shortest base RTT of the flows crossing it
/// (a direction no flow crosses gets 1 packet per BDP of nothing: at least one packet).
fn limit(spec: &DirSpec, rtt: Option<Time>, mss: u32) -> QueueLimit {
    match spec.buffer {
        Buffer::Unlimited => QueueLimit::Unlimited,
        Buffer::Packets(n) => QueueLimit::Packets(n),
        Buffer::Bytes(b) => QueueLimit::Bytes(b),
        Buffer::Bdp(k) => QueueLimit::Packets(bdp_packets(k, spec.rate_bps, rtt.unwrap_or(0), mss)),
    }
}

/// k x rate x rtt in packets of `mss` + headers, rounded, at least 1 (as the dumbbell's
/// `[bottleneck] buffer = "Nbdp"`).
pub fn bdp_packets(k: f64, rate_bps: u64, rtt: Time, mss: u32) -> u64 {
    let bdp_bytes = rate_bps as f64 * rtt as f64 / 8.0 / SEC as f64;
    (k * bdp_bytes / (mss + crate::tcp::HEADER_BYTES) as f64).round().max(1.0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    fn dir(rate_bps: u64, delay: Time) -> DirSpec {
        DirSpec { rate_bps, delay, buffer: Buffer::Packets(10), loss: 0.0, qdisc: Default::default(), vary: Default::default(), tick: None }
    }

    fn chain(names: &[&str], extra: &[(u32, u32)]) -> Topology {
        let mut t = Topology { nodes: names.iter().map(|s| s.to_string()).collect(), ..Topology::default() };
        for w in 0..names.len() as u32 - 1 {
            t.links.push(LinkSpec { a: w, b: w + 1, fwd: dir(10_000_000, MS), rev: dir(10_000_000, MS) });
        }
        for &(a, b) in extra {
            t.links.push(LinkSpec { a, b, fwd: dir(10_000_000, 5 * MS), rev: dir(10_000_000, 5 * MS) });
        }
        t
    }

    #[test]
    fn fewest_hops_with_ties_broken_by_link_order() {
        // a - b - c - d, plus a shortcut a - c: a -> d goes a, c, d (2 hops, not 3).
        let t = chain(&["a", "b", "c", "d"], &[(0, 2)]);
        assert_eq!(t.shortest_path(0, 3), Some(vec![0, 2, 3]));
        // Two 2-hop paths a -> d: via b (links 0, 3) or via c (links 1, 2); the first link
        // of a in file order (a - b) wins.
        let mut t = Topology { nodes: ["a", "b", "c", "d"].iter().map(|s| s.to_string()).collect(), ..Topology::default() };
        for (a, b) in [(0, 1), (0, 2), (2, 3), (1, 3)] {
            t.links.push(LinkSpec { a, b, fwd: dir(1, 0), rev: dir(1, 0) });
        }
        assert_eq!(t.shortest_path(0, 3), Some(vec![0, 1, 3]));
        // Unreachable.
        let mut t = chain(&["a", "b"], &[]);
        t.nodes.push("z".into());
        assert_eq!(t.shortest_path(0, 2), None);
    }

    #[test]
    fn acks_cross_the_reverse_directions_and_bdp_uses_the_shortest_rtt() {
        let mut t = chain(&["a", "r", "b"], &[]);
        t.links[1].fwd.buffer = Buffer::Bdp(1.0);
        let (fwd, rev) = t.crossings(&[0, 1, 2]);
        assert_eq!(fwd, vec![Crossing::Link(0, false), Crossing::Link(1, false)]);
        assert_eq!(rev, vec![Crossing::Link(1, true), Crossing::Link(0, true)]);
        assert_eq!(t.base_rtt(&[0, 1, 2]), 4 * MS);
        // 10 Mbps x 4 ms = 5000 B = 3.3 packets of 1500 B -> 3.
        let built = build(&t, &[vec![0, 1, 2]], 1448, 1);
        assert_eq!(built.net.dirs[2].link.limit, QueueLimit::Packets(3));
        assert_eq!(built.net.dirs[2].id, "r->b");
        assert_eq!(built.routes[0].0.len(), 2);
    }
}

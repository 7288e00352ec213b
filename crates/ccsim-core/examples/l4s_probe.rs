//! Probe of a classic and a scalable flow through DualPI2 (or through a fixed-probability
//! marker), for checking the steady state against RFC 9332's relations: the discipline is
//! wrapped so that every packet leaving (or dropped) is counted with the p' it met, and the
//! senders are sampled every millisecond (CWR time, the cut at each DCTCP ECE reduction). The
//! bottleneck buffer is 10,000 packets (DualPI2's own limit).
//!
//!     cargo run --release -p ccsim-core --example l4s_probe -- \
//!         [rate_mbps] [one_way_ms] [classic_cc] [scalable_cc] [seconds] [seed] [mode] [l4s_extra_ms] [dctcp_params]
//!
//! mode: `dualpi2` (default), `dualpi2:name=value:...` (DualPI2
//! parameters, e.g. `dualpi2:coupling_factor=1`), `fixed:<p>` (a FIFO that marks
//! ECT packets and drops Not-ECT ones with probability p, the same for both flows), `fixedc:<p>`
//! (only the Not-ECT flow's packets dropped with p; ECT ones pass). `l4s_extra_ms`: one-way
//! delay added to the scalable flow's access link (to equalize the RTTs). `dctcp_params`:
//! more DCTCP parameters, `name=value,...` (e.g. `dctcp_shift_g=2`).
//! Measures from a third of the run on (the start-up excluded). With `PROBE_SERIES=1` in the
//! environment it also prints one line per simulated second (p', p_C, p_L, head delays, cwnds).

use ccsim_core::cc::{CaState, Params};
use ccsim_core::net::qdisc::dualpi2::{self, DualPi2};
use ccsim_core::net::qdisc::{DropCause, QdiscEnv, Queued, Qdisc};
use ccsim_core::net::Ecn;
use ccsim_core::sim::Sim;
use ccsim_core::time::MS;
use rand::{Rng as _, SeedableRng};
use serde_json::json;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

#[derive(Default, Debug, Clone)]
struct Counts {
    on: bool,
    // per class: 0 classic, 1 L4S (classified at arrival)
    pkts: [u64; 2],
    dropped: [u64; 2],
    marked: [u64; 2],
    prob_sum: [f64; 2],
    prob2_sum: [f64; 2],
    step_marks: u64,
    sojourn_sum: [f64; 2],
    // head delays sampled once per millisecond
    head: [f64; 2],
    // max of the two head delays at the PI2 update instants (every 16 ms)
    head_max_upd: f64,
    n_upd: u64,
    // p' at the latest dequeue, and the milliseconds it was 0
    last_prob: f64,
    zero_ms: u64,
    // p' summed over the millisecond samples
    prob_ms_sum: f64,
}

enum Inner {
    Dual(DualPi2),
    /// FIFO with fixed marking/dropping probability p; `classic_only`: only Not-ECT packets
    /// are affected.
    Fixed { q: VecDeque<Queued>, bytes: u64, p: f64, classic_only: bool, rng: rand_chacha::ChaCha8Rng, marks: u64 },
}

struct Probe {
    inner: Inner,
    c: Arc<Mutex<Counts>>,
}

fn class(e: Ecn) -> usize {
    // In these runs the classic flow is Not-ECT (or ECT(0)) and the scalable one ECT(1); a
    // CE packet leaving was marked here (arrivals are never CE).
    if e == Ecn::Ect1 || e == Ecn::Ce {
        1
    } else {
        0
    }
}

impl Qdisc for Probe {
    fn enqueue(&mut self, p: Queued, now: u64, dropped: &mut Vec<(Queued, DropCause)>) -> Result<(), (Queued, DropCause)> {
        match &mut self.inner {
            Inner::Dual(d) => d.enqueue(p, now, dropped),
            Inner::Fixed { q, bytes, .. } => {
                *bytes += p.r.bytes() as u64;
                q.push_back(p);
                Ok(())
            }
        }
    }
    fn dequeue(&mut self, now: u64, dropped: &mut Vec<(Queued, DropCause)>) -> Option<Queued> {
        let before = dropped.len();
        let mut step = 0;
        let (out, prob) = match &mut self.inner {
            Inner::Dual(d) => {
                // the p' this dequeue's verdicts use (an update due now runs first)
                let before_steps = d.step_marks;
                let out = d.dequeue(now, dropped);
                step = d.step_marks - before_steps;
                (out, d.prob as f64 / dualpi2::MAX_PROB as f64)
            }
            Inner::Fixed { q, bytes, p, classic_only, rng, marks } => {
                let mut out = None;
                while let Some(mut pk) = q.pop_front() {
                    *bytes -= pk.r.bytes() as u64;
                    let hit = !(*classic_only && pk.r.ecn() != Ecn::NotEct) && rng.gen::<f64>() < *p;
                    if hit {
                        if pk.r.ecn() == Ecn::NotEct {
                            dropped.push((pk, DropCause::Aqm));
                            continue;
                        }
                        pk.r.set_ecn(Ecn::Ce);
                        *marks += 1;
                    }
                    out = Some(pk);
                    break;
                }
                (out, *p)
            }
        };
        let mut c = self.c.lock().unwrap();
        c.last_prob = prob;
        if c.on {
            c.step_marks += step;
            for (pk, _) in &dropped[before..] {
                if pk.r.ack() {
                    continue;
                }
                let k = class(pk.r.ecn());
                c.pkts[k] += 1;
                c.dropped[k] += 1;
                c.prob_sum[k] += prob;
                c.prob2_sum[k] += prob * prob;
            }
            if let Some(pk) = &out {
                if !pk.r.ack() {
                    let k = class(pk.r.ecn());
                    c.pkts[k] += 1;
                    c.prob_sum[k] += prob;
                    c.prob2_sum[k] += prob * prob;
                    c.sojourn_sum[k] += (now - pk.arrived) as f64;
                    if pk.r.ecn() == Ecn::Ce {
                        c.marked[k] += 1;
                    }
                }
            }
        }
        out
    }
    fn len(&self) -> usize {
        match &self.inner {
            Inner::Dual(d) => d.len(),
            Inner::Fixed { q, .. } => q.len(),
        }
    }
    fn bytes(&self) -> u64 {
        match &self.inner {
            Inner::Dual(d) => d.bytes(),
            Inner::Fixed { bytes, .. } => *bytes,
        }
    }
    fn packets(&self) -> Vec<Queued> {
        match &self.inner {
            Inner::Dual(d) => d.packets(),
            Inner::Fixed { q, .. } => q.iter().copied().collect(),
        }
    }
    fn heap_bytes(&self) -> usize {
        0
    }
    fn marks(&self) -> u64 {
        match &self.inner {
            Inner::Dual(d) => d.marks(),
            Inner::Fixed { marks, .. } => *marks,
        }
    }
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let arg = |i: usize, d: &str| a.get(i).cloned().unwrap_or_else(|| d.to_string());
    let rate: f64 = arg(1, "100").parse().unwrap();
    let owd: f64 = arg(2, "10").parse().unwrap();
    let classic = arg(3, "cubic");
    let scalable = arg(4, "dctcp");
    let secs: f64 = arg(5, "30").parse().unwrap();
    let seed: u64 = arg(6, "1").parse().unwrap();
    let mode = arg(7, "dualpi2");
    let extra: f64 = arg(8, "0").parse().unwrap();
    // extra DCTCP parameters, "name=value,name=value"
    let mut dp = serde_json::Map::new();
    dp.insert("ect1".into(), json!(true));
    for kv in arg(9, "").split(',').filter(|s| !s.is_empty()) {
        let (k, v) = kv.split_once('=').unwrap();
        dp.insert(k.into(), json!(v.parse::<f64>().unwrap()));
    }
    let scal_flow = if scalable == "dctcp" {
        json!({"cc": "dctcp", "params": dp, "ecn": true, "access_delay": format!("{extra}ms")})
    } else {
        json!({"cc": scalable, "ecn": true, "access_delay": format!("{extra}ms")})
    };
    let sc = ccsim_core::Scenario::from_value(&json!({
        "duration": format!("{secs}s"),
        "bottleneck": {"rate": format!("{rate}Mbps"), "delay": format!("{owd}ms"), "buffer": "10000pkt"},
        "flows": [{"cc": classic}, scal_flow],
    }))
    .unwrap();
    let mut sim = Sim::new(&sc, seed);
    let d = sim.network().dir_named("router->receiver").unwrap();
    let counts = Arc::new(Mutex::new(Counts::default()));
    let inner = if let Some(p) = mode.strip_prefix("fixed:") {
        Inner::Fixed { q: VecDeque::new(), bytes: 0, p: p.parse().unwrap(), classic_only: false, rng: rand_chacha::ChaCha8Rng::seed_from_u64(seed), marks: 0 }
    } else if let Some(p) = mode.strip_prefix("fixedc:") {
        Inner::Fixed { q: VecDeque::new(), bytes: 0, p: p.parse().unwrap(), classic_only: true, rng: rand_chacha::ChaCha8Rng::seed_from_u64(seed), marks: 0 }
    } else {
        let mut p = Params::defaults(dualpi2::PARAMS);
        for kv in mode.split(':').skip(1) {
            let (k, v) = kv.split_once('=').unwrap();
            p.set(k, v.parse().unwrap());
        }
        Inner::Dual(DualPi2::from_params(&p, &QdiscEnv { ecn: true, mtu_bytes: 1500, rate_bps: (rate * 1e6) as u64, seed }))
    };
    sim.set_qdisc(d, Box::new(Probe { inner, c: counts.clone() }));

    let end = sim.end_time();
    let warm = end / 3;
    sim.run_until(warm);
    counts.lock().unwrap().on = true;
    let snap = |sim: &Sim, i: usize| {
        let s = sim.flow_sender(i);
        (s.stats.bytes_acked, s.stats.rtt.n, s.stats.rtt.sum, s.sk.delivered, s.sk.delivered_ce, s.stats.ece_reductions, s.stats.fast_recoveries)
    };
    let s0 = [snap(&sim, 0), snap(&sim, 1)];
    let mut cwr_ms = [0u64; 2];
    let mut rec_ms = [0u64; 2];
    let mut cwnd_sum = [0f64; 2];
    let mut n_ms = 0u64;
    let mut alpha_sum = 0f64;
    let mut alpha_n = 0u64;
    let mut last_red = sim.flow_sender(1).stats.ece_reductions;
    // PROBE_SERIES=1: one line per simulated second
    let series = std::env::var("PROBE_SERIES").is_ok();
    let mut prev = (counts.lock().unwrap().clone(), 0u64);
    let mut t = warm;
    while t < end {
        t += MS;
        sim.run_until(t);
        n_ms += 1;
        for i in 0..2 {
            let s = sim.flow_sender(i);
            cwnd_sum[i] += s.sk.cwnd as f64;
            match s.sk.ca_state {
                CaState::Cwr => cwr_ms[i] += 1,
                CaState::Recovery | CaState::Loss => rec_ms[i] += 1,
                _ => {}
            }
        }
        let s = sim.flow_sender(1);
        if s.stats.ece_reductions == last_red + 1 && s.sk.prior_cwnd > 0 {
            // dctcp_ssthresh: cwnd (1 - alpha/2): alpha = 2 (1 - ssthresh / prior_cwnd)
            alpha_sum += 2.0 * (1.0 - s.sk.ssthresh as f64 / s.sk.prior_cwnd as f64);
            alpha_n += 1;
        }
        last_red = s.stats.ece_reductions;
        // head delays, time-sampled
        let dir = &sim.network().dirs[d as usize];
        let pk = dir.slot.as_ref().unwrap().qdisc.packets();
        let mut c = counts.lock().unwrap();
        let mut hd = [0u64; 2];
        for k in 0..2 {
            if let Some(h) = pk.iter().find(|p| class(p.r.ecn()) == k && !p.r.ack()) {
                hd[k] = t - h.arrived;
                c.head[k] += hd[k] as f64;
            }
        }
        if c.last_prob == 0.0 {
            c.zero_ms += 1;
        }
        c.prob_ms_sum += c.last_prob;
        if series && t % (1000 * MS) == 0 {
            let p0 = &prev.0;
            let ms = (n_ms - prev.1) as f64;
            let pkts = [(c.pkts[0] - p0.pkts[0]) as f64, (c.pkts[1] - p0.pkts[1]) as f64];
            println!(
                "t {:5.1} s: p' {:.4} | classic {:5.0} pkts, p_C {:.5}, head {:5.2} ms | L4S {:5.0} pkts, p_L {:.4}, head {:5.3} ms | cwnd {} / {}",
                t as f64 / 1e9,
                (c.prob_ms_sum - p0.prob_ms_sum) / ms,
                pkts[0],
                (c.dropped[0] - p0.dropped[0] + c.marked[0] - p0.marked[0]) as f64 / pkts[0].max(1.0),
                (c.head[0] - p0.head[0]) / ms / 1e6,
                pkts[1],
                (c.marked[1] - p0.marked[1]) as f64 / pkts[1].max(1.0),
                (c.head[1] - p0.head[1]) / ms / 1e6,
                sim.flow_sender(0).sk.cwnd,
                sim.flow_sender(1).sk.cwnd
            );
            prev = (c.clone(), n_ms);
        }
        if t % (16 * MS) == 0 {
            c.head_max_upd += hd[0].max(hd[1]) as f64;
            c.n_upd += 1;
        }
    }
    let dur = (end - warm) as f64 / 1e9;
    let c = counts.lock().unwrap().clone();
    let mut w = [0f64; 2];
    let mut rtt = [0f64; 2];
    let mut rate_mbps = [0f64; 2];
    println!("rate {rate} Mbps, one-way {owd} ms, {classic} vs {scalable}, {secs} s (measured over the last {dur:.1} s), seed {seed}, mode {mode}, L4S extra one-way {extra} ms");
    for i in 0..2 {
        let e = snap(&sim, i);
        let b = (e.0 - s0[i].0) as f64;
        rate_mbps[i] = b * 8.0 / dur / 1e6;
        rtt[i] = (e.2 - s0[i].2) / (e.1 - s0[i].1) as f64 / 1e9;
        // packets of 1448 B payload
        w[i] = b / 1448.0 / dur * rtt[i];
        let dlv = (e.3 - s0[i].3) as f64;
        let dce = (e.4 - s0[i].4) as f64;
        println!(
            "flow {i}: {:.2} Mbps, RTT {:.2} ms, W = rate x RTT {:.1} pkts, mean cwnd {:.1}, ECE fraction {:.4}, ECE reductions {}/s ({:.2}/RTT), fast recoveries {}/s, time in CWR {:.0} %, in Recovery {:.0} %",
            rate_mbps[i],
            rtt[i] * 1e3,
            w[i],
            cwnd_sum[i] / n_ms as f64,
            dce / dlv.max(1.0),
            ((e.5 - s0[i].5) as f64 / dur).round(),
            (e.5 - s0[i].5) as f64 / dur * rtt[i],
            ((e.6 - s0[i].6) as f64 / dur * 10.0).round() / 10.0,
            cwr_ms[i] as f64 / n_ms as f64 * 100.0,
            rec_ms[i] as f64 / n_ms as f64 * 100.0
        );
    }
    let pc = c.dropped[0] as f64 / c.pkts[0] as f64 + c.marked[0] as f64 / c.pkts[0] as f64;
    let pl = (c.marked[1] + c.dropped[1]) as f64 / c.pkts[1] as f64;
    let pp = [c.prob_sum[0] / c.pkts[0] as f64, c.prob_sum[1] / c.pkts[1] as f64];
    let pp2 = c.prob2_sum[0] / c.pkts[0] as f64;
    let k: f64 = mode.split(':').find_map(|kv| kv.strip_prefix("coupling_factor=")).map_or(2.0, |v| v.parse().unwrap());
    println!(
        "classic: {} pkts, p_C = {:.5} (drops {}, marks {}), mean p' at its packets {:.4}, mean p'^2 {:.5}, mean sojourn {:.2} ms, head delay {:.2} ms",
        c.pkts[0], pc, c.dropped[0], c.marked[0], pp[0], pp2, c.sojourn_sum[0] / c.pkts[0] as f64 / 1e6, c.head[0] / n_ms as f64 / 1e6
    );
    println!(
        "L4S:     {} pkts, p_L = {:.5} (marks {}, of which step marks {}), mean p' at its packets {:.4} (k p' {:.4}), mean sojourn {:.3} ms, head delay {:.3} ms",
        c.pkts[1], pl, c.marked[1], c.step_marks, pp[1], k * pp[1], c.sojourn_sum[1] / c.pkts[1] as f64 / 1e6, c.head[1] / n_ms as f64 / 1e6
    );
    println!(
        "PI2: mean max(head delays) at the update instants {:.2} ms (target 15 ms); p' = 0 {:.0} % of the time",
        c.head_max_upd / c.n_upd.max(1) as f64 / 1e6,
        c.zero_ms as f64 / n_ms as f64 * 100.0
    );
    if alpha_n > 0 {
        println!("DCTCP cut at its ECE reductions, as alpha = 2 (1 - ssthresh / cwnd) (integer cwnd arithmetic, so a cut below one packet reads as 0): mean {:.4} over {alpha_n}", alpha_sum / alpha_n as f64);
    }
    println!(
        "predictions: classic Reno W = 1.22/sqrt(p_C) = {:.1} (measured {:.1}); scalable W = 2/p_L = {:.1} (measured {:.1}); W_L p_L = {:.2}, W_C sqrt(p_C) = {:.2}",
        1.22 / pc.sqrt(),
        w[0],
        2.0 / pl,
        w[1],
        w[1] * pl,
        w[0] * pc.sqrt()
    );
    println!("RATIO scalable/classic = {:.2}", rate_mbps[1] / rate_mbps[0]);
}

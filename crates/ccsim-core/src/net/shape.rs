//! Links whose capacity, delay or loss changes over time: a mahimahi packet-delivery trace, or a
//! schedule of steps.
//!
//! A shaped direction stays a FIFO decided at offer time, as the fast path of
//! [`crate::net::link::Link`] is: the service of a packet depends only on when the link frees
//! up, so [`RateShape::serve`] gives its service start and end when it is offered. The
//! constant-rate path does not go through here (a direction without a shape has `None`).
//!
//! **Traces** (mahimahi's format, `mm-link`): each line is a time in milliseconds at which the
//! link may deliver 1500 bytes (a *delivery opportunity*); a time written k times gives k
//! opportunities; the trace repeats with a period equal to its last time. Bytes are served as
//! mahimahi's `LinkQueue::use_a_delivery_opportunity` serves them: an opportunity carries up to
//! 1500 bytes of the queue, so several small packets share one and a packet may be split over
//! two; bytes of an opportunity that the queue cannot fill are lost (an opportunity is not
//! saved up). A packet uses only the opportunities strictly after its arrival (mahimahi
//! processes the opportunities due before it enqueues an arriving packet), and it leaves at
//! the opportunity that carries its last byte.
//!
//! **Schedules**: piecewise-constant steps `(from, value)`, the first from time 0. A rate step
//! of 0 bps is an outage: a packet being serialised when it starts pauses and resumes when the
//! rate comes back (nothing is sent during the outage; packets wait in the queue, which drops
//! what overflows).

use crate::time::{Time, MS, SEC};

/// Bytes one delivery opportunity carries (mahimahi's `PACKET_SIZE`).
pub const OPPORTUNITY_BYTES: u32 = 1500;

/// Piecewise-constant values over time: `steps[i] = (from, value)`, from times strictly
/// increasing, the first 0.
#[derive(Debug, Clone, PartialEq)]
pub struct Steps<T> {
    pub steps: Vec<(Time, T)>,
}

impl<T: Copy> Steps<T> {
    pub fn new(steps: Vec<(Time, T)>) -> Self {
        debug_assert!(!steps.is_empty() && steps[0].0 == 0 && steps.windows(2).all(|w| w[0].0 < w[1].0));
        Steps { steps }
    }

    /// The index of the step in force at `t`.
    #[inline]
    pub fn index(&self, t: Time) -> usize {
        self.steps.partition_point(|&(from, _)| from <= t) - 1
    }

    /// The value in force at `t`.
    #[inline]
    pub fn at(&self, t: Time) -> T {
        self.steps[self.index(t)].1
    }
}

/// A mahimahi trace: the opportunity times of one period (ns, non-decreasing) and the period.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub times: Vec<Time>,
    pub period: Time,
}

impl Trace {
    /// Parse a trace file's text. Errors say what is wrong and where (line numbers from 1).
    pub fn parse(text: &str) -> Result<Trace, String> {
        let mut times = Vec::new();
        let mut last: u64 = 0;
        for (i, line) in text.lines().enumerate() {
            let s = line.trim();
            if s.is_empty() {
                continue;
            }
            let ms: u64 = s.parse().map_err(|_| format!("line {}: {:?} is not a whole number of milliseconds", i + 1, shorten(s)))?;
            if ms < last {
                return Err(format!("line {}: {ms} is before the previous line's {last}; the times must not decrease", i + 1));
            }
            if ms > 1_000_000_000 {
                return Err(format!("line {}: {ms} ms is out of range (at most 1000000000 ms)", i + 1));
            }
            last = ms;
            times.push(ms * MS);
        }
        if times.is_empty() {
            return Err("the trace is empty; accepted: one time in milliseconds per line, not decreasing, the last above 0".into());
        }
        if last == 0 {
            return Err("the trace lasts 0 ms (its last time is 0); accepted: a last time above 0, the trace's period".into());
        }
        Ok(Trace { times, period: last * MS })
    }

    /// Time of opportunity `k` (counted over all repetitions from 0).
    #[inline]
    pub fn time(&self, k: u64) -> Time {
        let n = self.times.len() as u64;
        (k / n) * self.period + self.times[(k % n) as usize]
    }

    /// The first opportunity strictly after `t`.
    pub fn first_after(&self, t: Time) -> u64 {
        let n = self.times.len() as u64;
        let (l, r) = (t / self.period, t % self.period);
        let i = self.times.partition_point(|&x| x <= r) as u64;
        l * n + i
    }

    /// Opportunities in (0, t] (mahimahi's first opportunity of a trace starting with 0 is at
    /// time 0 itself, which no packet can use: not counted).
    pub fn count_until(&self, t: Time) -> u64 {
        self.first_after(t) - self.first_after(0)
    }

    /// Mean rate over one period, in bits per second (at least 1).
    pub fn mean_bps(&self) -> u64 {
        let bits = self.times.len() as u128 * OPPORTUNITY_BYTES as u128 * 8 * SEC as u128;
        ((bits / self.period as u128) as u64).max(1)
    }
}

fn shorten(s: &str) -> String {
    if s.chars().count() > 40 {
        format!("{}...", s.chars().take(37).collect::<String>())
    } else {
        s.to_string()
    }
}

/// What drives a shaped direction's service.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    Trace(Trace),
    Schedule(Steps<u64>),
}

/// A direction's time-varying capacity and its service state.
#[derive(Debug, Clone)]
pub struct RateShape {
    pub shape: Shape,
    /// Trace: the next opportunity with bytes left, and how many.
    next: u64,
    left: u32,
    /// Bytes of the packets whose service ends within the run (`horizon`).
    pub served_bytes: u64,
    /// The end of the run (set before it starts; packets ending later are not counted served).
    pub horizon: Time,
}

impl RateShape {
    pub fn new(shape: Shape) -> RateShape {
        RateShape { shape, next: 0, left: OPPORTUNITY_BYTES, served_bytes: 0, horizon: Time::MAX }
    }

    /// A nominal rate (bits per second, at least 1): a trace's mean over its period, a
    /// schedule's highest step. Sizes a buffer given in BDP and is reported as the rate.
    pub fn nominal_bps(&self) -> u64 {
        match &self.shape {
            Shape::Trace(t) => t.mean_bps(),
            Shape::Schedule(s) => s.steps.iter().map(|&(_, r)| r).max().unwrap_or(0).max(1),
        }
    }

    /// Serve a packet of `bytes` that arrived at `now`, its service not to start before
    /// `earliest` (the link frees up then, or a discipline dequeues it then): its service
    /// start and end (the end is `Time::MAX` if it never ends: a trailing outage).
    pub fn serve(&mut self, now: Time, earliest: Time, bytes: u32) -> (Time, Time) {
        let (start, end) = match &self.shape {
            Shape::Trace(tr) => {
                // The next opportunity with bytes left after the previous packets.
                let (mut k, mut left) = (self.next, self.left);
                if tr.time(k) <= now || tr.time(k) < earliest {
                    // The link was idle: the rest of that opportunity went unused.
                    k = tr.first_after(now.max(earliest.saturating_sub(1)));
                    left = OPPORTUNITY_BYTES;
                }
                let start = tr.time(k);
                // The opportunity that carries the last byte, and the bytes left in it.
                let (last, rest) = if bytes <= left {
                    (k, left - bytes)
                } else {
                    let over = bytes - left;
                    let more = over.div_ceil(OPPORTUNITY_BYTES);
                    (k + more as u64, more * OPPORTUNITY_BYTES - over)
                };
                (self.next, self.left) = if rest == 0 { (last + 1, OPPORTUNITY_BYTES) } else { (last, rest) };
                (start, tr.time(last))
            }
            Shape::Schedule(s) => {
                let start = now.max(earliest);
                (start, schedule_end(s, start, bytes as u64 * 8))
            }
        };
        if end <= self.horizon {
            self.served_bytes += bytes as u64;
        }
        (start, end)
    }

    /// The bits the direction could carry in [0, t].
    pub fn capacity_bits(&self, t: Time) -> f64 {
        match &self.shape {
            Shape::Trace(tr) => tr.count_until(t) as f64 * OPPORTUNITY_BYTES as f64 * 8.0,
            Shape::Schedule(s) => {
                let mut bits = 0.0;
                for (i, &(from, r)) in s.steps.iter().enumerate() {
                    if from >= t {
                        break;
                    }
                    let to = s.steps.get(i + 1).map_or(t, |&(f, _)| f.min(t));
                    bits += r as f64 * (to - from) as f64 / SEC as f64;
                }
                bits
            }
        }
    }
}

/// When `bits` started at `start` finish under the rate schedule `s` (Time::MAX: never).
fn schedule_end(s: &Steps<u64>, start: Time, bits: u64) -> Time {
    let mut i = s.index(start);
    let mut t = start;
    // Bits still to send, scaled by 1e9 (bit-nanoseconds) to stay in integers.
    let mut left = bits as u128 * SEC as u128;
    loop {
        let rate = s.steps[i].1 as u128;
        let next = s.steps.get(i + 1).map(|&(f, _)| f);
        if rate > 0 {
            let need = left.div_ceil(rate) as Time;
            match next {
                Some(n) if t + need > n => left -= rate * (n - t) as u128,
                _ => return t.saturating_add(need),
            }
        }
        match next {
            Some(n) => {
                t = n;
                i += 1;
            }
            None => return Time::MAX,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(text: &str) -> RateShape {
        RateShape::new(Shape::Trace(Trace::parse(text).unwrap()))
    }

    #[test]
    fn one_ms_trace_serves_full_packets_as_12_mbps() {
        let mut s = trace("1\n");
        assert_eq!(s.nominal_bps(), 12_000_000);
        // Arriving at 0: the opportunity at 1 ms, as 12 Mbps ends a 1500-byte packet at 1 ms.
        assert_eq!(s.serve(0, 0, 1500), (MS, MS));
        assert_eq!(s.serve(0, MS, 1500), (2 * MS, 2 * MS));
        // Idle until 10.5 ms: the next opportunity is at 11 ms.
        assert_eq!(s.serve(10 * MS + MS / 2, 2 * MS, 1500), (11 * MS, 11 * MS));
    }

    #[test]
    fn small_packets_share_an_opportunity_and_big_ones_span_two() {
        let mut s = trace("1\n");
        assert_eq!(s.serve(0, 0, 1000).1, MS);
        assert_eq!(s.serve(0, MS, 400).1, MS); // 1400 of the first opportunity
        assert_eq!(s.serve(0, MS, 200).1, 2 * MS); // 100 then 100 of the second
        assert_eq!(s.serve(0, 2 * MS, 1400).1, 2 * MS); // the 1400 left
        // Unused bytes are not saved: after idling, a fresh opportunity.
        assert_eq!(s.serve(5 * MS, 2 * MS, 100), (6 * MS, 6 * MS));
        // Arriving exactly at an opportunity's time: the next one (6 ms is past).
        assert_eq!(s.serve(6 * MS, 6 * MS, 100), (7 * MS, 7 * MS));
    }

    #[test]
    fn repeated_times_and_looping() {
        let tr = Trace::parse("2\n2\n5\n").unwrap();
        assert_eq!(tr.period, 5 * MS);
        assert_eq!((tr.time(0), tr.time(1), tr.time(2), tr.time(3)), (2 * MS, 2 * MS, 5 * MS, 7 * MS));
        assert_eq!(tr.first_after(2 * MS), 2);
        assert_eq!(tr.count_until(10 * MS), 6);
        let mut s = RateShape::new(Shape::Trace(tr));
        assert_eq!(s.serve(0, 0, 1500).1, 2 * MS);
        assert_eq!(s.serve(0, 0, 1500).1, 2 * MS);
        assert_eq!(s.serve(0, 0, 1500).1, 5 * MS);
        assert_eq!(s.serve(0, 0, 1500).1, 7 * MS);
    }

    #[test]
    fn bad_traces() {
        assert!(Trace::parse("").unwrap_err().contains("empty"));
        assert!(Trace::parse("5\n3\n").unwrap_err().contains("line 2"));
        assert!(Trace::parse("0\n0\n").unwrap_err().contains("0 ms"));
        assert!(Trace::parse("1\nx\n").unwrap_err().contains("line 2"));
    }

    #[test]
    fn schedule_service_pauses_in_an_outage() {
        // 12 Mbps, an outage from 10 ms to 20 ms, then 12 Mbps again.
        let s = Steps::new(vec![(0, 12_000_000), (10 * MS, 0), (20 * MS, 12_000_000)]);
        let mut r = RateShape::new(Shape::Schedule(s));
        assert_eq!(r.serve(0, 0, 1500), (0, MS));
        // Starts at 9.5 ms: half sent before the outage, the rest from 20 ms.
        assert_eq!(r.serve(9 * MS + MS / 2, 0, 1500), (9 * MS + MS / 2, 20 * MS + MS / 2));
        assert_eq!(r.capacity_bits(30 * MS), 12e6 * 0.020);
        // A trailing outage never ends.
        let mut r = RateShape::new(Shape::Schedule(Steps::new(vec![(0, 12_000_000), (MS, 0)])));
        assert_eq!(r.serve(MS, 0, 1500).1, Time::MAX);
    }
}

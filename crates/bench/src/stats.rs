//! Latency histograms and summaries.
//!
//! [`Histogram`] is a log-linear histogram in nanoseconds in the manner of
//! HdrHistogram: values below 256 ns are exact, larger ones fall in
//! buckets 1/128 of their magnitude wide, so a percentile is off by under
//! 0.8% whatever the run length, in a fixed 58 KiB per histogram. Each load
//! worker keeps its own and they are merged at the end.

use std::time::Duration;

use serde::Serialize;

const SUB_BITS: u32 = 7;
const SUB: usize = 1 << SUB_BITS;
const BUCKETS: usize = (64 - SUB_BITS as usize + 1) * SUB;

#[derive(Clone)]
pub struct Histogram {
    counts: Vec<u64>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Histogram")
            .field("count", &self.count)
            .field("min", &self.min)
            .field("max", &self.max)
            .finish()
    }
}

fn index_of(v: u64) -> usize {
    if v < (SUB as u64) << 1 {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros();
    let shift = msb - SUB_BITS;
    let mantissa = (v >> shift) as usize; // in [SUB, 2 * SUB)
    (shift as usize + 1) * SUB + (mantissa - SUB)
}

/// The smallest and largest value that land in bucket `index`.
fn bounds_of(index: usize) -> (u64, u64) {
    if index < 2 * SUB {
        return (index as u64, index as u64);
    }
    let shift = (index / SUB - 1) as u32;
    let mantissa = (SUB + index % SUB) as u64;
    let low = mantissa << shift;
    (low, low + ((1u64 << shift) - 1))
}

impl Histogram {
    pub fn new() -> Self {
        Histogram {
            counts: vec![0; BUCKETS],
            count: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    pub fn record(&mut self, latency: Duration) {
        self.record_nanos(u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX));
    }

    pub fn record_nanos(&mut self, v: u64) {
        self.counts[index_of(v)] += 1;
        self.count += 1;
        self.sum += u128::from(v);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.count += other.count;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// The nearest-rank percentile `q` (0..=100) in nanoseconds: the
    /// highest value equivalent to the smallest recorded value with at
    /// least `ceil(q/100 * n)` values at or below it, clamped to the
    /// recorded min and max. 0 for an empty histogram.
    pub fn percentile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let q = q.clamp(0.0, 100.0);
        // Shave float noise so that 99.9% of 10,000 is rank 9,990.
        let exact = (q / 100.0) * self.count as f64;
        let rank = (exact - exact * 1e-12).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (index, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (_, high) = bounds_of(index);
                return high.clamp(self.min, self.max);
            }
        }
        self.max
    }

    /// The latency at each of [`DISTRIBUTION_PERCENTILES`], for charts;
    /// empty when nothing was recorded.
    pub fn distribution(&self) -> Vec<Quantile> {
        if self.count == 0 {
            return Vec::new();
        }
        DISTRIBUTION_PERCENTILES
            .iter()
            .map(|&percentile| Quantile {
                percentile,
                ms: round3(self.percentile(percentile) as f64 / 1e6),
            })
            .collect()
    }

    pub fn summary(&self) -> LatencySummary {
        let ms = |ns: u64| round3(ns as f64 / 1e6);
        if self.count == 0 {
            return LatencySummary::default();
        }
        LatencySummary {
            count: self.count,
            min_ms: ms(self.min),
            mean_ms: round3(self.sum as f64 / self.count as f64 / 1e6),
            p50_ms: ms(self.percentile(50.0)),
            p90_ms: ms(self.percentile(90.0)),
            p99_ms: ms(self.percentile(99.0)),
            p999_ms: ms(self.percentile(99.9)),
            max_ms: ms(self.max),
        }
    }
}

/// Rounds to three decimals (microseconds when in milliseconds).
/// Where latency distributions are sampled: dense in the tail, where
/// charts put their log-scaled x axis.
pub const DISTRIBUTION_PERCENTILES: &[f64] = &[
    0.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99, 100.0,
];

/// One point of a latency distribution.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Quantile {
    pub percentile: f64,
    pub ms: f64,
}

pub fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// Latency percentiles of successful requests, in milliseconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LatencySummary {
    pub count: u64,
    pub min_ms: f64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub max_ms: f64,
}

/// Minimum, median and maximum of a handful of samples.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct MinMedMax {
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

impl MinMedMax {
    /// `None` for no samples; the median of an even count is the mean of
    /// the middle two.
    pub fn of(samples: &[f64]) -> Option<MinMedMax> {
        if samples.is_empty() {
            return None;
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        Some(MinMedMax {
            min: sorted[0],
            median,
            max: sorted[n - 1],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_bounds_cover_every_value_once() {
        let mut previous_high = None;
        for index in 0..BUCKETS {
            let (low, high) = bounds_of(index);
            assert!(low <= high);
            if let Some(prev) = previous_high {
                assert_eq!(low, prev + 1, "gap before bucket {index}");
            }
            previous_high = Some(high);
            assert_eq!(index_of(low), index);
            assert_eq!(index_of(high), index);
        }
        assert_eq!(previous_high, Some(u64::MAX));
        assert_eq!(index_of(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn small_values_are_exact_percentiles() {
        let mut h = Histogram::new();
        for v in 1..=100 {
            h.record_nanos(v);
        }
        assert_eq!(h.count(), 100);
        assert_eq!(h.percentile(50.0), 50);
        assert_eq!(h.percentile(99.0), 99);
        assert_eq!(h.percentile(99.9), 100);
        assert_eq!(h.percentile(100.0), 100);
        assert_eq!(h.percentile(0.0), 1);
        assert_eq!(h.percentile(1.0), 1);
        assert_eq!(h.percentile(1.5), 2);
    }

    #[test]
    fn large_values_within_one_percent() {
        let mut h = Histogram::new();
        // 1 ms .. 1000 ms in 1 ms steps.
        for i in 1..=1000u64 {
            h.record(Duration::from_millis(i));
        }
        for (q, expect_ms) in [(50.0, 500.0), (90.0, 900.0), (99.0, 990.0), (99.9, 999.0)] {
            let got = h.percentile(q) as f64 / 1e6;
            assert!(
                (got - expect_ms).abs() / expect_ms < 0.008,
                "p{q}: {got} vs {expect_ms}"
            );
            assert!(got >= expect_ms, "highest-equivalent never undershoots");
        }
        assert_eq!(h.percentile(100.0), 1_000_000_000);
        let s = h.summary();
        assert_eq!(s.count, 1000);
        assert_eq!(s.min_ms, 1.0);
        assert_eq!(s.max_ms, 1000.0);
        assert_eq!(s.mean_ms, 500.5);
    }

    #[test]
    fn merge_and_tail() {
        let mut fast = Histogram::new();
        let mut slow = Histogram::new();
        for _ in 0..9990 {
            fast.record(Duration::from_micros(200));
        }
        for _ in 0..10 {
            slow.record(Duration::from_millis(50));
        }
        fast.merge(&slow);
        let s = fast.summary();
        assert_eq!(s.count, 10_000);
        assert!((s.p50_ms - 0.2).abs() < 0.002, "{s:?}");
        assert!((s.p99_ms - 0.2).abs() < 0.002, "{s:?}");
        // The 9991st value is the first slow one: p99.9 is rank 9990.
        assert!((s.p999_ms - 0.2).abs() < 0.002, "{s:?}");
        assert_eq!(s.max_ms, 50.0);
        assert_eq!(fast.percentile(99.91), 50_000_000);
    }

    #[test]
    fn distribution_follows_percentiles() {
        let mut h = Histogram::new();
        for i in 1..=10_000u64 {
            h.record(Duration::from_micros(i));
        }
        let d = h.distribution();
        assert_eq!(d.len(), DISTRIBUTION_PERCENTILES.len());
        assert_eq!(d[0].ms, 0.001);
        assert_eq!(d.last().map(|q| q.ms), Some(10.0));
        assert!(d.windows(2).all(|w| w[0].ms <= w[1].ms), "{d:?}");
        let p50 = d.iter().find(|q| q.percentile == 50.0).expect("p50");
        assert!((p50.ms - 5.0).abs() < 0.05, "{p50:?}");
        assert!(Histogram::new().distribution().is_empty());
    }

    #[test]
    fn empty_histogram() {
        let h = Histogram::new();
        assert_eq!(h.percentile(50.0), 0);
        assert_eq!(h.summary(), LatencySummary::default());
    }

    #[test]
    fn min_median_max() {
        assert_eq!(MinMedMax::of(&[]), None);
        let odd = MinMedMax::of(&[3.0, 1.0, 2.0]).expect("some");
        assert_eq!((odd.min, odd.median, odd.max), (1.0, 2.0, 3.0));
        let even = MinMedMax::of(&[4.0, 1.0, 3.0, 2.0]).expect("some");
        assert_eq!((even.min, even.median, even.max), (1.0, 2.5, 4.0));
    }
}

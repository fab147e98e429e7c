//! Turning per-block samples into what the charts draw: downsampled series, outliers and
//! histogram bins.

use crate::summary::{quantile, BlockSample};

/// Most points a line series is drawn with; longer series are downsampled.
pub const MAX_POINTS: usize = 2_000;

/// A block at least this many times slower than the median is slow.
pub const SLOW_FACTOR: f64 = 3.0;

/// A block with at least this many times the median number of operations is taken for a
/// cycle-boundary block (the Tezos workload's end-of-cycle work, the peaks published mainnet replays show).
pub const BOUNDARY_FACTOR: f64 = 2.5;

/// `points` reduced to at most `max` points (at least 2): the series is cut into `max / 2`
/// buckets of consecutive points and each bucket keeps its lowest and highest point, in
/// order, so that spikes survive.
pub fn downsample(points: &[(f64, f64)], max: usize) -> Vec<(f64, f64)> {
    let max = max.max(2);
    if points.len() <= max {
        return points.to_vec();
    }
    let buckets = max / 2;
    let mut out = Vec::with_capacity(buckets * 2);
    for b in 0..buckets {
        let (start, end) = (b * points.len() / buckets, (b + 1) * points.len() / buckets);
        let bucket = &points[start..end];
        let by_y = |a: &&(f64, f64), b: &&(f64, f64)| a.1.total_cmp(&b.1);
        let lo = bucket.iter().enumerate().min_by(|a, b| by_y(&a.1, &b.1)).map(|(i, _)| i);
        let hi = bucket.iter().enumerate().max_by(|a, b| by_y(&a.1, &b.1)).map(|(i, _)| i);
        let (Some(lo), Some(hi)) = (lo, hi) else { continue };
        let (first, second) = if lo <= hi { (lo, hi) } else { (hi, lo) };
        out.push(bucket[first]);
        if second != first {
            out.push(bucket[second]);
        }
    }
    out
}

/// The series `(level, f(sample))`, downsampled to [`MAX_POINTS`].
pub fn series(blocks: &[BlockSample], f: impl Fn(&BlockSample) -> f64) -> Vec<(f64, f64)> {
    let points: Vec<(f64, f64)> = blocks.iter().map(|s| (s.level as f64, f(s))).collect();
    downsample(&points, MAX_POINTS)
}

/// Milliseconds of a nanosecond count.
pub fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// The median of `f` over the blocks.
pub fn median(blocks: &[BlockSample], f: impl Fn(&BlockSample) -> u64) -> u64 {
    let mut values: Vec<u64> = blocks.iter().map(f).collect();
    values.sort_unstable();
    quantile(&values, 0.5)
}

/// Indices of the blocks for which `f` is at least `factor` times its median, in order
/// (none for fewer than two blocks).
fn above(blocks: &[BlockSample], factor: f64, f: impl Fn(&BlockSample) -> u64) -> Vec<usize> {
    if blocks.len() < 2 {
        return Vec::new();
    }
    let threshold = median(blocks, &f) as f64 * factor;
    (0..blocks.len()).filter(|&i| f(&blocks[i]) as f64 >= threshold).collect()
}

/// Indices of the blocks at least [`SLOW_FACTOR`] times slower than the median, in order.
pub fn slow_blocks(blocks: &[BlockSample]) -> Vec<usize> {
    above(blocks, SLOW_FACTOR, |s| s.time_ns)
}

/// Indices of the blocks with at least [`BOUNDARY_FACTOR`] times the median number of
/// operations, in order.
pub fn boundary_blocks(blocks: &[BlockSample]) -> Vec<usize> {
    above(blocks, BOUNDARY_FACTOR, |s| s.ops)
}

/// One histogram bin: `[lo, hi)` and how many values fell in it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bin {
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
    /// Values in the bin.
    pub count: u64,
}

/// `n` bins of equal width on a log scale covering every (positive) value; values at or below
/// zero count in the first bin.
pub fn log_bins(values: &[f64], n: usize) -> Vec<Bin> {
    let positive = values.iter().copied().filter(|v| *v > 0.0);
    let min = positive.clone().fold(f64::INFINITY, f64::min);
    let max = positive.fold(0.0, f64::max);
    if !min.is_finite() || max <= 0.0 {
        return Vec::new();
    }
    // Widen a degenerate range so that its single value sits in a visible bin.
    let (lo, hi) = if max / min < 1.01 { (min / 1.1, max * 1.1) } else { (min, max * 1.0001) };
    let n = n.max(1);
    let (llo, lhi) = (lo.ln(), hi.ln());
    let step = (lhi - llo) / n as f64;
    let mut bins: Vec<Bin> = (0..n)
        .map(|i| Bin { lo: (llo + step * i as f64).exp(), hi: (llo + step * (i + 1) as f64).exp(), count: 0 })
        .collect();
    for &v in values {
        let i = if v <= lo { 0 } else { ((v.ln() - llo) / step) as usize };
        bins[i.min(n - 1)].count += 1;
    }
    bins
}

/// The same bins counted over other values (a baseline's), each value in the bin that
/// holds it, or the first or last bin when it lies outside.
pub fn recount(bins: &[Bin], values: &[f64]) -> Vec<Bin> {
    let mut out: Vec<Bin> = bins.iter().map(|b| Bin { count: 0, ..*b }).collect();
    if out.is_empty() {
        return out;
    }
    for &v in values {
        let i = out.partition_point(|b| b.hi <= v).min(out.len() - 1);
        out[i].count += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn downsampling_keeps_spikes_and_bounds_points() {
        let mut points: Vec<(f64, f64)> = (0..10_000).map(|i| (i as f64, 1.0)).collect();
        points[7_777].1 = 100.0;
        points[1_234].1 = -5.0;
        let d = downsample(&points, 2_000);
        assert!(d.len() <= 2_000);
        assert!(d.contains(&(7_777.0, 100.0)));
        assert!(d.contains(&(1_234.0, -5.0)));
        assert!(d.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(downsample(&points[..10], 2_000).len(), 10);
    }

    #[test]
    fn slow_and_boundary_blocks() {
        let blocks: Vec<BlockSample> = (0..10u64)
            .map(|i| BlockSample {
                level: i,
                ops: if i == 4 { 30 } else { 10 },
                time_ns: if i == 7 { 400 } else { 100 + i },
                ..BlockSample::default()
            })
            .collect();
        assert_eq!(slow_blocks(&blocks), vec![7]);
        assert_eq!(boundary_blocks(&blocks), vec![4]);
        assert!(slow_blocks(&blocks[..1]).is_empty());
    }

    #[test]
    fn log_bins_count_every_value() {
        let values = [0.5, 1.0, 2.0, 4.0, 100.0, 0.0];
        let bins = log_bins(&values, 10);
        assert_eq!(bins.len(), 10);
        assert_eq!(bins.iter().map(|b| b.count).sum::<u64>(), values.len() as u64);
        assert!(bins.windows(2).all(|w| (w[0].hi - w[1].lo).abs() < 1e-9));
        assert_eq!(log_bins(&[3.0, 3.0], 5).iter().map(|b| b.count).sum::<u64>(), 2);
        assert!(log_bins(&[], 5).is_empty());
        let again = recount(&bins, &values);
        assert_eq!(again.iter().map(|b| b.count).collect::<Vec<_>>(), bins.iter().map(|b| b.count).collect::<Vec<_>>());
        assert_eq!(recount(&bins, &[1e9])[9].count, 1);
    }
}

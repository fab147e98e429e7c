//! A run against a baseline run: the key figures of both and their ratio, for the summary of
//! the page and the command line.

use crate::summary::ReplayReport;

/// One figure of both runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Compared {
    /// The figure's name and unit.
    pub name: &'static str,
    /// This run's value.
    pub this: f64,
    /// The baseline's value.
    pub baseline: f64,
    /// Whether a higher value is better (throughput) or worse (times, sizes).
    pub higher_is_better: bool,
}

impl Compared {
    /// This run's value over the baseline's (`None` when the baseline's is zero).
    pub fn ratio(&self) -> Option<f64> {
        (self.baseline != 0.0).then(|| self.this / self.baseline)
    }

    /// The ratio as text, with whether it is an improvement: `1.25x (better)`.
    pub fn describe_ratio(&self) -> String {
        match self.ratio() {
            None => "n/a".into(),
            Some(r) if (r - 1.0).abs() < 0.005 => format!("{r:.2}x (same)"),
            Some(r) => {
                let better = (r > 1.0) == self.higher_is_better;
                format!("{r:.2}x ({})", if better { "better" } else { "worse" })
            }
        }
    }
}

/// The key figures of `report` beside those of `baseline`.
pub fn compare(report: &ReplayReport, baseline: &ReplayReport) -> Vec<Compared> {
    let (s, b) = (&report.summary, &baseline.summary);
    let growth = |r: &ReplayReport| {
        let s = &r.summary;
        s.disk_after_bytes.saturating_sub(s.disk_before_bytes) as f64 / 1024.0 / s.blocks.max(1) as f64
    };
    let mib = |n: u64| n as f64 / (1024.0 * 1024.0);
    let f = |name, this, baseline, higher_is_better| Compared { name, this, baseline, higher_is_better };
    vec![
        f("throughput (TPS)", s.tps, b.tps, true),
        f("operations per second", s.ops_per_second, b.ops_per_second, true),
        f("block time, mean (ms)", s.block_mean_ms, b.block_mean_ms, false),
        f("block time, p50 (ms)", s.block_p50_ms, b.block_p50_ms, false),
        f("block time, p99 (ms)", s.block_p99_ms, b.block_p99_ms, false),
        f("block time, max (ms)", s.block_max_ms, b.block_max_ms, false),
        f("commit time, mean (ms)", s.commit_mean_ms, b.commit_mean_ms, false),
        f("commit time, p99 (ms)", s.commit_p99_ms, b.commit_p99_ms, false),
        f("CPU per block (ms)", s.cpu_ms_per_block, b.cpu_ms_per_block, false),
        f("max RSS (MiB)", mib(s.max_rss_bytes), mib(b.max_rss_bytes), false),
        f("disk growth per block (KiB)", growth(report), growth(baseline), false),
        f("read per block (B)", s.read_bytes_per_block, b.read_bytes_per_block, false),
        f("written per block (B)", s.write_bytes_per_block, b.write_bytes_per_block, false),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_say_which_way_is_better() {
        let mut a = ReplayReport::default();
        let mut b = ReplayReport::default();
        a.summary.tps = 200.0;
        b.summary.tps = 100.0;
        a.summary.block_mean_ms = 2.0;
        b.summary.block_mean_ms = 1.0;
        let c = compare(&a, &b);
        assert_eq!(c[0].ratio(), Some(2.0));
        assert_eq!(c[0].describe_ratio(), "2.00x (better)");
        assert_eq!(c[2].describe_ratio(), "2.00x (worse)");
        // A figure the baseline lacks has no ratio.
        assert_eq!(c[9].describe_ratio(), "n/a");
    }
}

//! The run as files and text: JSON (everything, samples included), a self-contained HTML page
//! (see the `html` module), and a plain-text summary beside the IO benchmarks' figures.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use super::fit::Fit;
use super::{IobenchReport, Model};

pub use super::html::{html_string, write_html};

/// Writes the report as pretty-printed JSON to `out`.
pub fn write_json(report: &IobenchReport, out: &Path) -> io::Result<()> {
    let mut f = BufWriter::new(File::create(out)?);
    serde_json::to_writer_pretty(&mut f, report).map_err(io::Error::other)?;
    f.write_all(b"\n")?;
    f.flush()
}

/// Bytes in MiB with one decimal.
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

/// A number with thousands separators, rounded to an integer when large.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    if v.abs() < 100.0 {
        return format!("{v:.2}");
    }
    let s = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    if v < 0.0 {
        format!("-{out}")
    } else {
        out
    }
}

/// `a·len + b·bytes + c` with standard errors.
pub fn formula(f: &Fit) -> String {
    format!(
        "{} (±{})·path_length + {} (±{})·nbytes + {} (±{})",
        num(f.a),
        num(f.std_err[0]),
        num(f.b),
        num(f.std_err[1]),
        num(f.c),
        num(f.std_err[2])
    )
}

/// Below this R², a fit explains too little of the times to price anything: it is printed with
/// a warning instead of as a cost model.
pub const MIN_R2: f64 = 0.5;

/// The warning printed under a fit whose R² is under [`MIN_R2`], if it is.
pub fn low_r2_warning(f: &Fit) -> Option<String> {
    (f.r2 < MIN_R2).then(|| {
        format!(
            "warning: R² {:.3} is under {MIN_R2}: path length and size explain little of these times, so this fit prices nothing; see the cached and storage clusters apart",
            f.r2
        )
    })
}

/// The samples served from the page cache and those fetched from storage, apart: their times
/// form two clusters that one fit blurs. `None` when either cluster is empty.
pub fn clusters(m: &Model) -> Option<String> {
    let mut cached: Vec<f64> = Vec::new();
    let mut storage: Vec<f64> = Vec::new();
    for smp in &m.samples {
        if smp.disk_read_bytes > 0 { &mut storage } else { &mut cached }.push(smp.ns as f64);
    }
    if cached.is_empty() || storage.is_empty() {
        return None;
    }
    cached.sort_by(f64::total_cmp);
    storage.sort_by(f64::total_cmp);
    let q = super::fit::quantile;
    Some(format!(
        "cached: n {} p50 {} ns p95 {} ns; from storage: n {} p50 {} ns p95 {} ns",
        cached.len(),
        num(q(&cached, 0.5)),
        num(q(&cached, 0.95)),
        storage.len(),
        num(q(&storage, 0.5)),
        num(q(&storage, 0.95))
    ))
}

fn model_lines(s: &mut String, m: &Model) {
    let _ = writeln!(
        s,
        "{:<6} {} samples, p50 {} ns, p99 {} ns, {:.0}% fetched from storage{}",
        m.name,
        m.samples.len(),
        num(m.p50_ns),
        num(m.p99_ns),
        m.miss_share * 100.0,
        if m.missing > 0 { format!(", {} paths gone", m.missing) } else { String::new() }
    );
    match &m.fit {
        Some(f) => {
            let _ = writeln!(s, "       ns = milligas = {}", formula(f));
            let q = &f.residuals;
            let _ = writeln!(
                s,
                "       R² {:.3}, rmse {} ns; residuals p5 {} p50 {} p95 {} ns{}",
                f.r2,
                num(f.rmse),
                num(q.p5),
                num(q.p50),
                num(q.p95),
                if f.dropped.is_empty() { String::new() } else { format!("; constant, left out: {:?}", f.dropped) }
            );
            if let Some(w) = low_r2_warning(f) {
                let _ = writeln!(s, "       {w}");
            }
        }
        None => {
            let _ = writeln!(s, "       no fit (no samples)");
        }
    }
    if let Some(f) = &m.fit_through_origin {
        let _ = writeln!(
            s,
            "       through the origin (the IO benchmarks' form): {}·path_length + {}·nbytes, R² {:.3}",
            num(f.a),
            num(f.b),
            f.r2
        );
    }
    let rows: Vec<String> = m
        .by_path_length
        .iter()
        .map(|r| {
            format!("{}: n {} p50 {} µs {:.0}% miss", r.path_length, r.n, num(r.p50_ns / 1e3), r.miss_share * 100.0)
        })
        .collect();
    let _ = writeln!(s, "       by path length: {}", rows.join("; "));
    if let Some(c) = clusters(m) {
        let _ = writeln!(s, "       {c}");
    }
    if let Some(f) = &m.fit_by_path_bytes {
        let _ = writeln!(
            s,
            "       by path bytes: {}·path_bytes + {}·nbytes + {}, R² {:.3}",
            num(f.a),
            num(f.b),
            num(f.c),
            f.r2
        );
    }
}

/// The plain-text summary the CLI prints.
pub fn summary(r: &IobenchReport) -> String {
    let mut s = String::new();
    let g = &r.grow;
    let _ = writeln!(
        s,
        "context   {}: {} values + {} blocks, log {} ({}, {:.1} s)",
        r.options.dir.join("store").display(),
        g.values,
        g.blocks,
        mib(g.log_bytes),
        if g.reused { "reused" } else { "grown" },
        g.seconds
    );
    let l = &r.limit;
    let m = &r.memory_after_warmup;
    let how = match l.method.as_str() {
        "none" => "no limit".to_string(),
        s if s.starts_with("cgroup") => format!(
            "{s}, limit {} (retuned to {} cache + anon charged {} + {} margin)",
            mib(m.limit_bytes),
            mib(l.requested_cache_bytes),
            mib(m.anon_bytes),
            mib(super::cache_limit::MARGIN)
        ),
        s => format!("{s}, {} of ballast", mib(l.ballast_bytes)),
    };
    let _ = writeln!(s, "cache     {how}: {} left for the page cache", mib(m.left_for_cache_bytes));
    for a in &l.attempts {
        let _ = writeln!(s, "          tried: {a}");
    }
    let _ = writeln!(
        s,
        "engine    {} decoded-object cache (kept small: the OS page cache is what is measured)",
        mib(r.options.engine_cache_bytes)
    );
    let w = &r.warmup;
    let _ = writeln!(
        s,
        "warm-up   store cached {} after eviction, {} after {} reads in {:.1} s (stopped: {})",
        mib(r.resident_after_evict),
        mib(w.resident_after),
        w.reads,
        w.seconds,
        w.stop
    );
    model_lines(&mut s, &r.read);
    model_lines(&mut s, &r.write);
    let _ = writeln!(
        s,
        "the IO benchmarks (DaiLambda, \"New IO benchmarks\", September 2023)  milligas (1 milligas = 1 ns), intercept 0:"
    );
    for m in &r.io_benchmarks {
        let _ =
            writeln!(s, "          {:<5} {} ·path_length + {} ·nbytes   ({})", m.model, num(m.a), num(m.b), m.cache);
    }
    for b in &r.block_4043830 {
        let _ = writeln!(
            s,
            "block 4,043,830 {}s ({} of them): this run {} gas, by the IO benchmarks' coefficients {}, as the IO benchmarks report {}, Nairobi {}",
            b.model,
            b.count,
            b.gas_this_run.map_or("-".into(), num),
            num(b.gas_io_benchmarks_coefficients),
            num(b.gas_io_benchmarks_reported),
            num(b.gas_nairobi)
        );
    }
    let _ = writeln!(s, "time      {:.1} s", r.seconds);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped() {
        assert_eq!(num(57_000.0), "57,000");
        assert_eq!(num(-1_234_567.4), "-1,234,567");
        assert_eq!(num(1.5), "1.50");
        assert_eq!(num(100.0), "100");
    }

    fn sample(path_length: u64, nbytes: u64, ns: u64, disk_read_bytes: u64) -> crate::iobench::sample::Sample {
        crate::iobench::sample::Sample { path_length, path_bytes: 10 * path_length, nbytes, ns, disk_read_bytes }
    }

    #[test]
    fn a_fit_that_explains_little_is_flagged_and_the_clusters_shown_apart() {
        // Times that path length and size do not explain: cached reads at ~2 µs, reads from
        // storage at ~80 µs, whatever the path.
        let samples: Vec<_> = (0..200u64)
            .map(|i| {
                if i % 3 == 0 {
                    sample(3 + i % 5, 8 + i % 7, 80_000 + i % 11, 4096)
                } else {
                    sample(3 + i % 5, 8 + i % 7, 2_000 + i % 13, 0)
                }
            })
            .collect();
        let mut text = String::new();
        model_lines(&mut text, &Model::new("reads", samples, 0));
        assert!(text.contains("warning: R²"), "{text}");
        assert!(text.contains("cached: n 133") && text.contains("from storage: n 67"), "{text}");

        // Times a line explains: no warning, and one cluster only.
        let samples: Vec<_> =
            (0..200u64).map(|i| sample(1 + i % 9, 8 + i % 7, 1_000 * (1 + i % 9) + 3 * (8 + i % 7), 0)).collect();
        let mut text = String::new();
        model_lines(&mut text, &Model::new("reads", samples, 0));
        assert!(!text.contains("warning") && !text.contains("from storage: n"), "{text}");
    }
}

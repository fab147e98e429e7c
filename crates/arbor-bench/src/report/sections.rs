//! The report's sections: one chart (or table) per measured series.

use std::fmt::Write as _;
use std::io;

use super::charts::{histogram, line_chart, Line, LineChart, Marks, COLORS};
use super::html::Section;
use super::series::{
    boundary_blocks, log_bins, median, ms, recount, series, slow_blocks, BOUNDARY_FACTOR, MAX_POINTS, SLOW_FACTOR,
};
use super::ticks;
use crate::latency::{LatencyHistogram, OpKind};
use crate::summary::{BlockSample, ReplayReport};

/// Outliers listed in the table (all of them are marked on the chart, up to [`MAX_POINTS`]).
const LISTED_OUTLIERS: usize = 50;
/// Bins of the latency histogram.
const HISTOGRAM_BINS: usize = 40;

const MIB: f64 = 1024.0 * 1024.0;

fn line(name: &str, color: usize, points: Vec<(f64, f64)>) -> Line {
    Line { name: name.to_string(), color: COLORS[color % COLORS.len()], points, faded: false }
}

/// The lines of `f` over this run's blocks and, pale, over the baseline's.
fn lines(
    b: &[BlockSample],
    base: Option<&[BlockSample]>,
    name: &str,
    color: usize,
    f: impl Fn(&BlockSample) -> f64,
) -> Vec<Line> {
    let mut out = vec![line(name, color, series(b, &f))];
    if let Some(base) = base {
        out.push(Line { faded: true, ..line(&format!("{name} (baseline)"), color, series(base, &f)) });
    }
    out
}

/// What the pale lines are, for the notes of charts that have them.
fn baseline_note(base: Option<&[BlockSample]>) -> &'static str {
    if base.is_some() {
        " Pale lines: the baseline run."
    } else {
        ""
    }
}

fn sampled_note(blocks: &[BlockSample]) -> &'static str {
    if blocks.len() > MAX_POINTS {
        " Long series are drawn with the lowest and highest block of each group of consecutive blocks."
    } else {
        ""
    }
}

/// Every section of the report, in page order.
pub fn sections(report: &ReplayReport, baseline: Option<&ReplayReport>) -> io::Result<Vec<Section>> {
    let b = &report.blocks;
    let base = baseline.map(|r| r.blocks.as_slice());
    let (boundary, slow) = (boundary_blocks(b), slow_blocks(b));
    Ok(vec![
        block_time(b, base, &boundary, &slow)?,
        latency(report, baseline)?,
        op_latency(report, baseline)?,
        simple(b, base, "Memory", "Resident set size of the replaying process after each block.", "RSS (MiB)", |s| {
            s.rss_bytes as f64 / MIB
        })?,
        simple(b, base, "Disk", "Space the store's files occupy on disk after each block.", "store size (MiB)", |s| {
            s.disk_bytes as f64 / MIB
        })?,
        io_per_block(b, base)?,
        outlier_table(b, &boundary, &slow),
    ]
    .into_iter()
    .chain(gc_table(report))
    .collect())
}

/// The garbage collections of the replay, if any ran.
fn gc_table(report: &ReplayReport) -> Option<Section> {
    let s = &report.summary;
    if s.gc.is_empty() {
        return None;
    }
    let mut t = String::from(
        "<table>\n<tr><th class=\"n\">started after level</th><th class=\"n\">done by level</th>\
         <th class=\"n\">seconds</th><th class=\"n\">writer paused ms</th><th class=\"n\">records kept</th>\
         <th class=\"n\">MiB kept</th><th class=\"n\">MiB freed</th><th class=\"n\">commits dropped</th></tr>\n",
    );
    for g in &s.gc {
        let _ = writeln!(
            t,
            "<tr><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{:.2}</td><td class=\"n\">{:.3}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{:.1}</td><td class=\"n\">{:.1}</td><td class=\"n\">{}</td></tr>",
            g.started_level,
            g.finished_level,
            g.seconds,
            g.writer_pause_ms,
            g.objects_kept,
            g.bytes_kept as f64 / MIB,
            g.bytes_freed as f64 / MIB,
            g.commits_dropped
        );
    }
    t.push_str("</table>");
    let note = format!(
        "Background collections ({} not started: the previous one was still running). {} blocks ran while one \
         was running: p99 {:.2} ms, max {:.2} ms (all blocks: p99 {:.2} ms, max {:.2} ms).",
        s.gc_skipped, s.gc_blocks, s.gc_block_p99_ms, s.gc_block_max_ms, s.block_p99_ms, s.block_max_ms
    );
    Some(Section { title: "Garbage collection".into(), note, body: t })
}

fn block_time(
    b: &[BlockSample],
    base: Option<&[BlockSample]>,
    boundary: &[usize],
    slow: &[usize],
) -> io::Result<Section> {
    let at = |idx: &[usize]| idx.iter().take(MAX_POINTS).map(|&i| (b[i].level as f64, ms(b[i].time_ns))).collect();
    // A log scale when the slowest blocks would flatten the others into the axis.
    let log_y = b.iter().map(|s| s.time_ns).max().unwrap_or(0) > 10 * median(b, |s| s.time_ns);
    let chart = LineChart {
        x_desc: "block level",
        y_desc: if log_y { "milliseconds (log scale)" } else { "milliseconds" },
        log_y,
        log_x: false,
        lines: [
            lines(b, base, "block time", 0, |s| ms(s.time_ns)),
            lines(b, base, "commit time", 1, |s| ms(s.commit_ns)),
        ]
        .concat(),
        marks: vec![
            Marks {
                label: format!("cycle boundaries (>= {BOUNDARY_FACTOR}x median operations): {}", boundary.len()),
                triangles: false,
                points: at(boundary),
            },
            Marks {
                label: format!("slow (>= {SLOW_FACTOR}x median time): {}", slow.len()),
                triangles: true,
                points: at(slow),
            },
        ],
        y_fmt: ticks::label,
    };
    let note = format!(
        "Wall time of each block from checkout to the end of its commit, and of the commit alone. Circled: \
         blocks with at least {BOUNDARY_FACTOR} times the median number of operations, the cycle-boundary blocks \
         of a Tezos workload; triangles: blocks at least {SLOW_FACTOR} times slower than the median.{}{}",
        sampled_note(b),
        baseline_note(base)
    );
    Ok(Section { title: "Block time".into(), note, body: line_chart(&chart)? })
}

fn latency(report: &ReplayReport, baseline: Option<&ReplayReport>) -> io::Result<Section> {
    let s = &report.summary;
    let times: Vec<f64> = report.blocks.iter().map(|b| ms(b.time_ns)).collect();
    let base_times: Option<Vec<f64>> = baseline.map(|r| r.blocks.iter().map(|b| ms(b.time_ns)).collect());
    // Bins over both runs, so that the two distributions share the axis.
    let all: Vec<f64> = times.iter().chain(base_times.iter().flatten()).copied().collect();
    let bins = recount(&log_bins(&all, HISTOGRAM_BINS), &times);
    let base_bins = base_times.map(|t| recount(&bins, &t));
    let markers: Vec<(String, f64)> = [("mean", s.block_mean_ms), ("p50", s.block_p50_ms), ("p99", s.block_p99_ms)]
        .iter()
        .filter(|(_, v)| *v > 0.0)
        .map(|(n, v)| (format!("{n} {v:.3} ms"), *v))
        .collect();
    let mut note = "Distribution of block times, in bins of equal width on a log scale.".to_string();
    if base_bins.is_some() {
        note.push_str(" Outline: the baseline run's blocks in the same bins.");
    }
    let body = histogram(&bins, "block time (ms)", &markers, base_bins.as_deref())?;
    Ok(Section { title: "Block time distribution".into(), note, body })
}

/// The points of a latency histogram: (upper bound of each bucket in microseconds, share of
/// the operations in percent), over the buckets from the first to the last non-empty one.
fn latency_points(h: &LatencyHistogram) -> Vec<(f64, f64)> {
    let first = h.buckets.iter().position(|&n| n > 0);
    let last = h.buckets.iter().rposition(|&n| n > 0);
    let (Some(first), Some(last)) = (first, last) else { return Vec::new() };
    (first..=last).map(|i| ((1u64 << (i + 1)) as f64 / 1e3, 100.0 * h.buckets[i] as f64 / h.count as f64)).collect()
}

fn op_latency(report: &ReplayReport, baseline: Option<&ReplayReport>) -> io::Result<Section> {
    let mut chart_lines = Vec::new();
    let mut t = String::from(
        "<table>\n<tr><th>operation</th><th class=\"n\">timed</th><th class=\"n\">of</th><th class=\"n\">mean µs</th>\
         <th class=\"n\">p50 µs</th><th class=\"n\">p99 µs</th><th class=\"n\">max µs</th></tr>\n",
    );
    for (i, kind) in OpKind::ALL.into_iter().enumerate() {
        let h = report.latency.get(kind);
        if h.count == 0 {
            continue;
        }
        chart_lines.push(line(kind.name(), i, latency_points(h)));
        if let Some(b) = baseline.map(|r| r.latency.get(kind)).filter(|b| b.count > 0) {
            chart_lines
                .push(Line { faded: true, ..line(&format!("{} (baseline)", kind.name()), i, latency_points(b)) });
        }
        let us = |ns: f64| ticks::label(ns / 1e3);
        let _ = writeln!(
            t,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">&le; {}</td><td class=\"n\">&le; {}</td><td class=\"n\">{}</td></tr>",
            kind.name(),
            h.count,
            h.seen.max(h.count),
            us(h.mean_ns()),
            us(h.quantile_ns(0.5) as f64),
            us(h.quantile_ns(0.99) as f64),
            us(h.max_ns as f64)
        );
    }
    t.push_str("</table>");
    let chart = LineChart {
        x_desc: "operation time (µs, log scale; upper bound of each power-of-two bucket)",
        y_desc: "share of the operations (%)",
        log_y: false,
        log_x: true,
        lines: chart_lines,
        marks: Vec::new(),
        y_fmt: ticks::label,
    };
    let note = format!(
        "Time of each operation of the replay, by kind, in buckets of powers of two of nanoseconds: find (and \
         find_tree), mem (and mem_tree), add (add, add_tree, copy), remove, the walks (list, length, fold) and the \
         commit of each block, whole and split as the store reports it into hashing, writing and the wait for \
         durability. One operation in {} of each kind is timed (every commit is): two clock reads around every \
         operation would add about 2% to the block times. Percentiles are bucket bounds (exact to a factor of \
         two).{}",
        crate::latency::SAMPLE_EVERY,
        baseline_note(baseline.map(|r| r.blocks.as_slice()))
    );
    Ok(Section { title: "Operation latency".into(), note, body: format!("{}\n{t}", line_chart(&chart)?) })
}

fn simple(
    b: &[BlockSample],
    base: Option<&[BlockSample]>,
    title: &str,
    note: &str,
    y_desc: &str,
    f: impl Fn(&BlockSample) -> f64,
) -> io::Result<Section> {
    let chart = LineChart {
        x_desc: "block level",
        y_desc,
        log_y: false,
        log_x: false,
        lines: lines(b, base, title, 0, f),
        marks: Vec::new(),
        y_fmt: ticks::label,
    };
    let note = format!("{note}{}{}", sampled_note(b), baseline_note(base));
    Ok(Section { title: title.into(), note, body: line_chart(&chart)? })
}

fn io_per_block(b: &[BlockSample], base: Option<&[BlockSample]>) -> io::Result<Section> {
    let chart = LineChart {
        x_desc: "block level",
        y_desc: "KiB per block",
        log_y: false,
        log_x: false,
        lines: [
            lines(b, base, "read", 2, |s| s.read_bytes as f64 / 1024.0),
            lines(b, base, "written", 3, |s| s.write_bytes as f64 / 1024.0),
        ]
        .concat(),
        marks: Vec::new(),
        y_fmt: ticks::label,
    };
    let note = format!(
        "Bytes passed to read system calls by the replaying thread (rchar of /proc/thread-self/io: the \
         trace is read on another thread) and to write system calls by the process (wchar of \
         /proc/self/io: the store writes on threads of its own) during each block; page-cache hits \
         included.{}{}",
        sampled_note(b),
        baseline_note(base)
    );
    Ok(Section { title: "I/O per block".into(), note, body: line_chart(&chart)? })
}

fn outlier_table(b: &[BlockSample], boundary: &[usize], slow: &[usize]) -> Section {
    let mut all: Vec<usize> = boundary.iter().chain(slow).copied().collect();
    all.sort_unstable();
    all.dedup();
    let title = "Outlier blocks".to_string();
    if all.is_empty() {
        let note = "No block stands out by its time or its number of operations.".to_string();
        return Section { title, note, body: String::new() };
    }
    all.sort_by_key(|&i| std::cmp::Reverse(b[i].time_ns));
    let mut t = String::from(
        "<table>\n<tr><th class=\"n\">level</th><th class=\"n\">block ms</th><th class=\"n\">commit ms</th>\
         <th class=\"n\">operations</th><th class=\"n\">transactions</th><th>why</th></tr>\n",
    );
    for &i in all.iter().take(LISTED_OUTLIERS) {
        let s = &b[i];
        let why = match (boundary.binary_search(&i).is_ok(), slow.binary_search(&i).is_ok()) {
            (true, true) => "cycle boundary, slow",
            (true, false) => "cycle boundary",
            _ => "slow",
        };
        let _ = writeln!(
            t,
            "<tr><td class=\"n\">{}</td><td class=\"n\">{:.3}</td><td class=\"n\">{:.3}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td>{why}</td></tr>",
            s.level,
            ms(s.time_ns),
            ms(s.commit_ns),
            s.ops,
            s.transactions
        );
    }
    t.push_str("</table>");
    let note = format!(
        "{} cycle-boundary blocks and {} slow blocks (see above); the slowest {} of them, slowest first.",
        boundary.len(),
        slow.len(),
        all.len().min(LISTED_OUTLIERS)
    );
    Section { title, note, body: t }
}

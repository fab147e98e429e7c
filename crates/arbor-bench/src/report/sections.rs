//! The report's sections: one chart (or table) per measured series.

use std::fmt::Write as _;
use std::io;

use super::charts::{histogram, line_chart, Line, LineChart, Marks, COLORS};
use super::html::{short_number, Section};
use super::series::{
    boundary_blocks, log_bins, median, ms, series, slow_blocks, BOUNDARY_FACTOR, MAX_POINTS, SLOW_FACTOR,
};
use crate::summary::{BlockSample, ReplayReport};

/// Outliers listed in the table (all of them are marked on the chart, up to [`MAX_POINTS`]).
const LISTED_OUTLIERS: usize = 50;
/// Bins of the latency histogram.
const HISTOGRAM_BINS: usize = 40;

const MIB: f64 = 1024.0 * 1024.0;

fn line(name: &str, color: usize, points: Vec<(f64, f64)>) -> Line {
    Line { name: name.to_string(), color: COLORS[color], points }
}

fn sampled_note(blocks: &[BlockSample]) -> &'static str {
    if blocks.len() > MAX_POINTS {
        " Long series are drawn with the lowest and highest block of each group of consecutive blocks."
    } else {
        ""
    }
}

/// Every section of the report, in page order.
pub fn sections(report: &ReplayReport) -> io::Result<Vec<Section>> {
    let b = &report.blocks;
    let (boundary, slow) = (boundary_blocks(b), slow_blocks(b));
    Ok(vec![
        block_time(b, &boundary, &slow)?,
        latency(report)?,
        simple(b, "Memory", "Resident set size of the replaying process after each block.", "RSS (MiB)", |s| {
            s.rss_bytes as f64 / MIB
        })?,
        simple(b, "Disk", "Space the store's files occupy on disk after each block.", "store size (MiB)", |s| {
            s.disk_bytes as f64 / MIB
        })?,
        io_per_block(b)?,
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

fn block_time(b: &[BlockSample], boundary: &[usize], slow: &[usize]) -> io::Result<Section> {
    let at = |idx: &[usize]| idx.iter().take(MAX_POINTS).map(|&i| (b[i].level as f64, ms(b[i].time_ns))).collect();
    // A log scale when the slowest blocks would flatten the others into the axis.
    let log_y = b.iter().map(|s| s.time_ns).max().unwrap_or(0) > 10 * median(b, |s| s.time_ns);
    let chart = LineChart {
        x_desc: "block level",
        y_desc: if log_y { "milliseconds (log scale)" } else { "milliseconds" },
        log_y,
        lines: vec![
            line("block time", 0, series(b, |s| ms(s.time_ns))),
            line("commit time", 1, series(b, |s| ms(s.commit_ns))),
        ],
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
        y_fmt: short_number,
    };
    let note = format!(
        "Wall time of each block from checkout to the end of its commit, and of the commit alone. Circled: \
         blocks with at least {BOUNDARY_FACTOR} times the median number of operations, the cycle-boundary blocks \
         of a Tezos workload; triangles: blocks at least {SLOW_FACTOR} times slower than the median.{}",
        sampled_note(b)
    );
    Ok(Section { title: "Block time".into(), note, body: line_chart(&chart)? })
}

fn latency(report: &ReplayReport) -> io::Result<Section> {
    let s = &report.summary;
    let times: Vec<f64> = report.blocks.iter().map(|b| ms(b.time_ns)).collect();
    let bins = log_bins(&times, HISTOGRAM_BINS);
    let markers: Vec<(String, f64)> = [("mean", s.block_mean_ms), ("p50", s.block_p50_ms), ("p99", s.block_p99_ms)]
        .iter()
        .filter(|(_, v)| *v > 0.0)
        .map(|(n, v)| (format!("{n} {v:.3} ms"), *v))
        .collect();
    let note = "Distribution of block times, in bins of equal width on a log scale.".to_string();
    Ok(Section { title: "Block time distribution".into(), note, body: histogram(&bins, "block time (ms)", &markers)? })
}

fn simple(
    b: &[BlockSample],
    title: &str,
    note: &str,
    y_desc: &str,
    f: impl Fn(&BlockSample) -> f64,
) -> io::Result<Section> {
    let chart = LineChart {
        x_desc: "block level",
        y_desc,
        log_y: false,
        lines: vec![line(title, 0, series(b, f))],
        marks: Vec::new(),
        y_fmt: short_number,
    };
    Ok(Section { title: title.into(), note: format!("{note}{}", sampled_note(b)), body: line_chart(&chart)? })
}

fn io_per_block(b: &[BlockSample]) -> io::Result<Section> {
    let chart = LineChart {
        x_desc: "block level",
        y_desc: "KiB per block",
        log_y: false,
        lines: vec![
            line("read", 2, series(b, |s| s.read_bytes as f64 / 1024.0)),
            line("written", 3, series(b, |s| s.write_bytes as f64 / 1024.0)),
        ],
        marks: Vec::new(),
        y_fmt: short_number,
    };
    let note = format!(
        "Bytes the process passed to read and write system calls during each block (rchar and wchar of \
         /proc/self/io; page-cache hits included).{}",
        sampled_note(b)
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

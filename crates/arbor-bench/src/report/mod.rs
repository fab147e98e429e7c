//! Replay reports as files: a self-contained HTML page (summary table and inline SVG charts,
//! no external assets) and the full report as JSON.
//!
//! The page shows, after the summary figures: block time and commit time over block levels
//! (log scale when the spikes are tall) with the cycle-boundary blocks (many more operations
//! than the median) and the slow blocks marked, the distribution of block times on a log
//! scale with the mean, p50 and p99, resident memory, store size, and bytes read and written
//! per block; then a table of those outlier blocks. Series longer than [`series::MAX_POINTS`] are downsampled keeping each group's
//! lowest and highest block, so spikes stay visible.

pub mod baseline;
mod charts;
mod html;
mod sections;
pub mod series;
mod ticks;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::summary::ReplayReport;

/// HTML escaping, shared by every page the workspace writes (replay, iobench, comparison).
pub use html::escape;

/// Writes `report` as a self-contained HTML page titled `title` to `out`; with a
/// `baseline` (an earlier run's report), every chart shows it too and the summary gives the
/// ratios of the key figures.
pub fn write_html(report: &ReplayReport, baseline: Option<&ReplayReport>, title: &str, out: &Path) -> io::Result<()> {
    let page = html_string(report, baseline, title)?;
    let mut f = BufWriter::new(File::create(out)?);
    f.write_all(page.as_bytes())?;
    f.flush()
}

/// The HTML page [`write_html`] writes.
pub fn html_string(report: &ReplayReport, baseline: Option<&ReplayReport>, title: &str) -> io::Result<String> {
    let sections = sections::sections(report, baseline)?;
    Ok(html::page(title, report, baseline, &sections))
}

/// Reads a report [`write_json`] wrote (figures a older version did not record read as
/// zero or empty).
pub fn read_json(path: &Path) -> io::Result<ReplayReport> {
    let text = std::fs::read_to_string(path)?;
    serde_json::from_str(&text).map_err(|e| {
        io::Error::new(io::ErrorKind::InvalidData, format!("{}: not a replay report: {e}", path.display()))
    })
}

/// Writes `report` (summary and one sample per block) as pretty-printed JSON to `out`.
pub fn write_json(report: &ReplayReport, out: &Path) -> io::Result<()> {
    let mut f = BufWriter::new(File::create(out)?);
    serde_json::to_writer_pretty(&mut f, report).map_err(io::Error::other)?;
    f.write_all(b"\n")?;
    f.flush()
}

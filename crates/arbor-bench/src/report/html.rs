//! The HTML page around the charts: header, summary table, sections, style.

use std::fmt::Write as _;

use crate::summary::ReplayReport;

/// One titled part of the page: a note and an inline SVG chart or an HTML table.
pub struct Section {
    /// Heading.
    pub title: String,
    /// Explanation under the heading (plain text).
    pub note: String,
    /// The chart's SVG document or a table, inserted as is.
    pub body: String,
}

/// `text` with the HTML special characters escaped.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A number with as many decimals as its size needs (axis labels).
pub fn short_number(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 || a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 0.1 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// Bytes in MiB, one decimal.
pub fn mib(bytes: f64) -> String {
    format!("{:.1} MiB", bytes / (1024.0 * 1024.0))
}

/// The rows of the summary table: figure name and value.
pub fn summary_rows(report: &ReplayReport) -> Vec<(&'static str, String)> {
    let s = &report.summary;
    let growth = s.disk_after_bytes.saturating_sub(s.disk_before_bytes) as f64 / s.blocks.max(1) as f64;
    vec![
        ("Blocks", s.blocks.to_string()),
        ("Context operations", s.ops.to_string()),
        ("Transactions", s.transactions.to_string()),
        ("Initial state", format!("{} values loaded in {:.2} s", s.load_values, s.load_seconds)),
        ("Replay time", format!("{:.3} s", s.replay_seconds)),
        ("Throughput", format!("{:.0} TPS, {:.0} operations/s", s.tps, s.ops_per_second)),
        ("Block time, mean", format!("{:.3} ms", s.block_mean_ms)),
        (
            "Block time, p50 / p90 / p99",
            format!("{:.3} / {:.3} / {:.3} ms", s.block_p50_ms, s.block_p90_ms, s.block_p99_ms),
        ),
        ("Block time, max", format!("{:.3} ms (level {})", s.block_max_ms, s.block_max_level)),
        ("Commit time, mean / p99", format!("{:.3} / {:.3} ms", s.commit_mean_ms, s.commit_p99_ms)),
        ("Max RSS", mib(s.max_rss_bytes as f64)),
        ("Disk before / after", format!("{} / {}", mib(s.disk_before_bytes as f64), mib(s.disk_after_bytes as f64))),
        ("Disk growth per block", format!("{:.1} KiB", growth / 1024.0)),
        (
            "Read per block",
            format!(
                "{:.1} records; {:.0} B in {:.1} syscalls",
                s.records_read_per_block, s.read_bytes_per_block, s.read_syscalls_per_block
            ),
        ),
        (
            "Written per block",
            format!("{:.0} B in {:.1} syscalls", s.write_bytes_per_block, s.write_syscalls_per_block),
        ),
        ("CPU user / system", format!("{:.2} / {:.2} s", s.cpu_user_seconds, s.cpu_sys_seconds)),
        ("CPU per block", format!("{:.2} ms (process)", s.cpu_ms_per_block)),
        ("Page faults per block", format!("{:.0} (first touches of memory)", s.page_faults_per_block)),
        ("Appended per value written", format!("{:.1} B", s.appended_bytes_per_write)),
        ("Verified", format!("{} operation results, {} commit hashes", s.checked_results, s.checked_hashes)),
    ]
}

const STYLE: &str = "body{font-family:sans-serif;margin:2em auto;max-width:1000px;color:#222}\
h1{font-size:1.6em}h2{font-size:1.2em;margin-top:2em}\
table{border-collapse:collapse}td,th{padding:3px 12px;border-bottom:1px solid #ddd;text-align:left}\
td.n,th.n{text-align:right}.meta{color:#555}.note{color:#444;font-size:.92em}\
svg{max-width:100%;height:auto;display:block}";

/// The table of the run's machine and configuration (and the baseline's beside them).
fn setup_table(report: &ReplayReport, baseline: Option<&ReplayReport>) -> String {
    let mut out = String::from("<table class=\"setup\">\n");
    let head = if baseline.is_some() { "<tr><th></th><th>this run</th><th>baseline</th></tr>\n" } else { "" };
    out.push_str(head);
    let env = |r: &ReplayReport| {
        let e = &r.environment;
        vec![
            ("CPU", e.cpu_model.clone()),
            ("Cores", e.cores.to_string()),
            ("Memory", mib(e.memory_bytes as f64)),
            ("Kernel", e.kernel.clone()),
            ("Git revision", e.git_revision.clone()),
            ("arbor-bench", e.version.clone()),
        ]
    };
    let config = |r: &ReplayReport| r.config.iter().map(|(k, v)| (k.clone(), v.clone())).collect::<Vec<_>>();
    let mut rows: Vec<(String, String)> = env(report).into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    rows.extend(config(report).into_iter().map(|(k, v)| (format!("config: {k}"), v)));
    let base_rows: Option<Vec<(String, String)>> = baseline.map(|b| {
        let mut r: Vec<(String, String)> = env(b).into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        r.extend(config(b).into_iter().map(|(k, v)| (format!("config: {k}"), v)));
        r
    });
    for (name, value) in &rows {
        let _ = write!(out, "<tr><th>{}</th><td>{}</td>", escape(name), escape(value));
        if let Some(base) = &base_rows {
            let other = base.iter().find(|(k, _)| k == name).map_or("", |(_, v)| v.as_str());
            let _ = write!(out, "<td>{}</td>", escape(other));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

/// The key figures beside the baseline's, with their ratios.
fn baseline_table(report: &ReplayReport, baseline: &ReplayReport) -> String {
    let mut out = String::from(
        "<table class=\"baseline\">\n<tr><th>figure</th><th class=\"n\">this run</th>\
         <th class=\"n\">baseline</th><th class=\"n\">ratio</th></tr>\n",
    );
    for c in super::baseline::compare(report, baseline) {
        let _ = writeln!(
            out,
            "<tr><th>{}</th><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            escape(c.name),
            short_number(c.this),
            short_number(c.baseline),
            escape(&c.describe_ratio())
        );
    }
    out.push_str("</table>\n");
    out
}

/// The whole page.
pub fn page(title: &str, report: &ReplayReport, baseline: Option<&ReplayReport>, sections: &[Section]) -> String {
    let mut out = String::new();
    let t = escape(title);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{t}</title>\n\
         <style>{STYLE}</style>\n</head>\n<body>\n<h1>{t}</h1>\n"
    );
    let _ = writeln!(
        out,
        "<p class=\"meta\">trace <code>{}</code> &middot; store <code>{}</code> &middot; durability {} &middot; \
         arbor-bench {}</p>",
        escape(&report.trace),
        escape(&report.store),
        escape(&report.durability),
        env!("CARGO_PKG_VERSION")
    );
    out.push_str("<h2>Summary</h2>\n<table class=\"summary\">\n");
    for (name, value) in summary_rows(report) {
        let _ = writeln!(out, "<tr><th>{name}</th><td>{}</td></tr>", escape(&value));
    }
    out.push_str("</table>\n");
    if let Some(base) = baseline {
        let _ = writeln!(
            out,
            "<h2>Against the baseline</h2>\n<p class=\"note\">The baseline: trace <code>{}</code>, {} blocks. \
             Ratios are this run's figure over the baseline's.</p>",
            escape(&base.trace),
            base.summary.blocks
        );
        out.push_str(&baseline_table(report, base));
    }
    out.push_str("<h2>Machine and configuration</h2>\n");
    out.push_str(&setup_table(report, baseline));
    for s in sections {
        let _ = write!(out, "<h2>{}</h2>\n<p class=\"note\">{}</p>\n", escape(&s.title), escape(&s.note));
        out.push_str(strip_xml_declaration(&s.body));
        out.push('\n');
    }
    out.push_str("</body>\n</html>\n");
    out
}

/// An SVG document without its `<?xml …?>` line, which has no place inside HTML.
fn strip_xml_declaration(svg: &str) -> &str {
    match svg.strip_prefix("<?xml") {
        Some(rest) => rest.split_once("?>").map_or(svg, |(_, body)| body.trim_start()),
        None => svg,
    }
}

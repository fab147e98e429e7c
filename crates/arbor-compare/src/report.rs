//! The HTML report: a self-contained page (inline SVG, no external assets) in the style of
//! arbor-bench's replay report: the comparison table, block times over levels, the
//! distribution of block times, resident memory, and the notes on how each backend ran.

use std::fmt::Write as _;
use std::path::Path;

use plotters::prelude::*;

use crate::compare::Comparison;
use crate::error::{CompareError, IoContext, Result};
use crate::result::Status;
use crate::table::{num, ratio, COLUMNS};

const SIZE: (u32, u32) = (960, 360);
const COLORS: [RGBColor; 5] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(214, 39, 40),
];
const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#222}\
h1{font-size:1.5em}h2{font-size:1.15em;margin-top:2em;border-bottom:1px solid #ddd}\
table{border-collapse:collapse;font-size:.9em}th,td{padding:.25em .6em;border-bottom:1px solid #eee;text-align:right}\
th:first-child,td:first-child{text-align:left}.meta,.note{color:#555;font-size:.9em}svg{width:100%;height:auto}\
code{font-size:.95em}";

use arbor_bench::report::escape;

fn draw_err(e: impl std::fmt::Display) -> CompareError {
    CompareError::Worker(format!("drawing a chart: {e}"))
}

/// A chart of one line per backend; `log_y` draws log10 of the values.
fn chart(lines: &[(String, Vec<(f64, f64)>)], x_desc: &str, y_desc: &str, log_y: bool) -> Result<String> {
    let tf = |v: f64| if log_y { v.max(1e-3).log10() } else { v };
    let pts = lines.iter().flat_map(|(_, p)| p.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(tf(y));
        y1 = y1.max(tf(y));
    }
    if x0 > x1 {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    if !log_y {
        y0 = 0.0;
    }
    let span = (y1 - y0).max(1e-9);
    let (y0, y1) = (y0 - span * 0.02, y1 + span * 0.35);
    let x1 = if x1 > x0 { x1 } else { x0 + 1.0 };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let mut ctx = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(64)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(draw_err)?;
        let fmt_y = |v: &f64| num(if log_y { 10f64.powf(*v) } else { *v });
        ctx.configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .y_label_formatter(&fmt_y)
            .light_line_style(RGBColor(240, 240, 240))
            .draw()
            .map_err(draw_err)?;
        for (i, (name, p)) in lines.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            ctx.draw_series(LineSeries::new(p.iter().map(|&(x, y)| (x, tf(y))), color.stroke_width(1)))
                .map_err(draw_err)?
                .label(name.as_str())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
        }
        ctx.configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(200, 200, 200))
            .draw()
            .map_err(draw_err)?;
        root.present().map_err(draw_err)?;
    }
    Ok(match svg.strip_prefix("<?xml") {
        Some(rest) => rest.split_once("?>").map_or(svg.clone(), |(_, b)| b.trim_start().to_string()),
        None => svg,
    })
}

/// At most `max` points, keeping the highest of each group (spikes stay visible).
fn downsample(points: Vec<(f64, f64)>, max: usize) -> Vec<(f64, f64)> {
    if points.len() <= max {
        return points;
    }
    let group = points.len().div_ceil(max);
    points.chunks(group).map(|c| c.iter().copied().fold((c[0].0, f64::MIN), |a, p| (a.0, a.1.max(p.1)))).collect()
}

/// Writes the page for `cmp` to `path`.
pub fn write(cmp: &Comparison, path: &Path) -> Result<()> {
    let ok: Vec<_> = cmp.runs.iter().zip(&cmp.figures).filter(|(r, _)| r.status == Status::Ok).collect();
    let base = cmp.arbor().map(|(_, f)| *f);
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>arbor-compare</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>arbor-compare</h1>\n<p class=\"meta\">trace <code>{}</code> &middot; {} initial values &middot; {} &middot; arbor-compare {}</p>\n",
        escape(&cmp.trace),
        cmp.initial_values,
        escape(&cmp.machine),
        env!("CARGO_PKG_VERSION")
    );
    h.push_str("<h2>Summary</h2>\n<p class=\"note\">Block time runs from a block's first operation until its commit is durable. Each figure is followed by its ratio to arbor's. Loading the initial state is timed apart.</p>\n<table>\n<tr><th>backend</th><th>blocks</th>");
    for (c, _) in COLUMNS {
        let _ = write!(h, "<th>{c}</th>");
    }
    h.push_str("<th>mismatches</th></tr>\n");
    for (run, f) in cmp.runs.iter().zip(&cmp.figures) {
        if run.status != Status::Ok {
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td colspan=\"10\">{:?}: {}</td></tr>",
                escape(&run.backend),
                run.status,
                escape(run.reason.as_deref().unwrap_or(""))
            );
            continue;
        }
        let _ = write!(h, "<tr><td>{}</td><td>{}</td>", escape(&run.backend), f.blocks);
        for (_, get) in COLUMNS {
            let _ = write!(h, "<td>{} <small>{}</small></td>", num(get(f)), ratio(get(f), base.as_ref().map(get)));
        }
        let _ = writeln!(h, "<td>{}</td></tr>", run.mismatches);
    }
    h.push_str("</table>\n");
    let series = |f: fn(&crate::result::BlockTime) -> f64| -> Vec<(String, Vec<(f64, f64)>)> {
        ok.iter()
            .map(|(r, _)| {
                let p = r.blocks.iter().map(|b| (b.level as f64, f(b))).collect();
                (r.backend.clone(), downsample(p, 2_000))
            })
            .collect()
    };
    let times = series(|b| b.time_ns as f64 / 1e6);
    let dist: Vec<(String, Vec<(f64, f64)>)> = ok
        .iter()
        .map(|(r, _)| {
            let mut t: Vec<f64> = r.blocks.iter().map(|b| b.time_ns as f64 / 1e6).collect();
            t.sort_by(f64::total_cmp);
            let n = t.len().max(1) as f64;
            let p = t.iter().enumerate().map(|(i, v)| (100.0 * (i + 1) as f64 / n, *v)).collect();
            (r.backend.clone(), downsample(p, 2_000))
        })
        .collect();
    let rss = series(|b| b.rss as f64 / 1048576.0);
    let charts = [
        (
            "Block time",
            "Every block, log scale (groups of blocks keep their slowest when there are many).",
            chart(&times, "block level", "ms", true)?,
        ),
        (
            "Distribution of block times",
            "Block time at each percentile, log scale.",
            chart(&dist, "percentile", "ms", true)?,
        ),
        (
            "Resident memory",
            "Resident set after each block, MiB (each backend in its own process).",
            chart(&rss, "block level", "MiB", false)?,
        ),
    ];
    for (title, note, svg) in charts {
        let _ = write!(h, "<h2>{title}</h2>\n<p class=\"note\">{note}</p>\n{svg}\n");
    }
    h.push_str("<h2>How each backend ran</h2>\n<table>\n");
    for (run, _) in &ok {
        let mut notes = run.notes.join("; ");
        if !run.peak_rss_reset {
            notes.push_str(" (peak RSS includes the load)");
        }
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td style=\"text-align:left\">{}<br>durability: {}<br>settings: {}<br>reads: {} checked, {} mismatches, {} unchecked; CPU {:.1} s user + {:.1} s sys; {}</td></tr>",
            escape(&run.backend),
            escape(&run.version),
            escape(&run.durability),
            escape(&run.settings),
            run.checked_reads,
            run.mismatches,
            run.unchecked_reads,
            run.cpu_user,
            run.cpu_sys,
            escape(&notes)
        );
    }
    h.push_str("</table>\n");
    if let Some(s) = &cmp.flatten {
        let _ = write!(
            h,
            "<h2>Translation for the peers</h2>\n<p class=\"note\">Paths become BLAKE2b-256 keys of the steps joined with '/'; see docs/COMPARE.md.</p>\n<table>\n\
             <tr><td>find (gets, checked)</td><td>{}</td></tr><tr><td>mem (checked)</td><td>{}</td></tr>\
             <tr><td>mem_tree / find_tree on values or absent paths (checked)</td><td>{}</td></tr>\
             <tr><td>mem_tree / find_tree on directories (looked up, not checkable)</td><td>{}</td></tr>\
             <tr><td>list / length / fold skipped</td><td>{} / {} / {}</td></tr>\
             <tr><td>add / add_tree (leaves) / remove</td><td>{} / {} ({}) / {}</td></tr>\
             <tr><td>flat puts / deletes</td><td>{} / {}</td></tr>\
             <tr><td>deletes below removed or replaced paths / of ancestors</td><td>{} / {}</td></tr>\
             <tr><td>index disagreements with the trace</td><td>{}</td></tr>\n</table>\n",
            s.finds,
            s.mems,
            s.tree_tests_answered,
            s.tree_tests_on_directories,
            s.lists_skipped,
            s.lengths_skipped,
            s.folds_skipped,
            s.adds,
            s.add_trees,
            s.add_tree_leaves,
            s.removes,
            s.flat_puts,
            s.flat_deletes,
            s.subtree_deletes,
            s.ancestor_deletes,
            s.index_disagreements
        );
    }
    h.push_str("</body>\n</html>\n");
    std::fs::write(path, h).ctx(|| format!("writing {}", path.display()))
}

//! The HTML report: settings, the fitted coefficients beside the IO benchmarks', block 4,043,830
//! priced both ways, and for each model two scatter plots with the fitted line.
//!
//! With two regressors, a plot against one of them shows the other's effect as noise, so each
//! plot is a partial-residual (component + residual) plot: against path length it shows
//! `time − b·nbytes`, against value size `time − a·path_length`, and the fitted line is then
//! exactly `a·x + c` (or `b·x + c`). Points that fetched bytes from storage are drawn apart.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use plotters::prelude::*;

use super::fit::{quantile, Fit};
use super::report::{mib, num};
use super::{IobenchReport, Model};
use crate::report::escape;

const SIZE: (u32, u32) = (640, 380);
const HIT: RGBColor = RGBColor(31, 119, 180);
const MISS: RGBColor = RGBColor(214, 39, 40);
const LINE: RGBColor = RGBColor(40, 40, 40);

fn draw_err(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("drawing a chart: {e}"))
}

/// One partial-residual scatter plot.
struct Scatter<'a> {
    x_desc: &'a str,
    /// Points `(x, y µs, fetched from storage)`.
    points: Vec<(f64, f64, bool)>,
    /// The fitted line's slope and intercept, per x unit and µs.
    slope: f64,
    intercept: f64,
    /// x drawn as log10.
    log_x: bool,
}

fn scatter(s: &Scatter<'_>) -> io::Result<String> {
    let tx = |x: f64| if s.log_x { x.max(1.0).log10() } else { x };
    let xs: Vec<f64> = s.points.iter().map(|p| tx(p.0)).collect();
    let mut ys: Vec<f64> = s.points.iter().map(|p| p.1).collect();
    ys.sort_by(f64::total_cmp);
    let (x0, x1) = xs.iter().fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let (x0, x1) = if x0 > x1 { (0.0, 1.0) } else { (x0 - 0.3, x1 + 0.3) };
    // Clip at 1.5x the 95th percentile so that the stalls do not flatten the rest.
    let top = quantile(&ys, 0.95).max(s.intercept).max(1e-3) * 1.5;
    let bottom = quantile(&ys, 0.0).min(0.0);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let mut ctx = ChartBuilder::on(&root)
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, bottom..top)
            .map_err(draw_err)?;
        // Label whole numbers only (whole powers of ten on the log axis).
        let x_fmt = |v: &f64| match ((v - v.round()).abs() < 1e-6, s.log_x) {
            (false, _) => String::new(),
            (true, true) => num(10f64.powf(v.round())).trim_end_matches(".00").to_string(),
            (true, false) => format!("{v:.0}"),
        };
        let y_fmt = |v: &f64| num(*v);
        ctx.configure_mesh()
            .x_desc(s.x_desc)
            .y_desc("µs")
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .x_labels(24)
            .max_light_lines(2)
            .draw()
            .map_err(draw_err)?;
        for (miss, color, label) in [(false, HIT, "served from the page cache"), (true, MISS, "fetched from storage")] {
            let pts: Vec<(f64, f64)> =
                s.points.iter().filter(|p| p.2 == miss).map(|p| (tx(p.0), p.1.min(top))).collect();
            let style = color.mix(0.6).filled();
            ctx.draw_series(pts.iter().map(|&p| Circle::new(p, 2, style)))
                .map_err(draw_err)?
                .label(label)
                .legend(move |(lx, ly)| Circle::new((lx + 10, ly), 3, style));
        }
        let line: Vec<(f64, f64)> = (0..=100)
            .map(|i| {
                let x = x0 + (x1 - x0) * i as f64 / 100.0;
                let raw = if s.log_x { 10f64.powf(x) } else { x };
                (x, (s.intercept + s.slope * raw).clamp(bottom, top))
            })
            .collect();
        ctx.draw_series(LineSeries::new(line, LINE.stroke_width(2)))
            .map_err(draw_err)?
            .label("fit")
            .legend(|(lx, ly)| PathElement::new(vec![(lx, ly), (lx + 20, ly)], LINE.stroke_width(2)));
        ctx.configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .draw()
            .map_err(draw_err)?;
        root.present().map_err(draw_err)?;
    }
    Ok(svg)
}

fn charts(m: &Model, f: &Fit) -> io::Result<[String; 2]> {
    let us = |ns: f64| ns / 1000.0;
    let by_len = Scatter {
        x_desc: "path length (directory depth)",
        points: m
            .samples
            .iter()
            .map(|s| (s.path_length as f64, us(s.ns as f64 - f.b * s.nbytes as f64), s.disk_read_bytes > 0))
            .collect(),
        slope: us(f.a),
        intercept: us(f.c),
        log_x: false,
    };
    let by_bytes = Scatter {
        x_desc: "value bytes (log scale)",
        points: m
            .samples
            .iter()
            .map(|s| (s.nbytes as f64, us(s.ns as f64 - f.a * s.path_length as f64), s.disk_read_bytes > 0))
            .collect(),
        slope: us(f.b),
        intercept: us(f.c),
        log_x: true,
    };
    Ok([scatter(&by_len)?, scatter(&by_bytes)?])
}

fn table(rows: &[Vec<String>], head: &[&str]) -> String {
    let mut t = String::from("<table><tr>");
    for h in head {
        let _ = write!(t, "<th>{}</th>", escape(h));
    }
    t.push_str("</tr>");
    for r in rows {
        t.push_str("<tr>");
        for c in r {
            let _ = write!(t, "<td>{}</td>", escape(c));
        }
        t.push_str("</tr>");
    }
    t.push_str("</table>");
    t
}

fn fit_rows(r: &IobenchReport) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let fits = |m: &'_ Model| [("this run", m.fit.clone()), ("this run, c = 0", m.fit_through_origin.clone())];
    for m in [&r.read, &r.write] {
        for (label, f) in fits(m) {
            let Some(f) = f else { continue };
            let q = &f.residuals;
            rows.push(vec![
                format!("{} ({label})", m.name),
                format!("{} ± {}", num(f.a), num(f.std_err[0])),
                format!("{} ± {}", num(f.b), num(f.std_err[1])),
                if label.ends_with("c = 0") {
                    "0 (fixed)".into()
                } else {
                    format!("{} ± {}", num(f.c), num(f.std_err[2]))
                },
                format!("{:.3}", f.r2),
                format!("{} / {} / {}", num(q.p5), num(q.p50), num(q.p95)),
                f.n.to_string(),
            ]);
        }
    }
    for s in &r.io_benchmarks {
        let row = [num(s.a), num(s.b), num(s.c), "-".into(), "-".into(), "-".into()];
        rows.push(std::iter::once(format!("{} (the IO benchmarks, {})", s.model, s.cache)).chain(row).collect());
    }
    rows
}

/// The page [`write_html`] writes.
pub fn html_string(r: &IobenchReport) -> io::Result<String> {
    let mut p = String::from("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>arbor iobench</title><style>");
    p.push_str(
        "body{font-family:sans-serif;max-width:1320px;margin:1em auto;padding:0 1em;color:#222}\
         table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}\
         td:first-child,th:first-child,.text td{text-align:left}.charts{display:flex;flex-wrap:wrap;gap:8px}\
         .charts svg{width:640px;max-width:100%;height:auto}p.note{color:#555;max-width:1100px}",
    );
    p.push_str("</style></head><body><h1>arbor iobench: storage gas cost model</h1>");
    p.push_str(
        "<p class=\"note\">The method and the figures compared with are those of DaiLambda's \
         &ldquo;New IO benchmarks&rdquo; (September 2023), called the IO benchmarks below.</p>",
    );
    let m = &r.memory_after_warmup;
    let settings = vec![
        vec!["mode".into(), r.options.mode.clone()],
        vec![
            "context".into(),
            format!("{} values + {} blocks, log {}", r.grow.values, r.grow.blocks, mib(r.grow.log_bytes)),
        ],
        vec![
            "page cache limit".into(),
            format!("{} (asked for {})", r.limit.method, mib(r.limit.requested_cache_bytes)),
        ],
        vec!["left for the page cache".into(), mib(m.left_for_cache_bytes)],
        vec!["engine cache".into(), mib(r.options.engine_cache_bytes)],
        vec!["store cached after eviction".into(), mib(r.resident_after_evict)],
        vec![
            "warm-up".into(),
            format!(
                "{} reads, {:.1} s, {} cached, stopped: {}",
                r.warmup.reads,
                r.warmup.seconds,
                mib(r.warmup.resident_after),
                r.warmup.stop
            ),
        ],
        vec!["run time".into(), format!("{:.1} s", r.seconds)],
    ];
    p.push_str(&table(&settings, &["setting", "value"]));
    for a in &r.limit.attempts {
        let _ = write!(p, "<p class=\"note\">Tried: {}</p>", escape(a));
    }
    p.push_str("<h2>Fitted models: cost = a·path_length + b·nbytes + c</h2>");
    p.push_str("<p class=\"note\">Nanoseconds, which are milligas (1 gas = 1 µs). ± one standard error; residuals p5 / p50 / p95 in ns.</p>");
    p.push_str(&table(&fit_rows(r), &["model", "a (per level)", "b (per byte)", "c", "R²", "residuals", "n"]));
    let blocks: Vec<Vec<String>> = r
        .block_4043830
        .iter()
        .map(|b| {
            vec![
                format!("{}s: {}, total path length {}, {} bytes", b.model, b.count, b.path_length, b.nbytes),
                b.gas_this_run.map_or("-".into(), num),
                num(b.gas_io_benchmarks_coefficients),
                num(b.gas_io_benchmarks_reported),
                num(b.gas_nairobi),
            ]
        })
        .collect();
    p.push_str("<h2>Block 4,043,830's storage accesses, in gas</h2>");
    p.push_str(&table(
        &blocks,
        &[
            "accesses",
            "this run",
            "by the IO benchmarks' coefficients (8 GB)",
            "as the IO benchmarks report",
            "Nairobi",
        ],
    ));
    for model in [&r.read, &r.write] {
        let Some(f) = &model.fit else { continue };
        let _ = write!(
            p,
            "<h2>{}: {} samples, p50 {} µs, p99 {} µs</h2><p class=\"note\">Partial residuals: left, time − b·nbytes \
             against path length; right, time − a·path_length against value size (log scale). The line is the \
             fit; points above 1.5x the 95th percentile are drawn at the top.</p><div class=\"charts\">",
            escape(&model.name),
            model.samples.len(),
            num(model.p50_ns / 1000.0),
            num(model.p99_ns / 1000.0)
        );
        for svg in charts(model, f)? {
            p.push_str(&svg);
        }
        p.push_str("</div>");
        let rows: Vec<Vec<String>> = model
            .by_path_length
            .iter()
            .map(|l| {
                let pct = format!("{:.0}%", l.miss_share * 100.0);
                vec![l.path_length.to_string(), l.n.to_string(), num(l.p50_ns / 1e3), num(l.mean_ns / 1e3), pct]
            })
            .collect();
        p.push_str(&table(&rows, &["path length", "n", "p50 µs", "mean µs", "fetched from storage"]));
    }
    p.push_str("<h2>Definitions</h2>");
    let defs: Vec<Vec<String>> = r.definitions.iter().map(|(k, v)| vec![k.clone(), v.clone()]).collect();
    p.push_str(&table(&defs, &["term", "meaning"]).replacen("<table>", "<table class=\"text\">", 1));
    p.push_str("</body></html>\n");
    Ok(p)
}

/// Writes the HTML report to `out`.
pub fn write_html(report: &IobenchReport, out: &Path) -> io::Result<()> {
    let page = html_string(report)?;
    let mut f = BufWriter::new(File::create(out)?);
    f.write_all(page.as_bytes())?;
    f.flush()
}

//! The report's charts, drawn with plotters' SVG backend into strings. Text is emitted as SVG
//! `<text>` (plotters without its `ttf` feature only estimates text sizes), so no font files
//! are needed to draw and the browser renders the labels.

use std::io;
use std::ops::Range;

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::series::Bin;

/// Size of every chart, in pixels (the page scales them to its width).
const SIZE: (u32, u32) = (960, 360);

/// Share of a line chart's height added above the data for the legend.
const LEGEND_ROOM: f64 = 0.5;

/// Palette of the series, in order.
pub const COLORS: [RGBColor; 4] =
    [RGBColor(31, 119, 180), RGBColor(255, 127, 14), RGBColor(44, 160, 44), RGBColor(148, 103, 189)];
/// Colours of the two kinds of marks.
const MARK_COLORS: [RGBColor; 2] = [RGBColor(214, 39, 40), RGBColor(40, 40, 40)];

fn draw_err(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("drawing a chart: {e}"))
}

/// One named line.
pub struct Line {
    /// Legend text.
    pub name: String,
    /// Colour.
    pub color: RGBColor,
    /// Points `(x, y)`, in x order.
    pub points: Vec<(f64, f64)>,
}

/// Points singled out on a chart.
pub struct Marks {
    /// Legend text.
    pub label: String,
    /// Circles (`false`) or triangles (`true`).
    pub triangles: bool,
    /// The points.
    pub points: Vec<(f64, f64)>,
}

/// A chart of lines over block levels, with optional marked points.
pub struct LineChart<'a> {
    /// Text of the x axis.
    pub x_desc: &'a str,
    /// Text of the y axis.
    pub y_desc: &'a str,
    /// Log-scale y axis (values at or below zero are drawn at the bottom).
    pub log_y: bool,
    /// The lines.
    pub lines: Vec<Line>,
    /// Points to mark, drawn over the lines.
    pub marks: Vec<Marks>,
    /// Formats y-axis labels.
    pub y_fmt: fn(f64) -> String,
}

fn span(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

/// A range that is never empty.
fn widen(lo: f64, hi: f64) -> Range<f64> {
    if hi > lo {
        lo..hi
    } else {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        (lo - pad)..(hi + pad)
    }
}

/// Draws `chart` as an SVG document.
pub fn line_chart(chart: &LineChart<'_>) -> io::Result<String> {
    let marked = chart.marks.iter().flat_map(|m| m.points.iter());
    let all = || chart.lines.iter().flat_map(|l| l.points.iter()).chain(marked.clone());
    let (x0, x1) = span(all().map(|p| p.0)).unwrap_or((0.0, 1.0));
    let (_, y1) = span(all().map(|p| p.1)).unwrap_or((0.0, 1.0));
    // A log scale is drawn as a linear one over log10 of the values, labelled with 10^y.
    let floor = span(all().map(|p| p.1).filter(|v| *v > 0.0)).map_or(1e-3, |(lo, _)| lo / 1.5);
    let to_y = |v: f64| if chart.log_y { v.max(floor).log10() } else { v };
    let y = if chart.log_y { widen(to_y(floor), to_y(y1.max(floor))) } else { widen(0.0, y1) };
    // Headroom for the legend, which sits in the upper left corner.
    let y = y.start..y.end + (y.end - y.start) * LEGEND_ROOM;
    let y_fmt = |v: &f64| (chart.y_fmt)(if chart.log_y { 10f64.powf(*v) } else { *v });
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let mut ctx = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(42)
            .y_label_area_size(78)
            .build_cartesian_2d(widen(x0, x1), y)
            .map_err(draw_err)?;
        let x_fmt = |v: &f64| format!("{v:.0}");
        ctx.configure_mesh()
            .x_desc(chart.x_desc)
            .y_desc(chart.y_desc)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .max_light_lines(2)
            .draw()
            .map_err(draw_err)?;
        for line in &chart.lines {
            let color = line.color;
            let points = line.points.iter().map(|&(px, py)| (px, to_y(py)));
            ctx.draw_series(LineSeries::new(points, color.stroke_width(1)))
                .map_err(draw_err)?
                .label(line.name.as_str())
                .legend(move |(lx, ly)| PathElement::new(vec![(lx, ly), (lx + 20, ly)], color.stroke_width(2)));
        }
        for (i, m) in chart.marks.iter().filter(|m| !m.points.is_empty()).enumerate() {
            let style = MARK_COLORS[i % MARK_COLORS.len()].stroke_width(2);
            let points = m.points.iter().map(|&(px, py)| (px, to_y(py)));
            let drawn = if m.triangles {
                ctx.draw_series(points.map(|p| TriangleMarker::new(p, 6, style)))
                    .map_err(draw_err)?
                    .legend(move |(lx, ly)| TriangleMarker::new((lx + 10, ly), 6, style))
            } else {
                ctx.draw_series(points.map(|p| Circle::new(p, 5, style)))
                    .map_err(draw_err)?
                    .legend(move |(lx, ly)| Circle::new((lx + 10, ly), 5, style))
            };
            drawn.label(m.label.as_str());
        }
        legend(&mut ctx, SeriesLabelPosition::UpperLeft)?;
        root.present().map_err(draw_err)?;
    }
    Ok(svg)
}

type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

fn legend<'a, 'b: 'a>(ctx: &mut Chart<'a, 'b>, position: SeriesLabelPosition) -> io::Result<()> {
    ctx.configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .draw()
        .map_err(draw_err)
}

/// Draws `bins` as a histogram over a log-scale x axis, with vertical lines at `markers`
/// (legend text, x).
pub fn histogram(bins: &[Bin], x_desc: &str, markers: &[(String, f64)]) -> io::Result<String> {
    let lo = bins.first().map_or(0.1, |b| b.lo).log10();
    let hi = bins.last().map_or(1.0, |b| b.hi).log10();
    let top = bins.iter().map(|b| b.count).max().unwrap_or(1).max(1) as f64 * 1.1;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let mut ctx = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(42)
            .y_label_area_size(78)
            .build_cartesian_2d(widen(lo, hi), 0.0..top)
            .map_err(draw_err)?;
        let x_fmt = |v: &f64| super::html::short_number(10f64.powf(*v));
        let y_fmt = |v: &f64| format!("{v:.0}");
        ctx.configure_mesh()
            .x_desc(x_desc)
            .y_desc("blocks")
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .max_light_lines(2)
            .draw()
            .map_err(draw_err)?;
        let fill = COLORS[0].mix(0.7).filled();
        let bars = bins
            .iter()
            .filter(|b| b.count > 0)
            .map(|b| Rectangle::new([(b.lo.log10(), 0.0), (b.hi.log10(), b.count as f64)], fill));
        ctx.draw_series(bars).map_err(draw_err)?;
        for (i, (name, at)) in markers.iter().enumerate() {
            let style = COLORS[(i + 1) % COLORS.len()].stroke_width(2);
            let x = at.log10();
            ctx.draw_series(std::iter::once(PathElement::new(vec![(x, 0.0), (x, top)], style)))
                .map_err(draw_err)?
                .label(name.as_str())
                .legend(move |(lx, ly)| PathElement::new(vec![(lx, ly), (lx + 20, ly)], style));
        }
        legend(&mut ctx, SeriesLabelPosition::UpperRight)?;
        root.present().map_err(draw_err)?;
    }
    Ok(svg)
}

//! The report's charts, drawn with plotters' SVG backend into strings. Text is emitted as SVG
//! `<text>` (plotters without its `ttf` feature only estimates text sizes), so no font files
//! are needed to draw and the browser renders the labels.

use std::io;
use std::ops::Range;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::series::Bin;
use super::ticks;

/// Size of every chart, in pixels (the page scales them to its width).
const SIZE: (u32, u32) = (960, 360);

/// Share of a line chart's height added above the data for the legend.
const LEGEND_ROOM: f64 = 0.5;

/// Palette of the series, in order.
pub const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(23, 190, 207),
];
/// How much of its colour a baseline's line keeps (the rest is white).
const FADED: f64 = 0.4;
/// Colours of the two kinds of marks.
const MARK_COLORS: [RGBColor; 2] = [RGBColor(214, 39, 40), RGBColor(40, 40, 40)];

fn draw_err(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("drawing a chart: {e}"))
}

/// One named line.
#[derive(Clone)]
pub struct Line {
    /// Legend text.
    pub name: String,
    /// Colour.
    pub color: RGBColor,
    /// Points `(x, y)`, in x order.
    pub points: Vec<(f64, f64)>,
    /// Drawn pale: a baseline's line beside this run's.
    pub faded: bool,
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
    /// Log-scale x axis (all x values must be positive).
    pub log_x: bool,
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

/// A linear axis whose ticks are given (plotters picks its own otherwise, which on an axis of
/// log10 values are not round numbers).
struct Ticked {
    inner: RangedCoordf64,
    ticks: Vec<f64>,
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        // Only the bold grid lines: light ones between them would not fall on round values.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.inner.range()
    }
}

/// An axis from `range` (log10 of the values when `log`), with ticks at round values.
fn axis(range: Range<f64>, log: bool) -> Ticked {
    let ticks = if log { ticks::log(range.start, range.end) } else { ticks::linear(range.start, range.end) };
    Ticked { inner: range.into(), ticks }
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
    let to_x = |v: f64| if chart.log_x { v.max(f64::MIN_POSITIVE).log10() } else { v };
    let y = if chart.log_y { widen(to_y(floor), to_y(y1.max(floor))) } else { widen(0.0, y1) };
    // Headroom for the legend, which sits in the upper left corner.
    let y_top = y.end + (y.end - y.start) * LEGEND_ROOM;
    let y_axis = axis(y.start..y_top, chart.log_y);
    let x_axis = axis(widen(to_x(x0), to_x(x1)), chart.log_x);
    let y_fmt = |v: &f64| (chart.y_fmt)(if chart.log_y { 10f64.powf(*v) } else { *v });
    let x_fmt = |v: &f64| if chart.log_x { ticks::label(10f64.powf(*v)) } else { ticks::label(*v) };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let mut ctx = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(42)
            .y_label_area_size(78)
            .build_cartesian_2d(x_axis, y_axis)
            .map_err(draw_err)?;
        ctx.configure_mesh()
            .x_desc(chart.x_desc)
            .y_desc(chart.y_desc)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .draw()
            .map_err(draw_err)?;
        for line in &chart.lines {
            let color = if line.faded { line.color.mix(FADED) } else { line.color.mix(1.0) };
            let points = line.points.iter().map(|&(px, py)| (to_x(px), to_y(py)));
            ctx.draw_series(LineSeries::new(points, color.stroke_width(1)))
                .map_err(draw_err)?
                .label(line.name.as_str())
                .legend(move |(lx, ly)| PathElement::new(vec![(lx, ly), (lx + 20, ly)], color.stroke_width(2)));
        }
        for (i, m) in chart.marks.iter().filter(|m| !m.points.is_empty()).enumerate() {
            let style = MARK_COLORS[i % MARK_COLORS.len()].stroke_width(2);
            let points = m.points.iter().map(|&(px, py)| (to_x(px), to_y(py)));
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

type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<Ticked, Ticked>>;

fn legend<'a, 'b: 'a>(ctx: &mut Chart<'a, 'b>, position: SeriesLabelPosition) -> io::Result<()> {
    ctx.configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .draw()
        .map_err(draw_err)
}

/// A count axis from 0 to `top`: round ticks that are whole numbers.
fn count_axis(top: f64) -> Ticked {
    let mut a = axis(0.0..top, false);
    a.ticks.retain(|t| t.fract() == 0.0);
    a
}

/// Draws `bins` as a histogram over a log-scale x axis, with vertical lines at `markers`
/// (legend text, x) and, when given, a baseline's bins as a pale outline.
pub fn histogram(
    bins: &[Bin],
    x_desc: &str,
    markers: &[(String, f64)],
    baseline: Option<&[Bin]>,
) -> io::Result<String> {
    let all = || bins.iter().chain(baseline.unwrap_or_default());
    let lo = all().map(|b| b.lo).fold(f64::INFINITY, f64::min);
    let hi = all().map(|b| b.hi).fold(0.0, f64::max);
    let (lo, hi) = if lo.is_finite() && hi > lo { (lo.log10(), hi.log10()) } else { (-1.0, 0.0) };
    let top = all().map(|b| b.count).max().unwrap_or(1).max(1) as f64 * 1.1;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        let mut ctx = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(42)
            .y_label_area_size(78)
            .build_cartesian_2d(axis(widen(lo, hi), true), count_axis(top))
            .map_err(draw_err)?;
        let x_fmt = |v: &f64| ticks::label(10f64.powf(*v));
        let y_fmt = |v: &f64| ticks::label(*v);
        ctx.configure_mesh()
            .x_desc(x_desc)
            .y_desc("blocks")
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .draw()
            .map_err(draw_err)?;
        let fill = COLORS[0].mix(0.7).filled();
        let bars = bins
            .iter()
            .filter(|b| b.count > 0)
            .map(|b| Rectangle::new([(b.lo.log10(), 0.0), (b.hi.log10(), b.count as f64)], fill));
        ctx.draw_series(bars)
            .map_err(draw_err)?
            .label("this run")
            .legend(move |(lx, ly)| Rectangle::new([(lx, ly - 5), (lx + 20, ly + 5)], fill));
        if let Some(base) = baseline {
            let style = BLACK.mix(FADED).stroke_width(2);
            let outline = base.iter().flat_map(|b| {
                let h = b.count as f64;
                [(b.lo.log10(), h), (b.hi.log10(), h)]
            });
            ctx.draw_series(LineSeries::new(outline, style))
                .map_err(draw_err)?
                .label("baseline")
                .legend(move |(lx, ly)| PathElement::new(vec![(lx, ly), (lx + 20, ly)], style));
        }
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

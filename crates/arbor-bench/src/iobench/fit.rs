//! Least squares for the cost model `cost = a·path_length + b·nbytes + c`.
//!
//! The normal equations `(XᵀX) β = Xᵀy` (3x3, or 2x2 without the intercept) are solved by
//! Gauss-Jordan elimination with partial pivoting after scaling each column of `X` to unit
//! norm, which keeps them well conditioned whatever the units (path lengths of ~10, byte
//! counts of ~10⁴). A regressor that does not vary (all samples at one path length, say), or
//! that is collinear with the others, is left out: its coefficient is 0 and the fit says so.

use serde::Serialize;

/// One observation: the two regressors and the measured cost.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Path length (see [`super::sample::path_length`]).
    pub path_length: f64,
    /// Bytes of the value read or written.
    pub nbytes: f64,
    /// Measured cost (nanoseconds in the benchmark).
    pub cost: f64,
}

/// Quantiles of the residuals `measured − predicted`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Quantiles {
    /// Smallest residual.
    pub min: f64,
    /// 5th percentile.
    pub p5: f64,
    /// 25th percentile.
    pub p25: f64,
    /// Median.
    pub p50: f64,
    /// 75th percentile.
    pub p75: f64,
    /// 95th percentile.
    pub p95: f64,
    /// Largest residual.
    pub max: f64,
}

/// A fitted model `cost = a·path_length + b·nbytes + c` and how well it fits.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Fit {
    /// Observations used.
    pub n: usize,
    /// Cost per unit of path length.
    pub a: f64,
    /// Cost per byte.
    pub b: f64,
    /// Intercept (0 in a fit through the origin).
    pub c: f64,
    /// Standard errors of `a`, `b` and `c` (0 for a coefficient left out; NaN when there are
    /// no more observations than coefficients).
    pub std_err: [f64; 3],
    /// Coefficient of determination, 1 − SSres / SStot with SStot about the mean (so a fit
    /// through the origin can score below 0); 0 when the costs do not vary.
    pub r2: f64,
    /// Root mean square of the residuals.
    pub rmse: f64,
    /// Residual quantiles.
    pub residuals: Quantiles,
    /// Regressors left out because they did not vary or were collinear.
    pub dropped: Vec<&'static str>,
}

impl Fit {
    /// The model's prediction for one observation.
    pub fn predict(&self, path_length: f64, nbytes: f64) -> f64 {
        self.a * path_length + self.b * nbytes + self.c
    }
}

/// The `q`-quantile (0..=1) of sorted values, interpolated linearly; NaN when empty.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

fn quantiles(mut r: Vec<f64>) -> Quantiles {
    r.sort_by(f64::total_cmp);
    let q = |p| quantile(&r, p);
    Quantiles { min: q(0.0), p5: q(0.05), p25: q(0.25), p50: q(0.5), p75: q(0.75), p95: q(0.95), max: q(1.0) }
}

/// Column `j` of the design matrix: 0 path length, 1 bytes, 2 the constant 1.
fn x(p: &Point, j: usize) -> f64 {
    match j {
        0 => p.path_length,
        1 => p.nbytes,
        _ => 1.0,
    }
}

const NAMES: [&str; 3] = ["path_length", "nbytes", "intercept"];

/// Fits `cost = a·path_length + b·nbytes + c` by ordinary least squares; `None` when empty.
pub fn fit(points: &[Point]) -> Option<Fit> {
    fit_columns(points, true)
}

/// Fits `cost = a·path_length + b·nbytes` (no intercept, the form of the IO benchmarks' results).
pub fn fit_through_origin(points: &[Point]) -> Option<Fit> {
    fit_columns(points, false)
}

fn fit_columns(points: &[Point], intercept: bool) -> Option<Fit> {
    if points.is_empty() {
        return None;
    }
    let n = points.len() as f64;
    let mean = |j: usize| points.iter().map(|p| x(p, j)).sum::<f64>() / n;
    // A regressor varies if its spread is not negligible next to its size.
    let varies = |j: usize| {
        let m = mean(j);
        let sd = (points.iter().map(|p| (x(p, j) - m).powi(2)).sum::<f64>() / n).sqrt();
        let rms = (points.iter().map(|p| x(p, j).powi(2)).sum::<f64>() / n).sqrt();
        if intercept {
            sd > 1e-9 * rms.max(1e-300)
        } else {
            rms > 0.0
        }
    };
    let mut cols: Vec<usize> = (0..2).filter(|&j| varies(j)).collect();
    if intercept {
        cols.push(2);
    }
    let (coef, inv) = loop {
        if cols.is_empty() {
            break (Vec::new(), Vec::new());
        }
        match solve(points, &cols) {
            Some(s) => break s,
            // Collinear: leave out the last regressor (bytes before path length) and retry.
            None => {
                let drop = cols.iter().rposition(|&j| j < 2)?;
                cols.remove(drop);
            }
        }
    };
    let mut beta = [0.0f64; 3];
    for (k, &j) in cols.iter().enumerate() {
        beta[j] = coef[k];
    }
    let mut f = Fit { n: points.len(), a: beta[0], b: beta[1], c: beta[2], ..Fit::default() };
    f.dropped = (0..2).filter(|j| !cols.contains(j)).map(|j| NAMES[j]).collect();
    let residuals: Vec<f64> = points.iter().map(|p| p.cost - f.predict(p.path_length, p.nbytes)).collect();
    let ss_res: f64 = residuals.iter().map(|r| r * r).sum();
    let my = points.iter().map(|p| p.cost).sum::<f64>() / n;
    let ss_tot: f64 = points.iter().map(|p| (p.cost - my).powi(2)).sum();
    f.r2 = if ss_tot > 0.0 { 1.0 - ss_res / ss_tot } else { 0.0 };
    f.rmse = (ss_res / n).sqrt();
    let dof = points.len() as f64 - cols.len() as f64;
    for (k, &j) in cols.iter().enumerate() {
        f.std_err[j] = if dof > 0.0 { (ss_res / dof * inv[k][k]).max(0.0).sqrt() } else { f64::NAN };
    }
    f.residuals = quantiles(residuals);
    Some(f)
}

/// Solves the normal equations over `cols`; returns the coefficients and `(XᵀX)⁻¹`, or `None`
/// if the columns are (nearly) collinear.
fn solve(points: &[Point], cols: &[usize]) -> Option<(Vec<f64>, Vec<Vec<f64>>)> {
    let k = cols.len();
    let norm: Vec<f64> = cols.iter().map(|&j| points.iter().map(|p| x(p, j).powi(2)).sum::<f64>().sqrt()).collect();
    if norm.iter().any(|&s| s == 0.0 || !s.is_finite()) {
        return None;
    }
    // Augmented [ZᵀZ | I], Z = X with unit-norm columns.
    let mut m = vec![vec![0.0f64; 2 * k]; k];
    let mut v = vec![0.0f64; k];
    for p in points {
        for r in 0..k {
            let zr = x(p, cols[r]) / norm[r];
            v[r] += zr * p.cost;
            for s in 0..k {
                m[r][s] += zr * x(p, cols[s]) / norm[s];
            }
        }
    }
    for (r, row) in m.iter_mut().enumerate() {
        row[k + r] = 1.0;
    }
    for col in 0..k {
        let pivot = (col..k).max_by(|&a, &b| m[a][col].abs().total_cmp(&m[b][col].abs()))?;
        // The scaled matrix has a unit diagonal: a tiny pivot means collinear columns.
        if m[pivot][col].abs() < 1e-10 {
            return None;
        }
        m.swap(col, pivot);
        let d = m[col][col];
        m[col].iter_mut().for_each(|e| *e /= d);
        for r in 0..k {
            if r != col {
                let factor = m[r][col];
                let pivot_row = m[col].clone();
                m[r].iter_mut().zip(&pivot_row).for_each(|(e, p)| *e -= factor * p);
            }
        }
    }
    // Undo the scaling: β_j = γ_j / s_j, (XᵀX)⁻¹_jk = (ZᵀZ)⁻¹_jk / (s_j s_k).
    let inv: Vec<Vec<f64>> = (0..k).map(|r| (0..k).map(|s| m[r][k + s] / (norm[r] * norm[s])).collect()).collect();
    let coef = (0..k).map(|r| (0..k).map(|s| m[r][k + s] * v[s]).sum::<f64>() / norm[r]).collect();
    Some((coef, inv))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(a: f64, b: f64, c: f64) -> Vec<Point> {
        (0..50)
            .map(|i| {
                let (l, n) = ((i % 7) as f64, (i * 37 % 101) as f64 * 100.0);
                Point { path_length: l, nbytes: n, cost: a * l + b * n + c }
            })
            .collect()
    }

    #[test]
    fn exact_data_is_recovered() {
        let f = fit(&exact(3.0, 0.5, 7.0)).unwrap();
        assert!((f.a - 3.0).abs() < 1e-9 && (f.b - 0.5).abs() < 1e-9 && (f.c - 7.0).abs() < 1e-6, "{f:?}");
        assert!((f.r2 - 1.0).abs() < 1e-12);
        let o = fit_through_origin(&exact(3.0, 0.5, 0.0)).unwrap();
        assert!((o.a - 3.0).abs() < 1e-9 && (o.b - 0.5).abs() < 1e-9 && o.c == 0.0, "{o:?}");
    }

    #[test]
    fn constant_regressor_is_dropped() {
        let pts: Vec<Point> =
            (0..10).map(|i| Point { path_length: 4.0, nbytes: i as f64, cost: 2.0 * i as f64 + 1.0 }).collect();
        let f = fit(&pts).unwrap();
        assert_eq!(f.dropped, vec!["path_length"]);
        assert_eq!(f.a, 0.0);
        assert!((f.b - 2.0).abs() < 1e-9 && (f.c - 1.0).abs() < 1e-9);
    }

    #[test]
    fn collinear_regressors_keep_one() {
        let pts: Vec<Point> =
            (0..10).map(|i| Point { path_length: i as f64, nbytes: 2.0 * i as f64, cost: 5.0 * i as f64 }).collect();
        let f = fit(&pts).unwrap();
        assert_eq!(f.dropped, vec!["nbytes"]);
        assert!((f.a - 5.0).abs() < 1e-9);
    }

    #[test]
    fn quantiles_interpolate() {
        assert_eq!(quantile(&[0.0, 10.0], 0.5), 5.0);
        assert!(quantile(&[], 0.5).is_nan());
    }
}

//! Axis ticks at round values (1, 2 or 5 times a power of ten), on linear and log axes, and
//! their labels without trailing zeros.

/// Most ticks an axis gets.
const MAX_TICKS: usize = 10;

/// A round step (1, 2 or 5 times a power of ten) of at least `raw`.
fn round_step(raw: f64) -> f64 {
    let raw = if raw > 0.0 && raw.is_finite() { raw } else { 1.0 };
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * p).find(|s| *s >= raw * (1.0 - 1e-9)).unwrap_or(10.0 * p)
}

/// Ticks at the multiples of a round step within `lo..=hi`.
pub fn linear(lo: f64, hi: f64) -> Vec<f64> {
    let step = round_step((hi - lo) / (MAX_TICKS - 1) as f64);
    // A hair of tolerance: bounds that went through log10 and back land just off a tick.
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last).map(|i| i as f64 * step).collect()
}

/// Ticks of an axis drawn over log10 of its values, from `lo` to `hi` (both log10): the
/// log10 of the round values in range (1, 2 and 5 times powers of ten, or the powers of ten
/// alone when that would be too many).
pub fn log(lo: f64, hi: f64) -> Vec<f64> {
    let (k0, k1) = (lo.floor() as i32, hi.ceil() as i32);
    let within = |v: &f64| *v >= lo - 1e-9 && *v <= hi + 1e-9;
    let of = |mults: &[f64]| -> Vec<f64> {
        (k0..=k1).flat_map(|k| mults.iter().map(move |m| (m * 10f64.powi(k)).log10())).filter(within).collect()
    };
    let fine = of(&[1.0, 2.0, 5.0]);
    if fine.len() <= MAX_TICKS && fine.len() >= 2 {
        return fine;
    }
    let coarse = of(&[1.0]);
    if coarse.len() >= 2 {
        return coarse;
    }
    // Less than a decade: round values of a linear scale, where they are positive.
    linear(10f64.powf(lo), 10f64.powf(hi)).into_iter().filter(|v| *v > 0.0).map(f64::log10).collect()
}

/// A tick label: the value with at most three significant digits and no trailing zeros.
pub fn label(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return "0".into();
    }
    let digits = (2 - v.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9)
    }

    #[test]
    fn linear_ticks_are_round() {
        assert!(close(&linear(0.0, 10.0), &[0.0, 2.0, 4.0, 6.0, 8.0, 10.0]));
        assert!(close(&linear(0.3, 1.7), &[0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6]));
        assert!(close(&linear(0.0, 1234.0), &[0.0, 200.0, 400.0, 600.0, 800.0, 1000.0, 1200.0]));
    }

    #[test]
    fn log_ticks_are_round_values() {
        let values = |t: Vec<f64>| t.into_iter().map(|v| 10f64.powf(v)).collect::<Vec<_>>();
        assert!(close(&values(log(0.0, 2.0)), &[1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]));
        // Six decades: powers of ten only.
        assert!(close(&values(log(-1.0, 5.0)), &[0.1, 1.0, 10.0, 100.0, 1e3, 1e4, 1e5]));
        // Within one decade (3 to 8): linear round values.
        assert!(close(&values(log(3f64.log10(), 8f64.log10())), &[3.0, 4.0, 5.0, 6.0, 7.0, 8.0]));
    }

    #[test]
    fn labels_drop_trailing_zeros() {
        assert_eq!(label(2.0), "2");
        assert_eq!(label(0.5), "0.5");
        assert_eq!(label(1000.0), "1000");
        assert_eq!(label(0.05), "0.05");
        assert_eq!(label(12.5), "12.5");
        assert_eq!(label(0.0), "0");
    }
}

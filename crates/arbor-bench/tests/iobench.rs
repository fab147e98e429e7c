//! `arbor iobench`: the least-squares fit recovers known coefficients from noisy data, and a
//! tiny end-to-end run produces JSON with both models and finite coefficients.

use arbor_bench::iobench::{self, fit, LimitMethod, Options, Point};

/// A small deterministic generator for the synthetic data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Roughly normal noise (sum of uniforms), mean 0, standard deviation `sd`.
    fn noise(&mut self, sd: f64) -> f64 {
        ((0..12).map(|_| self.next()).sum::<f64>() - 6.0) * sd
    }
}

#[test]
fn fit_recovers_known_coefficients_from_noisy_data() {
    // The IO benchmarks' write model with an intercept, at realistic scales: depth 0-10, 1 B-64 KiB.
    let (a, b, c) = (930_000.0, 1.5, 250_000.0);
    let mut rng = Rng(0x1234_5678);
    let points: Vec<Point> = (0..2_000)
        .map(|_| {
            let path_length = (rng.next() * 11.0).floor();
            let nbytes = 2f64.powf(rng.next() * 16.0).floor();
            let cost = a * path_length + b * nbytes + c + rng.noise(50_000.0);
            Point { path_length, nbytes, cost }
        })
        .collect();
    let f = fit(&points).expect("a fit");
    assert_eq!(f.n, 2_000);
    assert!((f.a - a).abs() < 0.01 * a, "a = {}", f.a);
    assert!((f.b - b).abs() < 0.2, "b = {}", f.b);
    assert!((f.c - c).abs() < 10_000.0, "c = {}", f.c);
    assert!(f.r2 > 0.99, "R² = {}", f.r2);
    // The residuals are the noise: centred, with a spread near 50,000.
    assert!(f.residuals.p50.abs() < 10_000.0);
    assert!((f.rmse - 50_000.0).abs() < 5_000.0, "rmse = {}", f.rmse);
    for se in f.std_err {
        assert!(se.is_finite() && se > 0.0);
    }
    // Each coefficient within four standard errors of the truth.
    assert!((f.a - a).abs() < 4.0 * f.std_err[0] && (f.b - b).abs() < 4.0 * f.std_err[1]);
}

#[test]
fn quick_mode_end_to_end_on_a_tiny_config() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        values: arbor_trace::MIN_VALUES,
        target_bytes: 4 << 20,
        cache_bytes: 2 << 20,
        // No cgroup or ballast from a test: other tests share the process and the machine.
        limit: LimitMethod::None,
        reads: 60,
        writes: 20,
        warmup_paths: 2_000,
        warmup_max_seconds: 5.0,
        ..Options::quick(dir.path().join("bench"))
    };
    let mut lines = Vec::new();
    let report = iobench::run(&opts, &mut |l: &str| lines.push(l.to_string())).unwrap();
    assert!(report.grow.log_bytes >= 4 << 20 && report.grow.blocks > 0 && !report.grow.reused);
    assert_eq!(report.limit.method, "none");
    let json_path = dir.path().join("iobench.json");
    iobench::write_json(&report, &json_path).unwrap();
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&json_path).unwrap()).unwrap();
    for model in ["read", "write"] {
        let m = &json[model];
        assert!(m["samples"].as_array().unwrap().len() >= 10, "{model}: {}", m["samples"]);
        let fit = &m["fit"];
        for k in ["a", "b", "c", "r2"] {
            assert!(fit[k].as_f64().is_some_and(f64::is_finite), "{model}.{k} = {}", fit[k]);
        }
    }
    assert_eq!(json["write"]["samples"].as_array().unwrap().len(), 20);
    let html_path = dir.path().join("iobench.html");
    iobench::write_html(&report, &html_path).unwrap();
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(html.matches("<svg").count() == 4, "two scatter plots per model");
    assert!(iobench::report::summary(&report).contains("the IO benchmarks"));
    // A second run reuses the grown context.
    let again = iobench::run(&Options { reads: 10, writes: 5, ..opts }, &mut |_: &str| {}).unwrap();
    assert!(again.grow.reused);
    assert_eq!(again.grow.blocks, report.grow.blocks);
}

//! The HTML and JSON reports of a replay.

mod common;

use arbor_bench::report::{html_string, read_json, series::MAX_POINTS};
use arbor_bench::{write_html, write_json, BlockSample, ReplayReport};
use common::{record_random, replay_into};

#[test]
fn html_and_json_reports_of_a_small_replay() {
    let recorded = record_random(6, 5);
    let store_dir = tempfile::tempdir().unwrap();
    let (_, mut report) = replay_into(&recorded.trace, store_dir.path()).unwrap();
    report.trace = "<recorded & random>".into();
    let out = tempfile::tempdir().unwrap();
    let (html_path, json_path) = (out.path().join("report.html"), out.path().join("report.json"));
    write_html(&report, None, "Replay <test>", &html_path).unwrap();
    write_json(&report, &json_path).unwrap();

    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<title>Replay &lt;test&gt;</title>"));
    assert!(html.contains("&lt;recorded &amp; random&gt;"));
    // Six charts, inline, and nothing loaded from elsewhere.
    assert_eq!(html.matches("<svg").count(), 6);
    assert!(!html.contains("<?xml"));
    assert!(!html.contains("src=") && !html.contains("href="));
    let s = &report.summary;
    assert!(html.contains(&format!("<th>Blocks</th><td>{}</td>", s.blocks)));
    assert!(html.contains(&format!("<th>Context operations</th><td>{}</td>", s.ops)));
    assert!(html.contains(&format!("{:.0} TPS", s.tps)));
    assert!(html.contains(&format!("{} operation results, {} commit hashes", s.checked_results, s.checked_hashes)));
    assert!(html.contains("block time") && html.contains("commit time"));

    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    let blocks = json["blocks"].as_array().unwrap();
    assert_eq!(blocks.len() as u64, s.blocks);
    assert_eq!(json["summary"]["blocks"], s.blocks);
    assert_eq!(json["summary"]["checked_hashes"], s.checked_hashes);
    for (b, sample) in blocks.iter().zip(&report.blocks) {
        assert_eq!(b["level"], sample.level);
        assert_eq!(b["time_ns"], sample.time_ns);
    }
}

/// The bytes a replay reports written cover what its store appended: the store writes a
/// commit's last records on its sync thread, not on the replaying one, and the counters of
/// the replaying thread alone once reported 48 bytes a block.
#[test]
fn a_replay_reports_the_bytes_its_store_wrote() {
    if std::fs::read_to_string("/proc/self/io").is_err() {
        return; // No I/O counters here: they read as zero.
    }
    let recorded = record_random(6, 5);
    let store_dir = tempfile::tempdir().unwrap();
    let (_, report) = replay_into(&recorded.trace, store_dir.path()).unwrap();
    let written: u64 = report.blocks.iter().map(|b| b.write_bytes).sum();
    let appended: u64 = report.blocks.iter().map(|b| b.appended_bytes).sum();
    assert!(appended > 0, "the replay appended nothing");
    assert!(written >= appended, "{written} bytes reported written, {appended} appended");
}

/// A long run with periodic slow blocks, made up rather than measured.
fn long_report(blocks: u64) -> ReplayReport {
    let samples: Vec<BlockSample> = (1..=blocks)
        .map(|level| {
            let boundary = level % 1_000 == 0;
            BlockSample {
                level,
                ops: if boundary { 30_000 } else { 9_000 + level % 100 },
                transactions: 200,
                time_ns: if boundary { 400_000_000 } else { 20_000_000 + (level % 7) * 1_000_000 },
                commit_ns: 3_000_000,
                hashing_ns: 1_000_000,
                writing_ns: 1_500_000,
                syncing_ns: 500_000,
                rss_bytes: (100 + level / 100) << 20,
                file_rss_bytes: (level % 3) << 20,
                disk_bytes: level << 16,
                read_bytes: 4_096 * (level % 5),
                write_bytes: 70_000,
                read_syscalls: level % 5,
                records_read: 200,
                write_syscalls: 3,
                gc_running: level % 500 < 20,
                cpu_ns: 25_000_000,
                appended_bytes: 120_000,
                writes: 1_000,
            }
        })
        .collect();
    let mut report = ReplayReport { trace: "made up".into(), blocks: samples, ..ReplayReport::default() };
    report.summary.from_samples(&report.blocks);
    report
}

#[test]
fn long_runs_are_downsampled_and_keep_their_outliers() {
    let report = long_report(12_000);
    let html = html_string(&report, None, "long").unwrap();
    assert_eq!(html.matches("<svg").count(), 6);
    // The twelve boundary blocks stand out by their operations and their time.
    assert!(html.contains("12 cycle-boundary blocks and 12 slow blocks"));
    assert!(html.contains("cycle boundaries (&gt;= 2.5x median operations): 12"));
    assert!(html.contains("slow (&gt;= 3x median time): 12"));
    assert_eq!(html.matches("<td>cycle boundary, slow</td>").count(), 12);
    // Downsampling bounds the page: 12,000 blocks in 5 charts stay well under a megabyte.
    assert!(html.len() < 1_000_000, "{} bytes", html.len());
    assert!(MAX_POINTS < report.blocks.len());
    // The largest resident set, and the largest less its file pages (not the same block's:
    // the file pages go up and down).
    let mib = 1 << 20;
    assert_eq!(report.summary.max_rss_bytes, 220 * mib);
    assert_eq!(report.summary.max_anon_rss_bytes, 220 * mib);
    let anon = long_report(1_001).summary.max_anon_rss_bytes;
    assert_eq!((long_report(1_001).summary.max_rss_bytes, anon), (110 * mib, 110 * mib - mib));
}

#[test]
fn a_report_records_its_machine_configuration_and_operation_latencies() {
    let recorded = record_random(6, 5);
    let store_dir = tempfile::tempdir().unwrap();
    let (_, report) = replay_into(&recorded.trace, store_dir.path()).unwrap();
    let env = &report.environment;
    assert!(env.cores >= 1);
    assert!(!env.kernel.is_empty() && !env.git_revision.is_empty() && !env.cpu_model.is_empty());
    let default_cache = arbor::Config::default().cache_bytes.to_string();
    assert_eq!(report.config.get("cache_bytes").map(String::as_str), Some(default_cache.as_str()));
    assert_eq!(report.config.get("check").map(String::as_str), Some("true"));
    // Every commit timed, whole and in its parts; every operation seen by some histogram,
    // and one in SAMPLE_EVERY of each kind timed (the first of each run of that many).
    let l = &report.latency;
    assert_eq!(l.commit.count, report.summary.blocks);
    for part in [&l.commit_hashing, &l.commit_writing, &l.commit_syncing] {
        assert_eq!(part.count, report.summary.blocks);
    }
    let kinds = [&l.find, &l.mem, &l.add, &l.remove, &l.walk];
    assert_eq!(kinds.iter().map(|h| h.seen).sum::<u64>(), report.summary.ops);
    for h in kinds {
        assert_eq!(h.count, h.seen.div_ceil(arbor_bench::latency::SAMPLE_EVERY));
        assert_eq!(h.buckets.iter().sum::<u64>(), h.count);
    }
    assert!(l.add.count > 0 && l.find.count > 0);
    assert_eq!(l.commit.buckets.iter().sum::<u64>(), l.commit.count);

    let html = html_string(&report, None, "machine").unwrap();
    assert!(html.contains("<h2>Machine and configuration</h2>"));
    assert!(html.contains(&format!("<th>Git revision</th><td>{}</td>", env.git_revision)));
    assert!(html.contains("<h2>Operation latency</h2>"));
    assert!(!html.contains("Against the baseline"));
}

#[test]
fn a_baseline_is_overlaid_and_compared() {
    let out = tempfile::tempdir().unwrap();
    let old = long_report(3_000);
    let old_path = out.path().join("old.json");
    write_json(&old, &old_path).unwrap();
    let old = read_json(&old_path).unwrap();
    assert_eq!(old.blocks.len(), 3_000);

    // The new run is twice as fast.
    let mut new = long_report(3_000);
    for b in &mut new.blocks {
        b.time_ns /= 2;
    }
    new.summary.from_samples(&new.blocks);
    let html = html_string(&new, Some(&old), "against").unwrap();
    assert!(html.contains("<h2>Against the baseline</h2>"));
    assert!(html.contains("block time (baseline)") && html.contains("commit time (baseline)"));
    assert!(html.contains("Outline: the baseline run"));
    let row = html.lines().find(|l| l.contains("block time, mean (ms)")).expect("a row for the mean block time");
    assert!(row.contains("0.50x (better)"), "{row}");
    assert!(html.contains("throughput (TPS)"));

    // A file that is no report is refused with its name.
    std::fs::write(out.path().join("bad.json"), "[1, 2]").unwrap();
    let err = read_json(&out.path().join("bad.json")).unwrap_err();
    assert!(err.to_string().contains("not a replay report"), "{err}");
}

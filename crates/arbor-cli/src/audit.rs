//! `arbor audit`: the context audit of section 3 of Tarides' "Tezos Context Lima Performance
//! Audit" (July 2023) over one commit's state (content
//! sizes, directory fan-out, inlined versus separate values, bytes per object kind) and the
//! zstd compression ratio of the whole log; or, with `--appended-after`, what the records
//! written after a commit are, by kind and by field.

use std::io::{Read, Write};

use clap::Args;
use serde_json::json;

use arbor::store::{Appended, RECORD_KIND_NAMES};

use crate::common::{resolve_commit, StoreArg};
use crate::error::CliResult;
use crate::json;
use crate::rev::{parse_rev, Rev};

/// Arguments of `arbor audit`.
#[derive(Args, Debug)]
pub struct AuditArgs {
    #[command(flatten)]
    store: StoreArg,
    /// Commit whose state is audited (a head name, a hash or unique hash prefix, or REV~N); default: head `main`, else the last commit.
    #[arg(long, value_name = "REV", value_parser = parse_rev)]
    commit: Option<Rev>,
    /// Audit every commit's objects, not one commit's state.
    #[arg(long, conflicts_with = "commit")]
    all: bool,
    /// Instead of a state, the records written after this commit (to the end of the log), by
    /// kind and by field of the format: where the bytes the next commits appended go.
    #[arg(long, value_name = "REV", value_parser = parse_rev, conflicts_with_all = ["commit", "all"])]
    appended_after: Option<Rev>,
    /// zstd level for the compression ratio.
    #[arg(long, default_value_t = 3)]
    zstd_level: i32,
    /// Print a JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Record kinds in the order of `StoreStats::records`.
const KINDS: [&str; 4] = [RECORD_KIND_NAMES[1], RECORD_KIND_NAMES[2], RECORD_KIND_NAMES[3], RECORD_KIND_NAMES[4]];

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// Writes a log2 histogram with shares, skipping empty buckets.
fn histogram(out: &mut dyn Write, title: &str, unit: &str, buckets: &[u64]) -> std::io::Result<()> {
    let total: u64 = buckets.iter().sum();
    writeln!(out, "{title} (log2 buckets, {total} in all)")?;
    writeln!(out, "  {:<8}{:>18}{:>12}{:>10}", "log2", unit, "count", "share %")?;
    for (k, n) in buckets.iter().enumerate().filter(|(_, n)| **n > 0) {
        let range = format!("{}..{}", 1u64 << k, (1u64 << (k + 1)) - 1);
        writeln!(out, "  {k:<8}{range:>18}{n:>12}{:>10.3}", percent(*n, total))?;
    }
    Ok(())
}

impl AuditArgs {
    /// Runs the audit and prints it.
    pub fn run(self, out: &mut dyn Write) -> CliResult {
        let store = self.store.open_read_only()?;
        if let Some(rev) = &self.appended_after {
            let after = rev.resolve(&store)?;
            return appended(&store.appended_after(&after)?, &after, self.json, out);
        }
        let (stats, commit) = if self.all {
            (store.stats()?, None)
        } else {
            let c = resolve_commit(&store, self.commit.as_ref())?;
            (store.stats_of(Some(&[c]))?, Some(c))
        };
        if self.json {
            let (raw, packed) = compression(&self.store.store.join("pack"), self.zstd_level)?;
            let kinds: serde_json::Map<String, serde_json::Value> = KINDS
                .iter()
                .zip(stats.records.iter().zip(&stats.record_bytes))
                .map(|(name, (n, b))| (name.replace(' ', "_"), json!({"count": n, "bytes": b})))
                .collect();
            let v = json!({
                "commit": commit.as_ref().map(json::hash),
                "all_commits": self.all,
                "value_sizes_log2": stats.value_sizes,
                "directory_fanout_log2": stats.dir_fanout,
                "inlined_values": stats.inlined_values,
                "separate_values": stats.separate_values,
                "records": kinds,
                "log_bytes": raw,
                "zstd_level": self.zstd_level,
                "zstd_bytes": packed,
            });
            return json::print(out, &v);
        }
        match commit {
            None => writeln!(out, "audit of every commit's objects")?,
            Some(c) => writeln!(out, "audit of the state of commit {c}")?,
        }
        let values = stats.inlined_values + stats.separate_values;
        histogram(out, "content sizes", "bytes", &stats.value_sizes)?;
        let small: u64 = stats.value_sizes[..5].iter().sum();
        writeln!(out, "  values under 32 bytes: {:.2}%", percent(small, values))?;
        histogram(out, "directory fan-out", "entries", &stats.dir_fanout)?;
        writeln!(out, "values: {values}")?;
        writeln!(
            out,
            "  inlined in their parent: {} ({:.2}%)",
            stats.inlined_values,
            percent(stats.inlined_values, values)
        )?;
        writeln!(
            out,
            "  separate records:        {} ({:.2}%)",
            stats.separate_values,
            percent(stats.separate_values, values)
        )?;
        let total_bytes: u64 = stats.record_bytes.iter().sum();
        writeln!(out, "records by kind:")?;
        writeln!(out, "  {:<18}{:>12}{:>16}{:>10}{:>12}", "kind", "count", "bytes", "share %", "mean bytes")?;
        for (name, (n, b)) in KINDS.iter().zip(stats.records.iter().zip(&stats.record_bytes)) {
            let mean = if *n == 0 { 0 } else { b / n };
            writeln!(out, "  {name:<18}{n:>12}{b:>16}{:>10.2}{mean:>12}", percent(*b, total_bytes))?;
        }
        let (raw, packed) = compression(&self.store.store.join("pack"), self.zstd_level)?;
        let ratio = if packed == 0 { 0.0 } else { raw as f64 / packed as f64 };
        writeln!(out, "log: {raw} bytes; zstd level {}: {packed} bytes, ratio {ratio:.2}x", self.zstd_level)?;
        Ok(())
    }
}

/// Prints what the records after commit `after` are: by kind, then by field, each with its
/// share and its mean per commit.
fn appended(a: &Appended, after: &arbor::Hash, as_json: bool, out: &mut dyn Write) -> CliResult {
    let commits = a.commits();
    let per_commit = |n: u64| if commits == 0 { 0.0 } else { n as f64 / commits as f64 };
    let total = a.fields.total();
    let kinds = RECORD_KIND_NAMES.iter().zip(&a.kinds).filter(|(_, k)| k.records > 0);
    if as_json {
        let kinds: serde_json::Map<String, serde_json::Value> =
            kinds.map(|(name, k)| (name.replace(' ', "_"), json!({"records": k.records, "bytes": k.bytes}))).collect();
        let fields: serde_json::Map<String, serde_json::Value> =
            a.fields.named().iter().map(|(name, n)| (name.replace(' ', "_"), json!(n))).collect();
        let v =
            json!({"after": json::hash(after), "commits": commits, "bytes": total, "kinds": kinds, "fields": fields});
        return json::print(out, &v);
    }
    writeln!(out, "records appended after commit {after}: {total} bytes, {commits} commits")?;
    writeln!(out, "by kind:")?;
    writeln!(
        out,
        "  {:<24}{:>12}{:>14}{:>10}{:>16}{:>14}",
        "kind", "records", "bytes", "share %", "records/commit", "bytes/commit"
    )?;
    for (name, k) in kinds {
        writeln!(
            out,
            "  {name:<24}{:>12}{:>14}{:>10.2}{:>16.1}{:>14.1}",
            k.records,
            k.bytes,
            percent(k.bytes, total),
            per_commit(k.records),
            per_commit(k.bytes)
        )?;
    }
    writeln!(out, "by field:")?;
    writeln!(out, "  {:<24}{:>14}{:>10}{:>14}", "field", "bytes", "share %", "bytes/commit")?;
    for (name, n) in a.fields.named() {
        writeln!(out, "  {name:<24}{n:>14}{:>10.2}{:>14.1}", percent(n, total), per_commit(n))?;
    }
    Ok(())
}

/// Total and zstd-compressed bytes of every chunk file, compressed in independent 1 MiB blocks
/// (the granularity a store could compress at without losing random access).
fn compression(pack: &std::path::Path, level: i32) -> CliResult<(u64, u64)> {
    let mut raw = 0u64;
    let mut packed = 0u64;
    let mut names: Vec<_> = std::fs::read_dir(pack)?.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    names.sort();
    let mut buf = vec![0u8; 1 << 20];
    for path in names.iter().filter(|p| p.extension().is_some_and(|e| e == "chunk")) {
        let mut f = std::fs::File::open(path)?;
        loop {
            let n = read_full(&mut f, &mut buf)?;
            if n == 0 {
                break;
            }
            raw += n as u64;
            packed += zstd::bulk::compress(&buf[..n], level)?.len() as u64;
        }
    }
    Ok((raw, packed))
}

fn read_full(f: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

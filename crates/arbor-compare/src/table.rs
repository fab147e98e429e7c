//! The comparison as text: one row per backend, every figure with its ratio to arbor's.

use std::io::{self, Write};

use crate::compare::Comparison;
use crate::result::{BackendRun, Figures, Status};

/// One line about a finished run (for progress output).
pub fn status_line(run: &BackendRun) -> String {
    match run.status {
        Status::Ok => {
            let f = run.figures();
            format!(
                "{} blocks, mean {:.1} ms, load {:.1} s, {} reads checked, {} mismatches",
                f.blocks, f.mean_ms, f.load_s, run.checked_reads, run.mismatches
            )
        }
        Status::Skipped => format!("skipped: {}", run.reason.as_deref().unwrap_or("")),
        Status::Failed => format!("FAILED: {}", run.reason.as_deref().unwrap_or("")),
    }
}

/// A column of the table: heading and how to read the figure.
pub type Column = (&'static str, fn(&Figures) -> f64);

/// The table's columns.
pub const COLUMNS: [Column; 8] = [
    ("mean ms", |f| f.mean_ms),
    ("p99 ms", |f| f.p99_ms),
    ("max ms", |f| f.max_ms),
    ("ops/s", |f| f.ops_per_s),
    ("max RSS MiB", |f| f.peak_rss_mib),
    ("disk MiB", |f| f.disk_end_mib),
    ("written KiB/block", |f| f.written_per_block_kib),
    ("load s", |f| f.load_s),
];

/// A figure with as many decimals as its size needs.
pub fn num(v: f64) -> String {
    if v >= 1000.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// `value / base` as `×r`, or `-` when there is no base.
pub fn ratio(value: f64, base: Option<f64>) -> String {
    match base {
        Some(b) if b > 0.0 => format!("x{:.2}", value / b),
        _ => "-".into(),
    }
}

/// Prints the table and the notes under it.
pub fn print(cmp: &Comparison, out: &mut dyn Write) -> io::Result<()> {
    let base = cmp.arbor().map(|(_, f)| *f);
    writeln!(out, "trace {} ({} initial values), {}", cmp.trace, cmp.initial_values, cmp.machine)?;
    writeln!(out, "block time = first operation until the commit is durable; ratios are to arbor (x1.00)")?;
    write!(out, "{:<14}{:>7}", "backend", "blocks")?;
    for (h, _) in COLUMNS {
        write!(out, "{h:>20}")?;
    }
    writeln!(out, "{:>11}", "mismatches")?;
    for (run, f) in cmp.runs.iter().zip(&cmp.figures) {
        if run.status != Status::Ok {
            writeln!(out, "{:<14}{}", run.backend, status_line(run))?;
            continue;
        }
        write!(out, "{:<14}{:>7}", run.backend, f.blocks)?;
        for (_, get) in COLUMNS {
            let cell = format!("{} ({})", num(get(f)), ratio(get(f), base.as_ref().map(get)));
            write!(out, "{cell:>20}")?;
        }
        writeln!(out, "{:>11}", run.mismatches)?;
    }
    writeln!(out)?;
    if let Some(s) = &cmp.flatten {
        writeln!(out, "peers' flat translation ({} blocks, {} trace operations):", s.blocks, s.trace_ops)?;
        writeln!(
            out,
            "  checked: find {} (gets), mem {}, mem_tree/find_tree on values or absent paths {}",
            s.finds, s.mems, s.tree_tests_answered
        )?;
        writeln!(
            out,
            "  looked up but unanswerable (directories): mem_tree/find_tree {}; skipped: list {}, length {}, fold {}",
            s.tree_tests_on_directories, s.lists_skipped, s.lengths_skipped, s.folds_skipped
        )?;
        writeln!(
            out,
            "  writes: add {}, add_tree {} ({} leaves), remove {} -> puts {}, deletes {} ({} below removed/replaced paths, {} ancestors)",
            s.adds,
            s.add_trees,
            s.add_tree_leaves,
            s.removes,
            s.flat_puts,
            s.flat_deletes,
            s.subtree_deletes,
            s.ancestor_deletes
        )?;
        writeln!(out, "  index disagreements with the trace: {} (0 expected)", s.index_disagreements)?;
    }
    for run in &cmp.runs {
        if run.status != Status::Ok {
            continue;
        }
        writeln!(out, "{}: {}", run.backend, run.version)?;
        writeln!(out, "  durability: {}", run.durability)?;
        writeln!(out, "  settings:   {}", run.settings)?;
        writeln!(
            out,
            "  reads: {} checked, {} mismatches, {} unchecked; root {}; CPU {:.1} s user + {:.1} s sys; disk {:.1} MiB after load",
            run.checked_reads,
            run.mismatches,
            run.unchecked_reads,
            run.root,
            run.cpu_user,
            run.cpu_sys,
            run.disk_after_load as f64 / 1048576.0
        )?;
        for n in &run.notes {
            writeln!(out, "  note:       {n}")?;
        }
        if !run.peak_rss_reset {
            writeln!(out, "  note:       the peak RSS could not be reset after the load, so it includes the load")?;
        }
    }
    Ok(())
}

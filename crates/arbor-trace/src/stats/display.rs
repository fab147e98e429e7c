//! Text report of [`TraceStats`], with the seed figures alongside.

use std::fmt;

use super::figures::{self, read_rate};
use super::{Counts, TraceStats};

fn row(f: &mut fmt::Formatter<'_>, c: &Counts, figure: Option<f64>) -> fmt::Result {
    write!(f, "  {:<10} {:>10.1} {:>8} {:>8} {:>12}", c.name, c.mean, c.p50, c.max, c.total)?;
    match figure {
        Some(x) => writeln!(f, "   {x:>10.0}"),
        None => writeln!(f),
    }
}

impl fmt::Display for TraceStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let blocks = self.blocks.max(1) as f64;
        writeln!(
            f,
            "{} blocks, {} transactions ({:.1} per block), {} operations ({:.1} per block)",
            self.blocks,
            self.transactions,
            self.transactions as f64 / blocks,
            self.ops,
            self.ops as f64 / blocks
        )?;
        writeln!(
            f,
            "  Published figures quoted below: \"the Lima audit\" is Tarides' Tezos Context Lima Performance Audit \
             (July 2023), \"the Plebeia benchmark\" DaiLambda's Tezos+Plebeia context subsystem benchmark, \
             \"the IO benchmarks\" DaiLambda's New IO benchmarks (September 2023); see docs/WORKLOAD.md."
        )?;
        writeln!(
            f,
            "  (the Lima audit: 212 transactions per block, from 2,121,152 reads of the global counter over 10,000 blocks)"
        )?;

        writeln!(f, "\nOperations per block    mean      p50      max        total   the Lima audit (one Lima block)")?;
        let lima = [figures::LIMA_BLOCK_MEM, figures::LIMA_BLOCK_READ, figures::LIMA_BLOCK_WRITE];
        for (c, x) in self.classes.iter().zip(lima) {
            row(f, c, Some(x))?;
        }
        writeln!(f, " blocks not ending a cycle:")?;
        for (c, x) in self.ordinary_classes.iter().zip(lima) {
            row(f, c, Some(x))?;
        }
        writeln!(f, " by kind:")?;
        for c in self.kinds.iter().filter(|c| c.total > 0) {
            row(f, c, None)?;
        }

        writeln!(
            f,
            "\nWrites preceded in their block by a mem and a read of the same path: {:.1}% ({:.1}% in blocks not ending a cycle); the Lima audit's top-15 table: {:.1}%",
            100.0 * self.symmetry,
            100.0 * self.symmetry_ordinary,
            100.0 * figures::TABLE_SYMMETRY
        )?;

        writeln!(
            f,
            "\nTop {} read paths{}                                   reads  per block  the Lima audit per block",
            self.top_reads.len(),
            if self.top_reads_approximate { " (approximate)" } else { "" }
        )?;
        for (path, n) in &self.top_reads {
            let shown = if path.chars().count() > 60 {
                format!("{}…", path.chars().take(59).collect::<String>())
            } else {
                path.clone()
            };
            write!(f, "  {shown:<60} {n:>10} {:>10.2}", *n as f64 / blocks)?;
            match read_rate(path) {
                Some(r) => writeln!(f, " {r:>12.2}")?,
                None => writeln!(f)?,
            }
        }

        writeln!(f, "\nValue sizes, % by log2(length)   writes   initial   the Lima audit (context at 3,081,990)")?;
        let writes = self.write_sizes.percent();
        let initial = self.initial_sizes.as_ref().map(|h| h.percent());
        for (b, seed) in figures::SIZE_SHARES.iter().enumerate() {
            let label = if b + 1 == figures::SIZE_SHARES.len() { format!("{b}+") } else { b.to_string() };
            write!(f, "  {label:>4} {:>28.3}", writes[b])?;
            match &initial {
                Some(i) => write!(f, " {:>9.3}", i[b])?,
                None => write!(f, " {:>9}", "-")?,
            }
            writeln!(f, " {seed:>10.3}")?;
        }
        if let Some(h) = &self.initial_sizes {
            writeln!(f, "  ({} initial values, {} writes)", h.total, self.write_sizes.total)?;
        }

        let ordinary = self.ordinary_classes.get(2).map_or(0.0, |c| c.mean);
        writeln!(
            f,
            "\nCycle-boundary blocks ({}): {}; ordinary blocks write {:.0} on average",
            self.boundary_rule,
            self.boundaries.len(),
            ordinary
        )?;
        for b in &self.boundaries {
            writeln!(
                f,
                "  level {:>10}: {:>7} writes ({:.1}x ordinary)",
                b.level,
                b.writes,
                b.writes as f64 / ordinary.max(1.0)
            )?;
        }
        writeln!(
            f,
            "  (the Plebeia benchmark: a peak at every cycle boundary, over {:.0} live objects every 5 cycles)",
            figures::BIG_BOUNDARY_WRITES
        )?;

        writeln!(f, "\nPath steps per operation:")?;
        let total: u64 = self.path_steps.iter().sum();
        for (n, &c) in self.path_steps.iter().enumerate().filter(|(_, &c)| c > 0) {
            let plus = if n + 1 == self.path_steps.len() { "+" } else { "" };
            writeln!(f, "  {n:>2}{plus:<1} steps {:>6.2}%", 100.0 * c as f64 / total.max(1) as f64)?;
        }
        writeln!(
            f,
            "  mean path length (steps after the first): finds {:.2}, adds {:.2}; the IO benchmarks (block 4,043,830): reads {:.2}, writes {:.2}",
            self.read_path_length,
            self.write_path_length,
            figures::READ_PATH_LENGTH,
            figures::WRITE_PATH_LENGTH
        )
    }
}

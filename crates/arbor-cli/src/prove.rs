//! `arbor prove` and `arbor verify`: Merkle proofs of paths in a commit's tree, written and
//! checked as the compact binary encoding of docs/PROOFS.md (tree proofs, or with `--stream`
//! stream proofs).

use std::io::{IsTerminal, Read, Write};

use arbor::proof::{verify, verify_stream, Proved, Write as ProofWrite};
use arbor::{Hash, InodeConfig};
use arbor_core::proof::encode_stream;
use clap::{Args, ValueEnum};

use crate::common::{parse_hash, parse_path, resolve_commit, StoreArg};
use crate::error::{CliError, CliResult};
use crate::hex;
use crate::rev::{parse_rev, Rev};

/// Arguments of `arbor prove`.
#[derive(Args, Debug)]
#[command(after_help = "Writes the binary proof to standard output and its root tree hash to standard error.")]
pub struct ProveArgs {
    #[command(flatten)]
    store: StoreArg,
    /// Commit whose tree to prove in (a head name, a hash or unique hash prefix, or REV~N); default: head `main`, else the last commit.
    #[arg(long, value_name = "REV", value_parser = parse_rev)]
    commit: Option<Rev>,
    /// Write a stream proof (elements in the verifier's order) instead of a tree proof.
    #[arg(long)]
    stream: bool,
    /// `/`-separated paths to prove (values, directories or absences).
    #[arg(value_name = "PATH")]
    paths: Vec<String>,
}

impl ProveArgs {
    /// Proves the paths in the commit's tree and writes the proof's bytes to `out`.
    pub fn run(self, out: &mut dyn Write) -> CliResult {
        if std::io::stdout().is_terminal() {
            return Err(CliError::usage("the proof is binary: redirect standard output to a file or a pipe"));
        }
        let paths = self.paths.iter().map(|p| parse_path(p)).collect::<CliResult<Vec<_>>>()?;
        let store = self.store.open_read_only()?;
        let commit = resolve_commit(&store, self.commit.as_ref())?;
        let proof = store.prove(&commit, &paths)?;
        let bytes = if self.stream {
            encode_stream(&proof).map_err(|e| CliError::failed(format!("cannot stream the proof: {e}")))?
        } else {
            proof.encode()
        };
        out.write_all(&bytes)?;
        let form = if self.stream { "stream proof" } else { "proof" };
        eprintln!("arbor: {form} of {} path(s) in tree {} ({} bytes)", proof.reads.len(), proof.before, bytes.len());
        Ok(())
    }
}

/// The inode shapes `arbor verify` knows.
#[derive(ValueEnum, Debug, Clone, Copy)]
enum Shape {
    /// Octez's: 32 slots, flat up to 256 entries.
    Tezos,
    /// irmin's small test shape: 2 slots, flat up to 3 entries.
    Small,
}

/// Arguments of `arbor verify`.
#[derive(Args, Debug)]
#[command(after_help = "Reads a proof from standard input. Prints one line per proved path: \
`PATH<TAB>HEX` for a value, `PATH<TAB>absent`, or `PATH<TAB>dir HASH`; then any writes \
(`add PATH<TAB>HEX`, `remove PATH`) and the root after them (`after<TAB>HASH`). \
Exits with 1 if the proof does not verify.")]
pub struct VerifyArgs {
    /// The trusted root tree hash (hex or Co…), e.g. the `tree` of `arbor show`.
    #[arg(long, value_name = "TREE_HASH", value_parser = parse_hash)]
    root: Hash,
    /// Inode shape the tree is hashed with.
    #[arg(long, value_enum, default_value_t = Shape::Tezos)]
    shape: Shape,
    /// The proof is a stream proof (as written by `arbor prove --stream`).
    #[arg(long)]
    stream: bool,
    /// If given, the proof must be about exactly these `/`-separated paths.
    #[arg(value_name = "PATH")]
    paths: Vec<String>,
}

impl VerifyArgs {
    /// Verifies the proof read from standard input and prints what it proves.
    pub fn run(self, out: &mut dyn Write) -> CliResult {
        let mut bytes = Vec::new();
        std::io::stdin().lock().read_to_end(&mut bytes)?;
        let cfg = match self.shape {
            Shape::Tezos => InodeConfig::TEZOS,
            Shape::Small => InodeConfig::SMALL_TEST,
        };
        let fail = |e: arbor::proof::ProofError| CliError::failed(format!("proof does not verify: {e}"));
        let v = if self.stream { verify_stream(&bytes, &self.root, cfg) } else { verify(&bytes, &self.root, cfg) };
        let v = v.map_err(fail)?;
        if !self.paths.is_empty() {
            let paths = self.paths.iter().map(|p| parse_path(p)).collect::<CliResult<Vec<_>>>()?;
            v.expect_reads(&paths).map_err(fail)?;
        }
        for (path, proved) in v.reads() {
            let shown = show(path);
            match proved {
                Proved::Value(value) => writeln!(out, "{shown}\t{}", hex::encode(value))?,
                Proved::Absent => writeln!(out, "{shown}\tabsent")?,
                Proved::Dir(h) => writeln!(out, "{shown}\tdir {h}")?,
            }
        }
        for w in v.writes() {
            match w {
                ProofWrite::Add(p, value) => writeln!(out, "add {}\t{}", show(p), hex::encode(value))?,
                ProofWrite::Remove(p) => writeln!(out, "remove {}", show(p))?,
            }
        }
        if !v.writes().is_empty() {
            writeln!(out, "after\t{}", v.after())?;
        }
        Ok(())
    }
}

/// A proof path for output: `/` for the root, else the steps joined by `/`.
fn show(path: &[Vec<u8>]) -> String {
    if path.is_empty() {
        "/".to_string()
    } else {
        arbor::path::display_path(path)
    }
}

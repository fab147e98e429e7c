//! `arbor prove` and `arbor verify`: Merkle proofs of paths in a commit's tree, written and
//! checked as the compact binary encoding of docs/PROOFS.md (tree proofs, or with `--stream`
//! stream proofs), or with `--format octez` in Octez's proof format (either of its encodings).

use std::io::{IsTerminal, Read, Write};

use arbor::proof::{verify, verify_stream, Proved, Write as ProofWrite};
use arbor::{Hash, InodeConfig};
use arbor_core::proof::octez::{self, verify_octez_stream, verify_octez_tree, Encoding};
use arbor_core::proof::{encode_stream, Path};
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
    /// Proof format: arbor's own, or Octez's (the store must have the Tezos shape).
    #[arg(long, value_enum, default_value_t = Format::Arbor)]
    format: Format,
    /// Byte encoding of an Octez proof.
    #[arg(long, value_enum, default_value_t = OctezEncoding::V2)]
    encoding: OctezEncoding,
    /// `/`-separated paths to prove (values, directories or absences); an Octez stream proof
    /// is made for these paths in this order.
    #[arg(value_name = "PATH")]
    paths: Vec<String>,
}

/// Proof formats.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// arbor's own proofs (docs/PROOFS.md), which carry their claims.
    Arbor,
    /// Octez's proofs (docs/PROOFS.md, "Octez proofs"), checked against the paths given.
    Octez,
}

/// Octez's two byte encodings.
#[derive(ValueEnum, Debug, Clone, Copy)]
enum OctezEncoding {
    /// The plain encoding.
    V1,
    /// The compact encoding.
    V2,
}

impl OctezEncoding {
    fn get(self) -> Encoding {
        match self {
            OctezEncoding::V1 => Encoding::V1,
            OctezEncoding::V2 => Encoding::V2,
        }
    }
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
        if self.format == Format::Octez {
            let enc = self.encoding.get();
            let bytes = if self.stream {
                store.prove_octez_stream(&commit, &paths, enc)?
            } else {
                store.prove_octez(&commit, &paths, enc)?
            };
            out.write_all(&bytes)?;
            let tree = store.checkout(&commit)?.hash();
            let form = if self.stream { "Octez stream proof" } else { "Octez proof" };
            eprintln!("arbor: {form} of {} path(s) in tree {tree} ({} bytes)", paths.len(), bytes.len());
            return Ok(());
        }
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
    /// irmin's small test shape: 2 slots, flat up to 3 entries (arbor proofs only).
    Small,
    /// The binary shape of smart rollups: 2 slots chosen from the step hash's bits, flat up to
    /// 2 entries (Octez proofs only).
    Binary,
}

/// Arguments of `arbor verify`.
#[derive(Args, Debug)]
#[command(after_help = "Reads a proof from standard input. Prints one line per proved path: \
`PATH<TAB>HEX` for a value, `PATH<TAB>absent`, or `PATH<TAB>dir HASH`; then any writes \
(`add PATH<TAB>HEX`, `remove PATH`) and the root after them (`after<TAB>HASH`). \
Exits with 1 if the proof does not verify. With `--format octez` the PATHs are required: they \
are the reads the proof is checked against (a stream proof is replayed for them in this order); \
only proofs of reads are accepted.")]
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
    /// Proof format: arbor's own, or Octez's.
    #[arg(long, value_enum, default_value_t = Format::Arbor)]
    format: Format,
    /// Byte encoding of an Octez proof.
    #[arg(long, value_enum, default_value_t = OctezEncoding::V2)]
    encoding: OctezEncoding,
    /// If given, the proof must be about exactly these `/`-separated paths (for an Octez
    /// proof: the paths to look up, required).
    #[arg(value_name = "PATH")]
    paths: Vec<String>,
}

impl VerifyArgs {
    /// Verifies the proof read from standard input and prints what it proves.
    pub fn run(self, out: &mut dyn Write) -> CliResult {
        let mut bytes = Vec::new();
        std::io::stdin().lock().read_to_end(&mut bytes)?;
        if self.format == Format::Octez {
            return self.run_octez(&bytes, out);
        }
        let cfg = match self.shape {
            Shape::Tezos => InodeConfig::TEZOS,
            Shape::Small => InodeConfig::SMALL_TEST,
            Shape::Binary => return Err(CliError::usage("arbor proofs have no binary shape: use --format octez")),
        };
        let fail = |e: arbor::proof::ProofError| CliError::failed(format!("proof does not verify: {e}"));
        let v = if self.stream { verify_stream(&bytes, &self.root, cfg) } else { verify(&bytes, &self.root, cfg) };
        let v = v.map_err(fail)?;
        if !self.paths.is_empty() {
            let paths = self.paths.iter().map(|p| parse_path(p)).collect::<CliResult<Vec<_>>>()?;
            v.expect_reads(&paths).map_err(fail)?;
        }
        for (path, proved) in v.reads() {
            print_read(out, path, proved)?;
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

impl VerifyArgs {
    /// Verifies an Octez proof against the root for the paths given, and prints what it proves.
    fn run_octez(&self, bytes: &[u8], out: &mut dyn Write) -> CliResult {
        let shape = match self.shape {
            Shape::Tezos => octez::Shape::Tezos32,
            Shape::Binary => octez::Shape::Binary,
            Shape::Small => return Err(CliError::usage("Octez proofs have no small shape: use tezos or binary")),
        };
        if self.paths.is_empty() {
            return Err(CliError::usage("an Octez proof carries no paths: give the paths to look up"));
        }
        let paths: Vec<Path> = self
            .paths
            .iter()
            .map(|p| Ok(parse_path(p)?.iter().map(|s| s.to_vec()).collect()))
            .collect::<CliResult<_>>()?;
        let enc = self.encoding.get();
        let v = if self.stream {
            verify_octez_stream(bytes, enc, &self.root, shape, &paths)
        } else {
            verify_octez_tree(bytes, enc, &self.root, shape, &paths)
        };
        let v = v.map_err(|e| CliError::failed(format!("proof does not verify: {e}")))?;
        for (path, proved) in &v.reads {
            print_read(out, path, proved)?;
        }
        Ok(())
    }
}

/// Prints what is proved at `path`.
fn print_read(out: &mut dyn Write, path: &[Vec<u8>], proved: &Proved) -> CliResult {
    let shown = show(path);
    match proved {
        Proved::Value(value) => writeln!(out, "{shown}\t{}", hex::encode(value))?,
        Proved::Absent => writeln!(out, "{shown}\tabsent")?,
        Proved::Dir(h) => writeln!(out, "{shown}\tdir {h}")?,
    }
    Ok(())
}

/// A proof path for output: `/` for the root, else the steps joined by `/`.
fn show(path: &[Vec<u8>]) -> String {
    if path.is_empty() {
        "/".to_string()
    } else {
        arbor::path::display_path(path)
    }
}

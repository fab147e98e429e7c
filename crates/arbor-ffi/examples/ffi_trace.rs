//! Writes a random trace of tree and store operations with the results the Rust API gives,
//! for the C and OCaml bindings to replay through the C ABI and check result by result.
//!
//! Usage: `ffi_trace <seed> <operations> <output file>`; the store lives in a temporary
//! directory. Format (one operation per line, space-separated tokens):
//!
//! ```text
//! add P V H | remove P H | find P V | mem P B | mem_tree P B | length P N
//! list P OFFSET LENGTH STEPS | fold P DEPTH BOUND N | commit H | checkout H | hash H
//! ```
//!
//! P: steps in hex joined by `/` (`.` is the root); V: `-` for none, else `x` and hex bytes;
//! H: 64 hex digits; B: 0 or 1; STEPS: hex steps joined by `,` or `-`; LENGTH -1: no limit;
//! DEPTH: any, eq, le, lt, ge, gt. A commit's parents are the previous commit of the trace (none
//! for the first), its date the number of commits before it, author `Tezos`, message `trace`.

use std::fmt::Write as _;
use std::io::Write as _;

use arbor::{Depth, Hash, Order, Store, Tree};
use arbor_core::toolbox::hex::encode as hex;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn path_token(p: &[Vec<u8>]) -> String {
    if p.is_empty() {
        ".".to_string()
    } else {
        p.iter().map(|s| hex(s)).collect::<Vec<_>>().join("/")
    }
}

fn value_token(v: Option<&[u8]>) -> String {
    v.map_or("-".to_string(), |v| format!("x{}", hex(v)))
}

/// Steps drawn from a small set so operations meet each other, with one non-UTF-8 step and
/// one long step.
fn step(rng: &mut StdRng) -> Vec<u8> {
    const NAMES: [&[u8]; 9] = [b"a", b"b", b"data", b"contracts", b"0", b"1", b"\xff\x00", b"index", b"x"];
    if rng.gen_ratio(1, 12) {
        vec![b'k'; rng.gen_range(40..80)]
    } else {
        NAMES[rng.gen_range(0..NAMES.len())].to_vec()
    }
}

fn path(rng: &mut StdRng, min: usize) -> Vec<Vec<u8>> {
    (0..rng.gen_range(min..=3)).map(|_| step(rng)).collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, seed, count, output] = &args[..] else {
        return Err("usage: ffi_trace <seed> <operations> <output file>".into());
    };
    let mut rng = StdRng::seed_from_u64(seed.parse()?);
    let count: usize = count.parse()?;
    let dir = tempfile::tempdir()?;
    let store = Store::open(dir.path())?;
    let mut tree: Tree = store.empty();
    let mut commits: Vec<Hash> = Vec::new();
    let mut out = String::new();
    for _ in 0..count {
        let line = match rng.gen_range(0..100) {
            0..=34 => {
                let p = path(&mut rng, 1);
                let v: Vec<u8> = (0..rng.gen_range(0..48)).map(|_| rng.gen()).collect();
                tree = tree.add(&p, &v)?;
                format!("add {} {} {}", path_token(&p), value_token(Some(&v)), tree.hash().to_hex())
            }
            35..=44 => {
                let p = path(&mut rng, 1);
                tree = tree.remove(&p)?;
                format!("remove {} {}", path_token(&p), tree.hash().to_hex())
            }
            45..=59 => {
                let p = path(&mut rng, 1);
                format!("find {} {}", path_token(&p), value_token(tree.find(&p)?.as_deref()))
            }
            60..=66 => {
                let p = path(&mut rng, 1);
                format!("mem {} {}", path_token(&p), u8::from(tree.mem(&p)?))
            }
            67..=73 => {
                let p = path(&mut rng, 0);
                format!("mem_tree {} {}", path_token(&p), u8::from(tree.mem_tree(&p)?))
            }
            74..=79 => {
                let p = path(&mut rng, 0);
                format!("length {} {}", path_token(&p), tree.length(&p)?)
            }
            80..=86 => {
                let p = path(&mut rng, 0);
                let offset = rng.gen_range(0..3);
                let length: i64 = rng.gen_range(-1..4);
                let entries = tree.list(&p, Some(offset), usize::try_from(length).ok())?;
                let steps = if entries.is_empty() {
                    "-".to_string()
                } else {
                    entries.iter().map(|(s, _)| hex(s)).collect::<Vec<_>>().join(",")
                };
                format!("list {} {offset} {length} {steps}", path_token(&p))
            }
            87..=90 => {
                let p = path(&mut rng, 0);
                let bound = rng.gen_range(0..4);
                let (name, depth) = match rng.gen_range(0..6) {
                    0 => ("any", None),
                    1 => ("eq", Some(Depth::Eq(bound))),
                    2 => ("le", Some(Depth::Le(bound))),
                    3 => ("lt", Some(Depth::Lt(bound))),
                    4 => ("ge", Some(Depth::Ge(bound))),
                    _ => ("gt", Some(Depth::Gt(bound))),
                };
                let mut n = 0u64;
                tree.fold(&p, depth, Order::Sorted, |_, _| {
                    n += 1;
                    Ok(true)
                })?;
                format!("fold {} {name} {bound} {n}", path_token(&p))
            }
            91..=96 => {
                let parents: Vec<Hash> = commits.last().copied().into_iter().collect();
                let h = store.commit(&tree, &parents, commits.len() as i64, "Tezos", "trace")?;
                commits.push(h);
                format!("commit {}", h.to_hex())
            }
            _ => match commits.len() {
                0 => format!("hash {}", tree.hash().to_hex()),
                n => {
                    let h = commits[rng.gen_range(0..n)];
                    tree = store.checkout(&h)?;
                    format!("checkout {}\nhash {}", h.to_hex(), tree.hash().to_hex())
                }
            },
        };
        out.push_str(&line);
        out.push('\n');
    }
    let _ = writeln!(out, "hash {}", tree.hash().to_hex());
    std::fs::File::create(output)?.write_all(out.as_bytes())?;
    Ok(())
}

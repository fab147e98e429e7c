//! The library in one page: open a store, commit two blocks, read them back, name a head,
//! and prove a value to someone who holds only the commit's tree hash.
//!
//! Run with `cargo run -p arbor --example basics [DIR]` (a temporary directory by default).
//! Built, and so kept compiling, by `cargo test`.

use arbor::proof::{verify_paths, Proved};
use arbor::{Config, Durability, Hash, InodeConfig, Store};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tmp = tempfile::tempdir()?;
    let dir = std::env::args().nth(1).map_or_else(|| tmp.path().to_path_buf(), Into::into);

    // Open (or create) a store. `Config` is built from its default and setters, so that
    // options added later do not break this code.
    let config = Config::default().with_cache_bytes(64 << 20).with_durability(Durability::EveryCommit);
    let store = Store::open_with(&dir, config)?;

    // Block 1: a tree built from nothing, committed with no parent.
    let mut tree = store.empty();
    tree.add_mut(&["contracts", "global_counter"], b"1")?;
    tree.add_mut(&["contracts", "index", "tz1alice", "balance"], b"100")?;
    let first = store.commit(&tree, &[], 1, "Tezos", "block 1")?;

    // Block 2: check the first out, change it, commit with the first as parent.
    let mut tree = store.checkout(&first)?;
    tree.add_mut(&["contracts", "global_counter"], b"2")?;
    tree.remove_mut(&["contracts", "index", "tz1alice"])?;
    let second = store.commit(&tree, &[first], 2, "Tezos", "block 2")?;
    store.set_head("main", &second)?;

    // Reads: any commit can be checked out; values are bytes.
    let old = store.checkout(&first)?;
    assert_eq!(old.find(&["contracts", "global_counter"])?, Some(b"1".to_vec()));
    let new = store.checkout(&store.head("main").expect("set above"))?;
    assert_eq!(new.find(&["contracts", "global_counter"])?, Some(b"2".to_vec()));
    assert!(!new.mem_tree(&["contracts", "index", "tz1alice"])?);
    let info = store.commit_info(&second)?;
    println!("commit {second} (hex {})", second.to_hex());
    println!("  parents {:?}, date {}, message {:?}", info.parents, info.date, String::from_utf8_lossy(&info.message));

    // A proof: what `contracts/global_counter` holds in block 2, and that `tz1alice` is gone.
    let paths = [vec!["contracts", "global_counter"], vec!["contracts", "index", "tz1alice"]];
    let proof = store.prove(&second, &paths)?.encode();
    // The verifier needs only the proof's bytes and the tree hash it trusts (hashes print
    // and parse as text, hex or Octez's "Co…" form).
    let trusted: Hash = info.tree.to_string().parse()?;
    let verified = verify_paths(&proof, &trusted, InodeConfig::TEZOS, &paths)?;
    assert_eq!(verified.get(&["contracts", "global_counter"]), Some(&Proved::Value(b"2".to_vec())));
    assert_eq!(verified.get(&["contracts", "index", "tz1alice"]), Some(&Proved::Absent));
    println!("proof of {} bytes verified against tree {trusted}", proof.len());

    store.close()?;
    Ok(())
}

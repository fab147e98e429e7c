//! End-to-end tests of `arbor prove --format octez` and `arbor verify --format octez`: a commit
//! made with `arbor commit`, its Octez proof (tree and stream, both encodings) checked by
//! `arbor verify`, which prints the proved values and refuses any changed byte.

mod support;

use std::path::Path;
use std::process::Output;

use support::{arbor_at as arbor, stderr, store_with_commit};

fn prove(store: &Path, stream: bool, enc: &str, paths: &[&str]) -> (Vec<u8>, String) {
    let mut args = vec!["prove", "--format", "octez", "--encoding", enc];
    if stream {
        args.push("--stream");
    }
    args.extend_from_slice(paths);
    let o = arbor(Some(store), &args, b"");
    assert!(o.status.success(), "prove failed: {}", stderr(&o));
    let err = stderr(&o);
    let root = err.split(" in tree ").nth(1).and_then(|r| r.split_whitespace().next()).expect("root on stderr");
    (o.stdout, root.to_string())
}

fn verify(proof: &[u8], root: &str, stream: bool, enc: &str, paths: &[&str]) -> Output {
    let mut args = vec!["verify", "--format", "octez", "--encoding", enc, "--root", root];
    if stream {
        args.push("--stream");
    }
    args.extend_from_slice(paths);
    arbor(None, &args, proof)
}

#[test]
fn octez_proofs_prove_then_verify() {
    let dir = store_with_commit();
    let paths = ["a/b", "big/k7", "nope", "a/c"];
    for enc in ["v1", "v2"] {
        for stream in [false, true] {
            let (proof, root) = prove(dir.path(), stream, enc, &paths);
            let o = verify(&proof, &root, stream, enc, &paths);
            assert!(o.status.success(), "verify ({enc}, stream {stream}) failed: {}", stderr(&o));
            let out = String::from_utf8(o.stdout).unwrap();
            assert_eq!(out, "a/b\t0102\nbig/k7\t07\nnope\tabsent\na/c\tff\n", "{enc} stream {stream}");
            // The other form, or the other shape, does not take it.
            assert_eq!(verify(&proof, &root, !stream, enc, &paths).status.code(), Some(1));
            let mut args = vec!["verify", "--format", "octez", "--encoding", enc, "--shape", "binary", "--root"];
            args.push(&root);
            if stream {
                args.push("--stream");
            }
            args.extend_from_slice(&paths);
            assert_eq!(arbor(None, &args, &proof).status.code(), Some(1));
        }
    }
}

#[test]
fn octez_proofs_with_a_changed_byte_fail() {
    let dir = store_with_commit();
    let paths = ["a/b", "big/k299"];
    for enc in ["v1", "v2"] {
        for stream in [false, true] {
            let (proof, root) = prove(dir.path(), stream, enc, &paths);
            for i in (0..proof.len()).step_by(11) {
                let mut bad = proof.clone();
                bad[i] ^= 0x10;
                let o = verify(&bad, &root, stream, enc, &paths);
                assert_eq!(o.status.code(), Some(1), "{enc} stream {stream}: byte {i}: {}", stderr(&o));
            }
        }
    }
}

#[test]
fn octez_verify_needs_paths_and_a_known_shape() {
    let dir = store_with_commit();
    let (proof, root) = prove(dir.path(), false, "v2", &["top"]);
    let o = verify(&proof, &root, false, "v2", &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = arbor(None, &["verify", "--format", "octez", "--shape", "small", "--root", &root, "top"], &proof);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

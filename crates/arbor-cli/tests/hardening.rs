//! End-to-end tests of the defects issue 14 found by hostile use of the `arbor` binary: each
//! failed before its fix.

mod support;

use support::{fails, ok, tree_of};

#[test]
fn empty_steps_at_either_end_are_refused_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s");
    for (input, line) in [
        ("add a/ 01\n", "line 1"),
        ("add b 01\nadd /a 01\n", "line 2"),
        ("add b 01\n\nremove b/\n", "line 3"),
        ("add /a/ 01\n", "line 1"),
    ] {
        let err = fails(&s, &["commit", "--date", "0", "--message", "m"], input, 2);
        assert!(err.contains(line) && err.contains("empty step"), "{input:?}: {err}");
    }
    assert!(!s.exists(), "a refused commit created {:?}", tree_of(&s));
    // Read commands take the same path grammar.
    ok(&s, &["commit", "--date", "0", "--message", "m"], "add a/b 01\n");
    assert_eq!(ok(&s, &["get", "a/b"], ""), "01\n");
    for bad in ["/a/b", "a/b/", "a//b"] {
        let err = fails(&s, &["get", bad], "", 2);
        assert!(err.contains("empty step") && err.contains(bad), "{bad}: {err}");
    }
    // The root is still `""` or `/`.
    assert_eq!(ok(&s, &["ls", "/"], ""), "a/\n");
}

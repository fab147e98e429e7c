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

/// A regular file, an empty directory and a missing directory: none holds a store.
fn not_stores(root: &std::path::Path) -> Vec<std::path::PathBuf> {
    let file = root.join("notes.txt");
    std::fs::write(&file, "some text\n").unwrap();
    let empty = root.join("empty");
    std::fs::create_dir(&empty).unwrap();
    vec![file, empty, root.join("missing")]
}

#[test]
fn commands_reading_a_store_say_there_is_none_and_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let snap = dir.path().join("out.snap");
    let hash = "0".repeat(64);
    let commands: [&[&str]; 11] = [
        &["fsck"],
        &["log"],
        &["stats"],
        &["heads"],
        &["show", &hash],
        &["get", "a"],
        &["ls"],
        &["audit"],
        &["prove", "a"],
        &["snapshot", "export", "--out", snap.to_str().unwrap()],
        &["gc", "--keep", "1"],
    ];
    for target in not_stores(dir.path()) {
        let before = tree_of(dir.path());
        for args in commands {
            let err = fails(&target, args, "", 1);
            assert!(err.contains(&format!("no store at {}", target.display())), "{args:?} on {target:?}: {err}");
            assert_eq!(tree_of(dir.path()), before, "{args:?} on {target:?} changed the files");
        }
        if target.is_file() {
            assert_eq!(std::fs::read_to_string(&target).unwrap(), "some text\n");
        }
    }
}

#[test]
fn commit_refuses_a_file_or_a_foreign_directory() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "some text\n").unwrap();
    let err = fails(&file, &["commit", "--date", "0", "--message", "m"], "add a 01\n", 1);
    assert!(err.contains("not a store directory"), "{err}");
    let foreign = dir.path().join("home");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("thesis.tex"), "x").unwrap();
    let err = fails(&foreign, &["commit", "--date", "0", "--message", "m"], "add a 01\n", 1);
    assert!(err.contains("holds no store"), "{err}");
    assert_eq!(tree_of(&foreign), vec!["thesis.tex".to_string()]);
    // An empty directory is a fine place for a new store.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    ok(&empty, &["commit", "--date", "0", "--message", "m"], "add a 01\n");
    assert_eq!(ok(&empty, &["get", "a"], ""), "01\n");
}

#[test]
fn refused_snapshot_imports_leave_no_trace() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    ok(&src, &["commit", "--date", "0", "--message", "m"], "add a 01\nadd b/c 0203\n");
    let snap = dir.path().join("good.snap");
    ok(&src, &["snapshot", "export", "--out", snap.to_str().unwrap()], "");
    let good = std::fs::read(&snap).unwrap();
    let garbage = dir.path().join("garbage.snap");
    std::fs::write(&garbage, b"this is not a snapshot at all, only some text\n").unwrap();
    let truncated = dir.path().join("truncated.snap");
    std::fs::write(&truncated, &good[..good.len() - 3]).unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for file in [&garbage, &truncated] {
        for target in [dir.path().join("new"), dir.path().join("deep/new/store"), empty.clone()] {
            fails(&target, &["snapshot", "import", file.to_str().unwrap()], "", 1);
            assert_eq!(tree_of(&target), Vec::<String>::new(), "{file:?} into {target:?}");
        }
        assert!(!dir.path().join("new").exists() && !dir.path().join("deep").exists(), "{file:?}");
        assert!(empty.is_dir(), "the empty directory was there before: it stays");
    }
    // The good file still imports, into each of them.
    ok(&empty, &["snapshot", "import", snap.to_str().unwrap()], "");
    assert_eq!(ok(&empty, &["get", "b/c"], ""), "0203\n");
}

#[test]
fn an_oversized_value_is_refused_before_the_input_is_read_whole() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s");
    let limit = arbor::Config::default().max_value_len;
    // A 200 MB text value, three times the limit, written in 1 MiB pieces.
    let total: usize = 200_000_000;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_arbor"))
        .args(["commit", "--text", "--date", "0", "--message", "m", "--store", s.to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let piece = vec![b'x'; 1 << 20];
    let mut written = stdin.write(b"add big ").unwrap();
    while written < total {
        match stdin.write(&piece[..piece.len().min(total - written)]) {
            Ok(n) => written += n,
            Err(e) => {
                assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
                break;
            }
        }
    }
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("line 1") && err.contains(&format!("maximum of {limit} bytes")), "{err}");
    // arbor stopped reading soon after the limit: the rest of the input was never taken.
    assert!(written < limit + (8 << 20), "arbor read {written} bytes of a value over {limit}");
    assert!(!s.exists());
}

#[test]
fn a_path_deeper_than_the_maximum_is_refused_naming_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s");
    let max = arbor::path::MAX_PATH_STEPS;
    let deep = vec!["s"; 8000].join("/");
    let err = fails(&s, &["commit", "--date", "1", "--message", "m"], &format!("add a 01\nadd {deep} 01\n"), 2);
    assert!(err.contains("line 2") && err.contains("8000 steps") && err.contains(&max.to_string()), "{err}");
    assert!(!s.exists());
    let err = fails(&s, &["commit", "--date", "1", "--message", "m"], &format!("remove {deep}\n"), 2);
    assert!(err.contains("line 1") && err.contains("8000 steps"), "{err}");

    // The deepest path allowed commits and reads back.
    let deepest = vec!["s"; max].join("/");
    ok(&s, &["commit", "--date", "1", "--message", "m"], &format!("add {deepest} 01\n"));
    assert_eq!(ok(&s, &["get", &deepest], ""), "01\n");
    assert!(ok(&s, &["fsck"], "").contains("errors   0"));
    let err = fails(&s, &["get", &deep], "", 2);
    assert!(err.contains("8000 steps"), "{err}");
}

/// The blocks are timed in a process that did not load the initial state (issue 11's
/// honest-bench requirement): the load runs as `arbor replay --blocks 0` of its own, and
/// the summary says so with the values it loaded.
#[test]
fn the_bench_loads_in_a_process_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let args = ["bench", "--quiet", "--blocks", "3", "--state-size", "10000", "--cycle-length", "10", "--out"];
    let mut all = args.to_vec();
    all.push(out.to_str().unwrap());
    let o = support::run(&all, &[], b"");
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let line = text.lines().find(|l| l.starts_with("initial state")).unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains(" 10000 values loaded in "), "{line}");
    assert!(line.ends_with("(by a process of its own)"), "{line}");
    assert!(text.contains("blocks          3 "), "{text}");
    // The load's own report is not left behind.
    assert!(!out.join("load.json").exists());
}

#[test]
fn bench_deletes_only_a_store_it_made() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // Someone's store (or anything) at OUT/store: refused, untouched.
    let theirs = out.join("store");
    std::fs::create_dir_all(&theirs).unwrap();
    std::fs::write(theirs.join("precious"), "keep me").unwrap();
    let args = ["bench", "--quiet", "--blocks", "2", "--state-size", "10000", "--cycle-length", "10", "--out"];
    let mut all = args.to_vec();
    all.push(out.to_str().unwrap());
    let o = support::run(&all, &[], b"");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("not made by arbor bench"), "{err}");
    assert_eq!(std::fs::read_to_string(theirs.join("precious")).unwrap(), "keep me");

    // Its own store, kept by --keep-store, is replaced by the next run and removed after it.
    std::fs::remove_dir_all(&theirs).unwrap();
    let mut keep = all.clone();
    keep.push("--keep-store");
    let o = support::run(&keep, &[], b"");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(theirs.join("control").exists());
    let o = support::run(&all, &[], b"");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!theirs.exists());
}

#[test]
fn iobench_refuses_a_size_without_a_unit() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for (size, why) in [("64", "no unit"), ("64KiB", "at least 1MiB")] {
        let o = support::run(&["iobench", "--quick", "--dir", d, "--cache-size", size], &[], b"");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(why), "{err}");
    }
    assert_eq!(tree_of(dir.path()), Vec::<String>::new());
}

/// Issue 14, item 7: a store whose last chunk was cut below the durable end lost its newest
/// commits but not the older ones; `arbor repair` says what it would drop, changes nothing
/// without `--yes`, and with it leaves a store fsck passes, holding every commit before the cut.
#[test]
fn repair_keeps_the_commits_before_a_cut_and_asks_first() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s");
    let mut hashes = Vec::new();
    for i in 0..6 {
        hashes.push(support::commit(&s, &["--date", &i.to_string(), "--message", "m"], &format!("add k{i} 0{i}\n")));
    }
    let chunk = std::fs::read_dir(s.join("pack")).unwrap().map(|e| e.unwrap().path()).max().unwrap();
    let bytes = std::fs::read(&chunk).unwrap();
    std::fs::write(&chunk, &bytes[..bytes.len() * 2 / 3]).unwrap();
    // Before: the newest commits are unreadable and fsck says so.
    fails(&s, &["fsck"], "", 1);
    let before = tree_of(&s);
    let plan = support::arbor(&s, &["repair"], "");
    assert_eq!(plan.status.code(), Some(1), "a store needing repair: {}", support::stderr(&plan));
    let out = support::stdout(&plan);
    assert!(out.contains("would drop") && out.contains(&hashes[5].to_string()), "{out}");
    assert!(support::stderr(&plan).contains("--yes"), "{}", support::stderr(&plan));
    assert_eq!(tree_of(&s), before);
    assert_eq!(std::fs::read(&chunk).unwrap().len(), bytes.len() * 2 / 3, "the dry run changed the chunk");

    let done = ok(&s, &["repair", "--yes", "--json"], "");
    let v: serde_json::Value = serde_json::from_str(&done).unwrap();
    assert_eq!(v["applied"], true);
    let kept = v["commits_kept"].as_u64().unwrap() as usize;
    assert!((1..6).contains(&kept), "{done}");
    assert_eq!(v["commits_dropped"].as_array().unwrap().len(), 6 - kept);
    ok(&s, &["fsck"], "");
    assert_eq!(ok(&s, &["get", &format!("k{}", kept - 1)], ""), format!("0{}\n", kept - 1));
    assert_eq!(v["last_commit_kept"], hashes[kept - 1].to_string());
    assert!(ok(&s, &["repair"], "").contains("nothing to repair"));
    // Not a store: refused like every other command.
    let err = fails(&dir.path().join("missing"), &["repair", "--yes"], "", 1);
    assert!(err.contains("no store at"), "{err}");
}

#[test]
fn iobench_refuses_sizes_the_machine_cannot_honour() {
    let dir = tempfile::tempdir().unwrap();
    // A --dir that does not exist yet: the free space is that of its nearest ancestor.
    let d = dir.path().join("new/bench");
    let d = d.to_str().unwrap();
    // `--values 5` is refused too, later: a size check that is missing shows as that message
    // instead of the benchmark setting out to grow an impossible store.
    for (flag, size, why) in [
        // Once read as 16 EiB (a saturated cast): a store that size was being grown.
        ("--cache-size", "99999999999999999999TiB", "too large"),
        ("--target-size", "16777216TiB", "too large"),
        ("--cache-size", "1000TiB", "this machine's memory"),
        ("--target-size", "16000000TiB", "free"),
    ] {
        let o = support::run(&["iobench", "--quick", "--values", "5", "--dir", d, flag, size], &[], b"");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(matches!(o.status.code(), Some(1 | 2)), "{flag} {size}: {err}");
        assert!(err.contains(why), "{flag} {size}: {err}");
    }
    assert_eq!(tree_of(dir.path()), Vec::<String>::new());
}

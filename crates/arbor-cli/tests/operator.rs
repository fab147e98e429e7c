//! End-to-end tests of what issue 15 asked for operators: JSON for scripts, Git-like
//! revisions, `ARBOR_STORE`, RFC 3339 dates.

mod support;

use serde_json::Value;
use support::{arbor, commit, fails, ok, run, stderr, stdout};

fn json(store: &std::path::Path, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let out = ok(store, &all, "");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("arbor {args:?} --json: {e}: {out}"))
}

#[test]
fn commit_prints_the_hash_alone_and_its_figures_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    let o = arbor(s, &["commit", "--date", "0", "--message", "m"], "add a 01\nadd b 02\n");
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(arbor::Hash::parse(out.trim()).is_ok(), "{out}");
    assert!(stderr(&o).contains("operations 2"), "{}", stderr(&o));

    let o = arbor(s, &["commit", "--date", "1", "--message", "m", "--json"], "add c 03\n");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["operations"], 1);
    assert!(arbor::Hash::parse(v["commit"].as_str().unwrap()).is_ok(), "{v}");
    assert_eq!(v["commit_hex"].as_str().unwrap().len(), 64);
}

#[test]
fn every_reporting_command_speaks_json() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s");
    let c1 = commit(
        &s,
        &["--date", "0", "--message", "one"],
        "add a 01\nadd big 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff00\n",
    );
    let c2 = commit(&s, &["--date", "60", "--message", "two\nlines", "--author", "me"], "add b 02\n");

    let log = json(&s, &["log"]);
    let hashes: Vec<&str> = log.as_array().unwrap().iter().map(|c| c["commit"].as_str().unwrap()).collect();
    assert_eq!(hashes, vec![c2.to_string(), c1.to_string()]);
    assert_eq!(log[0]["message"], "two\nlines");
    assert_eq!(log[0]["author"], "me");
    assert_eq!(log[0]["date_utc"], "1970-01-01T00:01:00Z");
    assert_eq!(log[0]["parents"][0], c1.to_string());

    let show = json(&s, &["show", &c1.to_string()]);
    assert_eq!(show["commit_hex"], c1.to_hex());
    assert_eq!(show["parents"].as_array().unwrap().len(), 0);

    let heads = json(&s, &["heads"]);
    assert_eq!(heads[0]["name"], "main");
    assert_eq!(heads[0]["commit"], c2.to_string());

    let fsck = json(&s, &["fsck"]);
    assert_eq!((fsck["commits"].as_u64(), fsck["errors"].as_array().map(Vec::len)), (Some(2), Some(0)));

    let stats = json(&s, &["stats"]);
    assert_eq!(stats["commits"], 2);
    let human = ok(&s, &["stats"], "");
    let figure = |label: &str| -> u64 {
        let line = human.lines().find(|l| l.starts_with(label)).unwrap_or_else(|| panic!("{label}: {human}"));
        line[label.len()..].trim().trim_end_matches(" bytes").parse().unwrap()
    };
    assert_eq!(stats["separate_values"].as_u64(), Some(figure("separate values")));
    assert_eq!(stats["inlined_values"].as_u64(), Some(figure("inlined values")));
    assert_eq!(stats["log_bytes"].as_u64(), Some(figure("log size")));
    assert!(stats["log_bytes"].as_u64().unwrap() > 0);

    let audit = json(&s, &["audit"]);
    assert_eq!(audit["commit"], c2.to_string());
    assert_eq!(audit["inlined_values"].as_u64().unwrap() + audit["separate_values"].as_u64().unwrap(), 3);

    // What the second commit appended: its records, by kind and by field, each byte once.
    let appended = json(&s, &["audit", "--appended-after", &c1.to_string()]);
    assert_eq!(appended["commits"], 1);
    let sum = |key: &str| {
        appended[key]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap_or_else(|| v["bytes"].as_u64().unwrap()))
            .sum::<u64>()
    };
    assert_eq!(sum("fields"), appended["bytes"].as_u64().unwrap());
    assert_eq!(sum("kinds"), appended["bytes"].as_u64().unwrap());
    assert_eq!(appended["kinds"]["commits"]["records"], 1);
    assert!(appended["fields"]["inline_values"].as_u64().unwrap() >= 1, "b's value is inline");
    let last = json(&s, &["audit", "--appended-after", &c2.to_string()]);
    assert_eq!(last["commits"], 0);

    let snap = dir.path().join("x.snap");
    let export = json(&s, &["snapshot", "export", "--out", snap.to_str().unwrap()]);
    assert_eq!(export["values"], 3);
    assert_eq!(export["file_bytes"].as_u64(), Some(std::fs::metadata(&snap).unwrap().len()));
    let t = dir.path().join("t");
    let import = json(&t, &["snapshot", "import", snap.to_str().unwrap()]);
    assert_eq!((import["commit"].as_str(), import["written"].as_bool()), (Some(c2.to_string().as_str()), Some(true)));

    let gc = json(&s, &["gc", "--keep", "1"]);
    assert_eq!(gc["commits_dropped"], 1);
    assert_eq!(gc["kept_from"], c2.to_string());
    assert!(gc["disk_bytes_after"].as_u64().is_some());
}

#[test]
fn human_byte_figures_carry_their_unit() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    commit(s, &["--date", "0", "--message", "m"], "add a 01\n");
    let stats = ok(s, &["stats"], "");
    let line = stats.lines().find(|l| l.starts_with("log size")).unwrap_or_else(|| panic!("{stats}"));
    assert!(line.ends_with(" bytes"), "{line}");
    // A small store's sizes in a unit that shows them: its 16 KiB on disk once read "0.0 MiB".
    let gc = ok(s, &["gc", "--keep", "1"], "");
    let disk = gc.lines().find(|l| l.starts_with("disk")).unwrap_or_else(|| panic!("{gc}"));
    let json = json(s, &["gc", "--keep", "1"]);
    assert!(json["disk_bytes_before"].as_u64().unwrap() > 0, "{json}");
    assert!(!disk.contains(" 0.0 "), "{disk}");
    assert!(disk.ends_with(" KiB after") || disk.ends_with(" B after"), "{disk}");
}

#[test]
fn revisions_as_git_users_expect() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    let c: Vec<_> = (0..4)
        .map(|i| commit(s, &["--date", &i.to_string(), "--message", &format!("m{i}")], &format!("add v {i:02x}\n")))
        .collect();
    let shown = |rev: &str| ok(s, &["show", rev], "").lines().next().unwrap().to_string();
    assert_eq!(shown("main"), format!("commit      {}", c[3]));
    assert_eq!(shown("main~1"), format!("commit      {}", c[2]));
    assert_eq!(shown("main~~"), format!("commit      {}", c[1]));
    assert_eq!(shown(&format!("{}~3", c[3])), format!("commit      {}", c[0]));
    // A unique prefix of either spelling.
    let hex = c[1].to_hex();
    assert_eq!(shown(&hex[..12]), format!("commit      {}", c[1]));
    let co = c[2].to_string();
    assert_eq!(shown(&co[..20]), format!("commit      {}", c[2]));
    // `show` alone shows the head.
    assert_eq!(ok(s, &["show"], "").lines().next().unwrap(), format!("commit      {}", c[3]));
    // Too far back, unknown names.
    let err = fails(s, &["show", "main~9"], "", 1);
    assert!(err.contains("main~9") && err.contains("3 steps back"), "{err}");
    assert!(fails(s, &["show", "nosuchhead"], "", 1).contains("unknown revision 'nosuchhead'"));
    // A prefix too short to be taken as one says so, instead of only "no head of that name".
    let err = fails(s, &["show", &hex[..3]], "", 1);
    assert!(err.contains("at least 4"), "{err}");
    // Revisions work wherever a commit is taken.
    assert_eq!(ok(s, &["get", "--commit", "main~2", "v"], ""), "01\n");
    let log = ok(s, &["log", "--commit", "main~1", "-n", "2"], "");
    let listed: Vec<&str> = log.lines().filter(|l| l.starts_with("commit ")).collect();
    assert_eq!(listed, vec![format!("commit {}", c[2]), format!("commit {}", c[1])]);
    let child = commit(s, &["--parent", "main~3", "--date", "9", "--message", "side"], "add w 00\n");
    assert!(ok(s, &["show", &child.to_hex()], "").contains(&format!("parent      {}", c[0])));
}

#[test]
fn an_ambiguous_prefix_lists_the_candidates() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path();
    // Commits until two share their first 4 hex digits (a few hundred, by the birthday bound
    // over 65,536 prefixes), made through the library for speed.
    let store = arbor::Store::open(s).unwrap();
    let tree = store.empty().add(&["a"], &[1]).unwrap();
    let mut seen = std::collections::HashMap::new();
    let (a, b) = (0..5000)
        .find_map(|i| {
            let h = store.commit(&tree, &[], i, "Tezos", "m").unwrap();
            seen.insert(h.to_hex()[..4].to_string(), h).map(|other| (other, h))
        })
        .expect("a shared prefix");
    store.close().unwrap();
    let prefix = &a.to_hex()[..4];
    let err = fails(s, &["show", prefix], "", 2);
    assert!(err.contains("ambiguous") && err.contains(&a.to_hex()) && err.contains(&b.to_hex()), "{err}");
}

#[test]
fn store_from_the_environment_and_rfc3339_dates() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s");
    let env = [("ARBOR_STORE", s.to_str().unwrap())];
    let o = run(&["commit", "--date", "2018-06-30T18:07:32+02:00", "--message", "m"], &env, b"add a 01\n");
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&["show"], &env, b"");
    assert!(stdout(&o).contains("date        2018-06-30T16:07:32Z (1530374852)"), "{}{}", stdout(&o), stderr(&o));
    // --store still wins over the environment.
    let other = dir.path().join("other");
    let o = run(&["heads", "--store", other.to_str().unwrap()], &env, b"");
    assert!(stderr(&o).contains("no store at"), "{}", stderr(&o));
    let o = run(&["commit", "--date", "yesterday", "--message", "m"], &env, b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("RFC 3339"), "{}", stderr(&o));
}

/// Issue 15's reproduction: an imported commit gets a head (`main` in an empty store, the
/// `--head` given otherwise; refused without one), and `gc` keeps every head's commit or
/// refuses naming the heads it would drop. Nothing imported is lost.
#[test]
fn imported_state_survives_garbage_collection() {
    let dir = tempfile::tempdir().unwrap();
    let (s1, s2, fresh) = (dir.path().join("s1"), dir.path().join("s2"), dir.path().join("fresh"));
    let snap = dir.path().join("s2.snap");
    commit(&s1, &["--no-parent", "--date", "0", "--message", "one"], "add version 01\n");
    let two = commit(&s2, &["--no-parent", "--date", "0", "--message", "two"], "add version 02\n");
    ok(&s2, &["snapshot", "export", "--out", snap.to_str().unwrap()], "");

    // Into an empty store: the import becomes `main`.
    let out = ok(&fresh, &["snapshot", "import", snap.to_str().unwrap()], "");
    assert!(out.contains("head        main"), "{out}");
    assert_eq!(json(&fresh, &["heads"])[0]["commit"], two.to_string());

    // Into a store with commits: a head must be named, and the refusal writes nothing.
    let before = support::tree_of(&s1);
    let err = fails(&s1, &["snapshot", "import", snap.to_str().unwrap()], "", 2);
    assert!(err.contains("--head NAME"), "{err}");
    assert_eq!(support::tree_of(&s1), before, "a refused import changed the store");
    let v = json(&s1, &["snapshot", "import", snap.to_str().unwrap(), "--head", "imported"]);
    assert_eq!(v["head"], "imported");
    assert_eq!(v["commit"], two.to_string());

    commit(&s1, &["--date", "5", "--message", "empty"], "");
    // Counting from `main` alone would drop the imported commit: refused, naming the head.
    let err = fails(&s1, &["gc", "--keep", "1", "--from", "main"], "", 1);
    assert!(err.contains("imported"), "{err}");
    // By default every head keeps its window: only commit `one` goes.
    let gc = json(&s1, &["gc", "--keep", "1"]);
    assert_eq!(gc["commits_dropped"], 1, "{gc}");
    let show = json(&s1, &["show", &two.to_string()]);
    assert_eq!(show["commit"], two.to_string());
    let out = ok(&s1, &["get", "--commit", "imported", "version"], "");
    assert_eq!(out.trim(), "02");
    ok(&s1, &["fsck"], "");
}

#[test]
fn replay_sizes_take_units_and_a_baseline_must_be_a_report() {
    let dir = tempfile::tempdir().unwrap();
    let (s, trace) = (dir.path().join("s"), dir.path().join("t.trace"));
    let trace = trace.to_str().unwrap();
    // A bare number is refused before anything runs, as iobench's sizes are.
    let o = arbor(&s, &["replay", trace, "--cache-size", "64"], "");
    assert!(!o.status.success());
    assert!(stderr(&o).contains("has no unit"), "{}", stderr(&o));
    let o = arbor(&s, &["replay", trace, "--cache-mib", "512"], "");
    assert!(stderr(&o).contains("has no unit"), "{}", stderr(&o));
    // A baseline that is not a replay report is refused before the replay, which changes nothing.
    let o = run(&["trace", "generate", "--blocks", "2", "--state-size", "10000", "--out", trace], &[], b"");
    assert!(o.status.success(), "{}", stderr(&o));
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"blocks\": 3}").unwrap();
    let o = arbor(&s, &["replay", trace, "--cache-size", "8MiB", "--baseline", bad.to_str().unwrap()], "");
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--baseline") && stderr(&o).contains("not a replay report"), "{}", stderr(&o));
    assert!(!s.exists(), "a refused replay left a store behind");
}

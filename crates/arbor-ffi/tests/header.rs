//! `include/arbor.h` must be what cbindgen generates from the crate today: this test
//! regenerates it and fails on any difference. `ARBOR_BLESS=1` rewrites the file instead.

use std::path::Path;

#[test]
fn header_matches_the_code() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut generated);
    let generated = String::from_utf8(generated).expect("UTF-8 header");
    let path = crate_dir.join("include/arbor.h");
    if std::env::var_os("ARBOR_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write include/arbor.h");
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if current != generated {
        let line = current.lines().zip(generated.lines()).position(|(a, b)| a != b);
        panic!(
            "include/arbor.h is out of date with crates/arbor-ffi (first difference at line {}); \
             regenerate it with `ARBOR_BLESS=1 cargo test -p arbor-ffi --test header`",
            line.map_or_else(|| "the end".to_string(), |l| (l + 1).to_string())
        );
    }
}

//! Embeds the git revision the crate is built from (`ARBOR_GIT_REVISION`), or `unknown`
//! outside a git checkout (a source archive, a registry download).

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
}

fn main() {
    let revision = git(&["rev-parse", "--short=12", "HEAD"]);
    // Build again when HEAD moves: a commit, a checkout.
    for path in ["HEAD", "logs/HEAD"] {
        if let Some(p) = git(&["rev-parse", "--path-format=absolute", "--git-path", path]) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-env=ARBOR_GIT_REVISION={}", revision.as_deref().unwrap_or("unknown"));
}

#!/usr/bin/env bash
# CI: a few seconds of each fuzz target (fuzz/, cargo-fuzz on libFuzzer; docs/FUZZ.md), when a
# nightly toolchain is present. cargo-fuzz needs nightly; without it this step is skipped, and
# says so. Each target starts from its seed corpus in fuzz/corpus/<target>/ (left unchanged: new
# inputs go to a scratch directory) and fails CI on any crash, panic or timeout.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! rustup toolchain list 2>/dev/null | grep -q nightly; then
  echo "note: SKIPPED: no nightly Rust toolchain, which cargo-fuzz needs (rustup toolchain install nightly)"
  exit 0
fi
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
# Without a sanitizer: the decoders are safe Rust (forbid(unsafe_code)), and AddressSanitizer's
# leak checks slow the store-opening targets tenfold. The default profile keeps debug assertions
# and overflow checks on. One build of every target, then each run.
cargo +nightly fuzz build -s none
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for target in $(cargo +nightly fuzz list); do
  echo "-- fuzz $target (5 s)"
  mkdir -p "$scratch/$target"
  if ! cargo +nightly fuzz run -s none "$target" "$scratch/$target" "fuzz/corpus/$target" -- \
    -max_total_time=5 -timeout=10 -print_final_stats=1 >"$scratch/$target.log" 2>&1; then
    tail -n 60 "$scratch/$target.log" >&2
    echo "fuzz target $target failed: the input is under fuzz/artifacts/$target/" >&2
    exit 1
  fi
  grep -E '^(Done|stat::peak_rss_mb)' "$scratch/$target.log"
done

#!/usr/bin/env bash
# CI for the torture harness (crates/arbor-torture, docs/TORTURE.md): its quick mode, a few
# seeds of writer processes killed at random I/O operations with ENOSPC/EIO injected, each
# crash followed by recovery, fsck and a comparison with the model. Needs nothing beyond
# cargo. About a minute on two cores once built; prints the failing seed and the command that
# replays it on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== torture harness, quick mode (arbor-torture --quick)"
cargo build --release --locked -q -p arbor-torture
target/release/arbor-torture --quick --jobs 2

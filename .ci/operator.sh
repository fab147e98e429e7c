#!/usr/bin/env bash
# CI for the operator branch's additions: arbor-core's optional `serde` feature (no crate of
# the workspace turns it on, so the plain test run does not build it).
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== arbor-core with its serde feature"
cargo clippy --locked -p arbor-core --all-targets --features serde -- -D warnings
cargo test --release --locked -q -p arbor-core --features serde --lib

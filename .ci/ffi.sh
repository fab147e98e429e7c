#!/usr/bin/env bash
# CI for the C ABI (crates/arbor-ffi) and the C and OCaml programs that use it: the header must
# match the code, the C tests run under valgrind and under AddressSanitizer, the OCaml binding
# builds with dune and its tests pass. Installs what a fresh Debian machine lacks.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

need=()
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev make)
command -v make >/dev/null 2>&1 || need+=(make)
command -v valgrind >/dev/null 2>&1 || need+=(valgrind)
command -v ocamlopt >/dev/null 2>&1 || need+=(ocaml-nox)
command -v dune >/dev/null 2>&1 || need+=(ocaml-dune)
if ((${#need[@]})); then
  echo "== ffi: installing ${need[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

echo "== ffi: include/arbor.h matches the code (cbindgen)"
cargo test --release --locked -q -p arbor-ffi --test header
echo "== ffi: library, and a trace with the Rust API's results"
# The library target itself, so that target/release holds libarbor_ffi.a and .so (building only
# the example leaves them in deps/ on a fresh clone).
cargo build --release --locked -q -p arbor-ffi --lib
cargo build --release --locked -q -p arbor-ffi --example ffi_trace
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
target/release/examples/ffi_trace 13 400 "$work/trace.txt"

echo "== ffi: C tests under valgrind"
make -s -C bindings/c/tests LIB="$root/target/release" INCLUDE="$root/crates/arbor-ffi/include" OUT="$work/c_tests"
# Definite leaks and memory errors fail; the Rust runtime's per-thread and pool allocations that
# live until exit are reported as "possibly lost" or "still reachable" and are not errors.
# Valgrind runs one thread at a time; --fair-sched=yes hands the turn round in order. Without it
# the threads test's spinning readers kept the writer waiting: 20 minutes and 7.7 million
# checkouts in one CI run, against 16 seconds for the whole suite with it.
valgrind -q --fair-sched=yes --error-exitcode=3 --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite "$work/c_tests" "$work/trace.txt"
echo "== ffi: C tests under AddressSanitizer and UBSan"
make -s -C bindings/c/tests LIB="$root/target/release" INCLUDE="$root/crates/arbor-ffi/include" \
  OUT="$work/c_tests_asan" SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
"$work/c_tests_asan" "$work/trace.txt"

echo "== ffi: OCaml binding (dune) and its tests, under valgrind"
export ARBOR_LIB_DIR="$root/target/release" ARBOR_INCLUDE_DIR="$root/crates/arbor-ffi/include"
(cd bindings/ocaml && ARBOR_TRACE="$work/trace.txt" dune test --root . 2>&1)
valgrind -q --fair-sched=yes --error-exitcode=3 --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
  --suppressions=bindings/ocaml/test/valgrind.supp bindings/ocaml/_build/default/test/test_arbor.exe "$work/trace.txt"

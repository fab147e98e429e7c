#!/usr/bin/env bash
# CI on a fresh Debian or Ubuntu machine (issue 15): installs what the first cargo build needs
# and such a machine lacks. rustc links every program through the system C compiler (`cc`),
# the zstd and mimalloc crates compile C sources, and cargo fetches crates over HTTPS, which
# needs the CA certificates. Runs before the format and lint steps, which build already.
# Rust itself (rustup) is assumed, as in .ci/run; Go, valgrind and OCaml are the business of
# the steps that use them (.ci/run notes a missing Go, .ci/ffi.sh installs the rest).
set -euo pipefail

need=()
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)
[ -e /etc/ssl/certs/ca-certificates.crt ] || need+=(ca-certificates)
if ((${#need[@]})); then
  echo "== fresh machine: installing ${need[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  # A fresh image has empty package lists: install finds nothing without an update first.
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

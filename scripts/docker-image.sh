#!/usr/bin/env bash
# Builds the node image `ares:latest` FROM scratch (no base image is pulled): the binary, the
# C libraries it links if it is not static, and config/.
#
#   scripts/docker-image.sh              # a static release binary: the image to run
#   scripts/docker-image.sh PROFILE      # static, another cargo profile's binary
#   scripts/docker-image.sh dev          # the debug binary `cargo build`/`cargo test` made, with
#                                        # the host's C libraries it links: no second build
#                                        # (CI's Docker cluster test, tests/docker/cluster.sh)
#
# The image's root is staged in target/docker-root (the Dockerfile copies it); the last line
# printed is the binary's path on the host.
set -euo pipefail
cd "$(dirname "$0")/.."

profile="${1:-release}"
root=target/docker-root
rm -rf "$root"
mkdir -p "$root"
if [ "$profile" = dev ]; then
  cargo build --quiet --bin ares >&2
  bin=target/debug/ares
  # Every library the dynamic linker resolves, and the linker itself, at their host paths.
  ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' \
    | while read -r lib; do cp -L --parents "$lib" "$root/"; done
else
  RUSTFLAGS="-C target-feature=+crt-static" cargo build --quiet --profile "$profile" \
    --target x86_64-unknown-linux-gnu >&2
  bin="target/x86_64-unknown-linux-gnu/${profile}/ares"
  file "$bin" 2> /dev/null | grep -Eq "static(-pie)? linked|statically linked" \
    || { echo "$bin is not static" >&2; exit 1; }
fi
cp "$bin" "$root/ares"
docker build -q -t ares:latest . > /dev/null
echo "$bin"

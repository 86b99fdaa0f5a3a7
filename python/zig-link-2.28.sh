#!/bin/sh
# The linker of the manylinux_2_28 wheel (python/README.md, .ci/run): zig links the extension
# against glibc 2.28's symbol versions whatever glibc the build machine has. Only the final
# link changes (`maturin build ... -- -C linker=python/zig-link-2.28.sh`), so a dev build
# reuses the dependencies `cargo test` built. Needs maturin and the ziglang package on PATH.
exec maturin zig cc -- -g -fno-sanitize=all -target x86_64-linux-gnu.2.28 "$@"

#!/usr/bin/env bash
# RUSTC_WORKSPACE_WRAPPER of scripts/test.sh's build: cargo runs `THIS rustc ARGS...` for the
# workspace's own crates (never for dependencies), and clippy-driver compiles them as rustc does
# while running clippy's lints, warnings denied. So the one build of every target (libraries,
# binaries, unit and integration tests, examples) is also `cargo clippy --all-targets -- -D warnings`,
# without clippy's separate check of every dependency. clippy.toml and the [lints] tables apply as
# with `cargo clippy`. bash, not sh: dash drops environment variables whose names are not shell
# names, such as the CARGO_BIN_EXE_ax-bench that cargo sets for an integration test's `env!`.
exec clippy-driver "$@" -D warnings

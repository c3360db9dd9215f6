//! No code: see `Cargo.toml`. Every package of the workspace depends on this crate so that a
//! shared dependency is built with the same features whichever packages a command builds.

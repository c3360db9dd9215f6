//! Empty: the build-dependencies are here only to unify their features on the host side.

fn main() {}

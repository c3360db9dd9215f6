//! ax-conformance: the worker conformance kit (work in progress).

fn main() {}

//! Compiles `ax/v1/*.proto` with protox (pure Rust, no system `protoc`) and generates tonic code.

use std::{env, fs, path::PathBuf};

use prost::Message as _;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = ["ax/v1/types.proto", "ax/v1/worker.proto", "ax/v1/admin.proto"];
    for f in files {
        println!("cargo:rerun-if-changed={f}");
    }
    let fds = protox::compile(files, ["."])?;
    let out = PathBuf::from(env::var("OUT_DIR")?);
    fs::write(out.join("ax_v1_descriptor.bin"), fds.encode_to_vec())?;
    tonic_prost_build::configure()
        // An rpc named `Connect` would collide with the transport constructor `connect()`.
        .build_transport(false)
        .compile_fds(fds)?;
    otlp_trace_service(&out)?;
    Ok(())
}

/// The OTLP collector's TraceService (client for axd and the SDK, server for the tests' collector),
/// generated from the service alone: its method path is what a collector routes on. The messages
/// are declared empty here and mapped to the hand-written ones of `src/otlp/wire.rs`, which carry
/// the OTLP field numbers of the subset ax sends. Written to OUT_DIR rather than kept under
/// `proto/`, so that buf (which lints ax's own contract) does not take it for part of it.
fn otlp_trace_service(out: &std::path::Path) -> Result<(), Box<dyn std::error::Error>> {
    const PACKAGE: &str = "opentelemetry.proto.collector.trace.v1";
    let dir = out.join("otlp");
    fs::create_dir_all(&dir)?;
    let file = "trace_service.proto";
    fs::write(
        dir.join(file),
        format!(
            "syntax = \"proto3\";\npackage {PACKAGE};\n\
             message ExportTraceServiceRequest {{}}\nmessage ExportTraceServiceResponse {{}}\n\
             service TraceService {{\n  rpc Export(ExportTraceServiceRequest) returns (ExportTraceServiceResponse);\n}}\n"
        ),
    )?;
    let fds = protox::compile([file], [&dir])?;
    tonic_prost_build::configure()
        .build_transport(false)
        .extern_path(format!(".{PACKAGE}.ExportTraceServiceRequest"), "crate::otlp::ExportTraceServiceRequest")
        .extern_path(format!(".{PACKAGE}.ExportTraceServiceResponse"), "crate::otlp::ExportTraceServiceResponse")
        .compile_fds(fds)?;
    Ok(())
}

//! The generated code in `src/gen/` is what the `.proto` files make.
//!
//! It is committed, so that building axd or any client compiles no proto compiler (protox and
//! tonic-prost-build, with their dependencies, were a minute of every fresh build). This test
//! generates it again and fails when the committed copy is stale; `AX_UPDATE_GENERATED=1 cargo test
//! -p ax-proto --test generated` rewrites it.

use std::{fs, path::Path};

use prost::Message as _;

const FILES: [&str; 3] = ["ax/v1/types.proto", "ax/v1/worker.proto", "ax/v1/admin.proto"];

/// The OTLP collector's TraceService (client for axd and the SDK, server for the tests' collector),
/// generated from the service alone: its method path is what a collector routes on. The messages
/// are declared empty here and mapped to the hand-written ones of `src/otlp/wire.rs`, which carry
/// the OTLP field numbers of the subset ax sends. Kept out of `ax/`, so that buf (which lints ax's
/// own contract) does not take it for part of it.
const OTLP_PACKAGE: &str = "opentelemetry.proto.collector.trace.v1";

fn generate(out: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fds = protox::compile(FILES, [root])?;
    fs::write(out.join("ax_v1_descriptor.bin"), fds.encode_to_vec())?;
    tonic_prost_build::configure()
        // An rpc named `Connect` would collide with the transport constructor `connect()`.
        .build_transport(false)
        // Requests that do not decode are INVALID_ARGUMENT, not INTERNAL (see src/codec.rs).
        .codec_path("crate::codec::AxCodec")
        .out_dir(out)
        .compile_fds(fds)?;

    let dir = tempdir("otlp")?;
    let file = "trace_service.proto";
    fs::write(
        dir.join(file),
        format!(
            "syntax = \"proto3\";\npackage {OTLP_PACKAGE};\n\
             message ExportTraceServiceRequest {{}}\nmessage ExportTraceServiceResponse {{}}\n\
             service TraceService {{\n  rpc Export(ExportTraceServiceRequest) returns (ExportTraceServiceResponse);\n}}\n"
        ),
    )?;
    let fds = protox::compile([file], [&dir])?;
    tonic_prost_build::configure()
        .build_transport(false)
        .out_dir(out)
        .extern_path(format!(".{OTLP_PACKAGE}.ExportTraceServiceRequest"), "crate::otlp::ExportTraceServiceRequest")
        .extern_path(format!(".{OTLP_PACKAGE}.ExportTraceServiceResponse"), "crate::otlp::ExportTraceServiceResponse")
        .compile_fds(fds)?;
    fs::remove_dir_all(&dir)?;
    Ok(())
}

fn tempdir(name: &str) -> std::io::Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("ax-proto-{name}-{}-{}", std::process::id(), fastrand::u64(..)));
    fs::create_dir_all(&dir)?;
    Ok(dir)
}

#[test]
fn the_committed_generated_code_is_what_the_protos_make() {
    let fresh = tempdir("gen").expect("temp dir");
    generate(&fresh).expect("generate");
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/gen");
    let update = std::env::var_os("AX_UPDATE_GENERATED").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for entry in fs::read_dir(&fresh).expect("read the generated code") {
        let path = entry.expect("entry").path();
        let name = path.file_name().expect("file name").to_owned();
        let new = fs::read(&path).expect("read");
        let old = fs::read(committed.join(&name)).unwrap_or_default();
        if new != old {
            if update {
                fs::write(committed.join(&name), &new).expect("write");
            } else {
                stale.push(name.to_string_lossy().into_owned());
            }
        }
    }
    fs::remove_dir_all(&fresh).expect("remove the temp dir");
    assert!(
        stale.is_empty(),
        "proto/src/gen is stale ({}): run `AX_UPDATE_GENERATED=1 cargo test -p ax-proto --test generated` and commit it",
        stale.join(", ")
    );
}

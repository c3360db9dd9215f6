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
    Ok(())
}

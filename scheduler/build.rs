//! Embeds the web console's built page (`console/dist`, committed) into axd.
//!
//! Writes `$OUT_DIR/console_assets.rs`: one `Asset` per file of `console/dist`, its URL path, its
//! content type and its bytes through `include_bytes!`, so axd serves the console from its own
//! binary and a clean clone builds without Node.js. `console/README.md` says how `console/dist` is
//! rebuilt; `console/check.sh` fails when the committed copy is stale.

use std::{
    env, fs,
    path::{Path, PathBuf},
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dist = PathBuf::from(env::var("CARGO_MANIFEST_DIR")?).join("../console/dist").canonicalize().map_err(|e| {
        format!("console/dist cannot be read ({e}): it is committed; `npm run build --prefix console` rebuilds it")
    })?;
    println!("cargo:rerun-if-changed={}", dist.display());
    let mut files = Vec::new();
    walk(&dist, &mut files)?;
    files.sort();
    let mut out = String::from("/// The files of `console/dist`, by URL path.\npub static ASSETS: &[Asset] = &[\n");
    let mut has_index = false;
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
        let rel = file.strip_prefix(&dist)?.to_str().ok_or("console/dist: a file name is not UTF-8")?;
        let path = format!("/{}", rel.replace('\\', "/"));
        has_index |= path == "/index.html";
        let ext = file.extension().and_then(|e| e.to_str()).unwrap_or_default();
        let content_type = match ext {
            "html" => "text/html; charset=utf-8",
            "js" => "text/javascript; charset=utf-8",
            "css" => "text/css; charset=utf-8",
            "svg" => "image/svg+xml",
            "png" => "image/png",
            "json" => "application/json",
            "txt" => "text/plain; charset=utf-8",
            other => return Err(format!("console/dist/{rel}: no content type known for .{other}").into()),
        };
        out.push_str(&format!(
            "    Asset {{ path: {path:?}, content_type: {content_type:?}, body: include_bytes!({:?}) }},\n",
            file.display().to_string()
        ));
    }
    out.push_str("];\n");
    if !has_index {
        return Err("console/dist has no index.html".into());
    }
    fs::write(PathBuf::from(env::var("OUT_DIR")?).join("console_assets.rs"), out)?;
    Ok(())
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            walk(&path, files)?;
        } else {
            files.push(path);
        }
    }
    Ok(())
}

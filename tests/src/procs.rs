//! Starting the real binaries (`axd`, `axctl`, example workers) from tests.

use std::{path::PathBuf, process::Command, sync::OnceLock};

/// The directory cargo put this test's binaries in (`target/<profile>`).
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    // target/<profile>/deps/<test-binary>
    exe.parent()
        .and_then(|p| p.parent())
        .expect("target dir")
        .to_path_buf()
}

/// Path of a workspace binary or example, building them once per test process so the test never
/// runs a stale binary.
pub fn bin(name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let profile_release = target_dir().ends_with("release");
        let mut cmd = Command::new(cargo);
        cmd.args([
            "build",
            "--quiet",
            "-p",
            "ax-scheduler",
            "--bin",
            "axd",
            "-p",
            "axctl",
            "--bin",
            "axctl",
            "-p",
            "ax-worker",
            "--examples",
        ]);
        if profile_release {
            cmd.arg("--release");
        }
        let status = cmd.status().expect("run cargo build");
        assert!(status.success(), "cargo build of the binaries failed");
    });
    let direct = target_dir().join(name);
    if direct.exists() {
        return direct;
    }
    target_dir().join("examples").join(name)
}

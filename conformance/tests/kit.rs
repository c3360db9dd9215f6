//! The kit judged by workers whose conformance is known: `raw-worker` (examples/raw-worker.rs, the
//! stubs only) passes the scenarios about what it implements, and the same worker with one flaw —
//! too many credits, no heartbeats — fails them, with a reason that names the broken rule and a
//! non-zero exit. The Rust SDK's run through every scenario is in scripts/conformance.sh.

use std::{path::PathBuf, process::Command};

/// The raw worker example, built next to this test by `cargo test` (examples are built with it).
fn raw_worker() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    // target/<profile>/deps/kit-<hash> -> target/<profile>/examples/raw-worker
    let profile = exe.parent().and_then(|deps| deps.parent()).expect("target/<profile>");
    let path = profile.join("examples").join(format!("raw-worker{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is missing: run the kit's tests with `cargo test -p ax-conformance`, which builds the examples",
        path.display()
    );
    path
}

/// Runs the kit on `scenarios` against the raw worker with `flaw`; returns (exit code, stdout).
fn kit(scenarios: &str, flaw: Option<&str>) -> (Option<i32>, String) {
    kit_with(&[], None, scenarios, flaw)
}

/// [`kit`] with more arguments for the kit and `CI` set to `ci` (unset if `None`).
fn kit_with(args: &[&str], ci: Option<&str>, scenarios: &str, flaw: Option<&str>) -> (Option<i32>, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ax-conformance"));
    match ci {
        Some(v) => cmd.env("CI", v),
        None => cmd.env_remove("CI"),
    };
    cmd.args(args).args(["--only", scenarios, "--"]).arg(raw_worker());
    if let Some(flaw) = flaw {
        cmd.args(["--flaw", flaw]);
    }
    let out = cmd.output().expect("run ax-conformance");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    eprintln!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    (out.status.code(), stdout)
}

/// The line the kit printed for `scenario`.
fn line<'a>(stdout: &'a str, scenario: &str) -> &'a str {
    stdout
        .lines()
        .find(|l| l.split_whitespace().next() == Some(scenario))
        .unwrap_or_else(|| panic!("no line for {scenario} in:\n{stdout}"))
}

#[test]
fn a_worker_that_keeps_the_rules_passes_and_the_kit_exits_zero() {
    let (code, out) = kit("hello-welcome,heartbeats,credits,cancel-during-run,handler-panic", None);
    for s in ["hello-welcome", "heartbeats", "credits", "cancel-during-run", "handler-panic"] {
        assert!(line(&out, s).contains("PASS"), "{s}: {}", line(&out, s));
    }
    assert!(out.contains("conformance: 5 passed, 0 failed, 0 skipped"), "{out}");
    assert_eq!(code, Some(0));
}

/// The raw worker does not hold early assignments, so `early-hold` is skipped: a pass, unless the
/// run is strict (`--strict`, or CI=true as in CI), where a scenario not checked fails the run.
#[test]
fn a_skipped_scenario_fails_the_run_under_strict_and_in_ci() {
    let (code, out) = kit_with(&[], None, "early-hold", None);
    assert!(line(&out, "early-hold").contains("SKIP"), "{out}");
    assert_eq!(code, Some(0), "a skip alone passes a run that is not strict");
    let (code, out) = kit_with(&["--strict"], None, "early-hold", None);
    assert!(out.contains("0 failed, 1 skipped (strict"), "{out}");
    assert_eq!(code, Some(1), "--strict: a skip fails the run");
    let (code, _) = kit_with(&[], Some("true"), "early-hold", None);
    assert_eq!(code, Some(1), "CI=true: a skip fails the run");
}

#[test]
fn a_worker_that_grants_credits_for_slots_it_does_not_have_fails() {
    let (code, out) = kit("credits", Some("over-credit"));
    let l = line(&out, "credits");
    assert!(l.contains("FAIL"), "{l}");
    assert!(l.contains("credits exceeded"), "{l}");
    assert_eq!(code, Some(1), "a failed scenario makes the kit exit non-zero");
}

#[test]
fn a_worker_that_never_heartbeats_fails() {
    let (code, out) = kit("heartbeats", Some("no-heartbeat"));
    let l = line(&out, "heartbeats");
    assert!(l.contains("FAIL"), "{l}");
    assert!(l.contains("heartbeat"), "{l}");
    assert_eq!(code, Some(1));
}

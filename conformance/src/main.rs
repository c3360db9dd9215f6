//! ax-conformance: checks that a worker, written in any language, follows the ax worker protocol.
//!
//! ```text
//! ax-conformance [--endpoint URL] [--only NAME,...] [--capacity N] -- <worker command> <args...>
//! ```
//!
//! It starts its own axd (in this process, on a fresh SQLite file, with short timings) unless
//! `--endpoint` names one, and runs each scenario against a fresh process of the worker, started
//! from the given command line with `AX_ENDPOINT`, `AX_APP`, `AX_WORKER_ID` and `AX_CAPACITY` in its
//! environment. The worker connects to a relay in front of axd, which records every message both
//! ways and can make axd misbehave (a stalled axd, leases not renewed, an assignment read late, a
//! broken stream, a Drain). It prints PASS, FAIL (with the reason) or SKIP per scenario and exits
//! non-zero if any failed, or, with `--strict` (the default when `CI=true`), if any was skipped: in
//! CI a scenario that did not run is a scenario not checked. The contract the worker must meet is in the README section "Writing a
//! worker in any language".

mod axd;
mod checks;
mod relay;
mod scenario;
mod scenarios;
mod worker;

use std::{io::Write as _, path::PathBuf, process::ExitCode, time::Duration};

use anyhow::Context as _;
use clap::Parser;
use tokio::time::Instant;

use crate::{
    scenario::{Kit, S},
    scenarios::Verdict,
};

#[derive(Debug, Parser)]
#[command(
    name = "ax-conformance",
    version,
    about = "Runs the ax worker protocol's conformance scenarios against a worker started from the given command",
    after_help = "The worker gets AX_ENDPOINT, AX_APP, AX_WORKER_ID and AX_CAPACITY in its environment and must serve \
                  the handlers echo, sleep, fail, panic and big-output (see README, \"Writing a worker in any language\")."
)]
struct Args {
    /// An axd to use instead of starting one (plaintext, e.g. http://127.0.0.1:7070). Scenarios then
    /// take its timings (heartbeat interval, lease, ack timeout) from its Welcome.
    #[arg(long)]
    endpoint: Option<String>,
    /// Run only these scenarios (comma-separated); see --list.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// List the scenarios and exit.
    #[arg(long)]
    list: bool,
    /// The capacity the worker is told to announce (AX_CAPACITY).
    #[arg(long, default_value_t = 2)]
    capacity: u32,
    /// Count a skipped scenario as a failure (also when the environment has CI=true).
    #[arg(long)]
    strict: bool,
    /// Keep the worker logs (one file per scenario) in this directory instead of a temporary one.
    #[arg(long)]
    logs: Option<PathBuf>,
    /// The worker's command line.
    #[arg(last = true)]
    worker: Vec<String>,
}

/// What the scenarios came to.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Tally {
    passed: usize,
    failed: usize,
    skipped: usize,
}

impl Tally {
    /// Whether the run passes: nothing failed and, when `strict`, nothing was skipped.
    fn passes(&self, strict: bool) -> bool {
        self.failed == 0 && !(strict && self.skipped > 0)
    }
}

/// Whether SKIP counts as a failure: `--strict`, or CI=true (or 1, as scripts/test.sh reads it)
/// in the environment.
fn strict(flag: bool, ci: Option<&str>) -> bool {
    flag || ci.is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// The longest one scenario may take.
const SCENARIO_LIMIT: Duration = Duration::from_secs(90);

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    if args.list {
        for (name, what) in scenarios::ALL {
            println!("{name:<20} {what}");
        }
        return ExitCode::SUCCESS;
    }
    match run(args).await {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("ax-conformance: {e:#}");
            ExitCode::from(2)
        }
    }
}

async fn run(args: Args) -> anyhow::Result<bool> {
    anyhow::ensure!(
        !args.worker.is_empty(),
        "give the worker's command after `--`, e.g. `ax-conformance -- python3 worker.py`"
    );
    anyhow::ensure!((1..=100).contains(&args.capacity), "--capacity must be 1-100");
    for name in &args.only {
        anyhow::ensure!(scenarios::ALL.iter().any(|(n, _)| n == name), "no scenario named {name:?}; see --list");
    }
    let _ = rustls::crypto::ring::default_provider().install_default();
    let run_id = format!("{:06x}", fastrand::u32(..0x100_0000));
    let temp = std::env::temp_dir().join(format!("ax-conformance-{}-{run_id}", std::process::id()));
    let dir = args.logs.clone().unwrap_or_else(|| temp.clone());
    std::fs::create_dir_all(&dir).with_context(|| format!("{}", dir.display()))?;
    let (own, upstream) = match &args.endpoint {
        Some(e) => (None, e.clone()),
        None => {
            let axd = axd::OwnAxd::start(&temp).await?;
            let e = axd.endpoint.clone();
            (Some(axd), e)
        }
    };
    let admin = axd::Admin::connect(&upstream).await?;
    let kit = Kit {
        upstream,
        admin,
        cmd: args.worker.clone(),
        capacity: args.capacity,
        run_id,
        dir: dir.clone(),
        own_axd: own.is_some(),
    };
    println!(
        "ax-conformance: worker `{}` against {} (logs in {})",
        args.worker.join(" "),
        if own.is_some() { format!("its own axd at {}", kit.upstream) } else { kit.upstream.clone() },
        dir.display()
    );
    let strict = strict(args.strict, std::env::var("CI").ok().as_deref());
    let mut tally = Tally::default();
    for (name, _) in scenarios::ALL {
        if !args.only.is_empty() && !args.only.iter().any(|o| o == name) {
            continue;
        }
        print!("{name:<20} ");
        let _ = std::io::stdout().flush();
        let started = Instant::now();
        let (verdict, tail) = run_one(&kit, name).await;
        let took = format!("{:.1}s", started.elapsed().as_secs_f64());
        match verdict {
            Ok(Verdict::Pass(note)) => {
                tally.passed += 1;
                println!("PASS  ({took}) {note}");
            }
            Ok(Verdict::Skip(why)) => {
                tally.skipped += 1;
                println!("SKIP  {why}{}", if strict { " (a failure under --strict)" } else { "" });
            }
            Err(e) => {
                tally.failed += 1;
                println!("FAIL  ({took}) {e:#}");
                if !tail.trim().is_empty() {
                    println!("      worker output (last lines, all in {}):", dir.join(format!("{name}.log")).display());
                    for line in tail.lines() {
                        println!("      | {line}");
                    }
                }
            }
        }
    }
    let Tally { passed, failed, skipped } = tally;
    println!(
        "conformance: {passed} passed, {failed} failed, {skipped} skipped{}",
        if strict { " (strict: a skip fails the run)" } else { "" }
    );
    if let Some(axd) = own {
        axd.stop().await;
    }
    // The temporary directory holds axd's database and, without --logs, the worker logs: kept
    // when a scenario failed and the logs are in it.
    if args.logs.is_some() || failed == 0 {
        let _ = std::fs::remove_dir_all(&temp);
    }
    Ok(tally.passes(strict))
}

/// Runs one scenario on a fresh worker, then checks the rules every scenario must keep.
async fn run_one(kit: &Kit, name: &str) -> (anyhow::Result<Verdict>, String) {
    let mut s = match S::start(kit, name).await {
        Ok(s) => s,
        Err(e) => {
            let tail = worker_tail(kit, name);
            return (Err(e.context("starting the worker")), tail);
        }
    };
    let verdict = match tokio::time::timeout(SCENARIO_LIMIT, scenarios::run(name, &mut s)).await {
        Ok(v) => v,
        Err(_) => Err(anyhow::anyhow!("did not finish within {SCENARIO_LIMIT:?}")),
    };
    let broken = checks::all(&s.log());
    let tail = s.finish().await;
    let verdict = match (verdict, broken) {
        (v, Ok(())) => v,
        (Ok(_), Err(rule)) => Err(anyhow::anyhow!(rule)),
        (Err(e), Err(rule)) => Err(e.context(rule)),
    };
    (verdict, tail)
}

fn worker_tail(kit: &Kit, name: &str) -> String {
    let text = std::fs::read_to_string(kit.dir.join(format!("{name}.log"))).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skip_fails_the_run_only_when_strict() {
        let t = |passed, failed, skipped| Tally { passed, failed, skipped };
        assert!(t(3, 0, 0).passes(false) && t(3, 0, 0).passes(true));
        assert!(t(3, 0, 1).passes(false));
        assert!(!t(3, 0, 1).passes(true));
        assert!(!t(3, 1, 0).passes(false) && !t(3, 1, 0).passes(true));
        assert!(!t(0, 1, 1).passes(false));
    }

    #[test]
    fn ci_true_makes_the_run_strict() {
        assert!(strict(true, None));
        assert!(strict(false, Some("true")));
        assert!(strict(false, Some("TRUE")));
        assert!(strict(false, Some("1")));
        assert!(!strict(false, Some("false")));
        assert!(!strict(false, Some("")));
        assert!(!strict(false, None));
    }
}

//! Small measuring helpers shared by the scenarios: percentiles, and a process's memory and CPU
//! time read from /proc.

use std::time::Instant;

use anyhow::Context as _;

/// p50 / p99 / max of a sample, in the sample's unit.
#[derive(Debug, Clone, Copy, Default)]
pub struct Spread {
    /// Samples.
    pub n: usize,
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest.
    pub max: f64,
}

impl Spread {
    /// Summarizes `v` (sorted in place); all zero when empty.
    pub fn of(v: &mut [f64]) -> Spread {
        if v.is_empty() {
            return Spread::default();
        }
        v.sort_by(f64::total_cmp);
        let at = |p: f64| v[((v.len() as f64 - 1.0) * p).round() as usize];
        Spread { n: v.len(), p50: at(0.5), p99: at(0.99), max: at(1.0) }
    }

    /// Adds `<name> p50`, `p99` and `max` rows (one decimal) to a report's figures.
    pub fn rows(&self, name: &str, figures: &mut Vec<(String, serde_json::Value)>) {
        for (k, v) in [("p50", self.p50), ("p99", self.p99), ("max", self.max)] {
            figures.push((format!("{name} {k}"), round1(v)));
        }
    }
}

/// The median of a sample (the mean of the middle two for an even count); 0 when empty.
pub fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// A number rounded to one decimal, as JSON.
pub fn round1(v: f64) -> serde_json::Value {
    serde_json::json!((v * 10.0).round() / 10.0)
}

/// A field of `/proc/<pid>/status` given in kB, e.g. `VmRSS`.
pub fn status_kb(pid: u32, field: &str) -> anyhow::Result<u64> {
    ax_tests::procs::proc_status_kib(pid, field).with_context(|| format!("no {field} in /proc/{pid}/status"))
}

/// A process's CPU time (user + system, all threads) at one moment.
pub struct Cpu {
    ticks: u64,
    at: Instant,
}

/// CPU used over a stretch of wall-clock time.
pub struct CpuUse {
    /// CPU seconds.
    pub cpu: f64,
    /// Wall-clock seconds.
    pub wall: f64,
}

impl CpuUse {
    /// Percent of one core.
    pub fn percent(&self) -> f64 {
        self.cpu / self.wall * 100.0
    }
}

impl Cpu {
    /// Reads utime and stime from `/proc/<pid>/stat`.
    pub fn sample(pid: u32) -> anyhow::Result<Cpu> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).context("reading axd's /proc stat")?;
        let at = Instant::now();
        // The command name may hold spaces and parentheses: fields are counted after its last ')'.
        let rest = &stat[stat.rfind(')').context("malformed /proc stat")? + 1..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // Field 3 (state) comes first here, so utime (14) and stime (15) are at 11 and 12.
        let field = |i: usize| -> anyhow::Result<u64> {
            fields.get(i).and_then(|f| f.parse().ok()).context("malformed /proc stat")
        };
        Ok(Cpu { ticks: field(11)? + field(12)?, at })
    }

    /// No CPU time yet: the base for a process followed from its start.
    pub fn zero() -> Cpu {
        Cpu { ticks: 0, at: Instant::now() }
    }

    /// CPU used from `earlier` to this sample.
    pub fn since(&self, earlier: &Cpu, ticks_per_sec: f64) -> CpuUse {
        CpuUse {
            cpu: self.ticks.saturating_sub(earlier.ticks) as f64 / ticks_per_sec,
            wall: self.at.duration_since(earlier.at).as_secs_f64(),
        }
    }
}

/// Clock ticks per second of /proc CPU times.
pub fn ticks_per_second() -> f64 {
    rustix::param::clock_ticks_per_second() as f64
}

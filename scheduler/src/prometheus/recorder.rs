//! A [`metrics::Recorder`] that keeps every series in memory and renders the Prometheus text
//! exposition format (version 0.0.4).
//!
//! Why not `metrics-exporter-prometheus`: without its default features it is exactly this, but its
//! `metrics-util` 0.20 brings rand 0.9 and hashbrown 0.16 beside the rand 0.8 and hashbrown 0.15 the
//! workspace already builds (and 0.16 of the exporter brings thiserror 1). The part axd needs is a
//! map from key to atomic and a text renderer: about 200 lines, no dependency.
//!
//! Cost: a handle (`Counter`, `Gauge`, `Histogram`) updates an atomic without a lock. Looking a
//! series up (what `metrics::counter!` does each time it runs) takes a read lock on the map, once
//! per series and round of a loop, not per instance: callers aggregate first.

use std::{
    collections::HashMap,
    fmt::Write as _,
    sync::{
        Arc, RwLock,
        atomic::{AtomicU64, Ordering},
    },
};

use metrics::{Counter, Gauge, Histogram, HistogramFn, Key, KeyName, Metadata, SharedString, Unit};

/// Upper bounds (seconds) of every histogram's buckets: from 1 ms (a claim on an idle database) to
/// 60 s (a fire that waited for a worker).
pub const BUCKETS: [f64; 14] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 60.0];

/// A histogram with the fixed [`BUCKETS`]: a count per bucket, the sum and the count.
#[derive(Debug, Default)]
pub struct Buckets {
    counts: [AtomicU64; BUCKETS.len()],
    /// Observations above the last bucket are only in `count`.
    count: AtomicU64,
    /// f64 bits.
    sum: AtomicU64,
}

impl HistogramFn for Buckets {
    fn record(&self, value: f64) {
        if let Some(i) = BUCKETS.iter().position(|b| value <= *b) {
            self.counts[i].fetch_add(1, Ordering::Relaxed);
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        let _ = self
            .sum
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |bits| Some((f64::from_bits(bits) + value).to_bits()));
    }
}

#[derive(Default)]
struct Series {
    counters: HashMap<Key, Arc<AtomicU64>>,
    /// f64 bits (the encoding `metrics` uses for `AtomicU64` gauges).
    gauges: HashMap<Key, Arc<AtomicU64>>,
    histograms: HashMap<Key, Arc<Buckets>>,
    help: HashMap<String, String>,
}

/// Every series this process recorded.
#[derive(Default)]
pub struct Registry {
    series: RwLock<Series>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry").finish_non_exhaustive()
    }
}

fn get_or_insert<T: Default>(
    lock: &RwLock<Series>,
    key: &Key,
    map: fn(&mut Series) -> &mut HashMap<Key, Arc<T>>,
    read: fn(&Series) -> &HashMap<Key, Arc<T>>,
) -> Arc<T> {
    if let Some(v) = read(&lock.read().unwrap_or_else(|p| p.into_inner())).get(key) {
        return v.clone();
    }
    let mut w = lock.write().unwrap_or_else(|p| p.into_inner());
    map(&mut w).entry(key.clone()).or_default().clone()
}

impl Registry {
    fn describe(&self, key: KeyName, description: SharedString) {
        let mut w = self.series.write().unwrap_or_else(|p| p.into_inner());
        w.help.insert(key.as_str().to_owned(), description.to_string());
    }

    /// The Prometheus text of every series, families sorted by name, series by labels.
    pub fn render(&self) -> String {
        let s = self.series.read().unwrap_or_else(|p| p.into_inner());
        let mut families: Vec<(&str, &'static str)> = Vec::new();
        families.extend(s.counters.keys().map(|k| (k.name(), "counter")));
        families.extend(s.gauges.keys().map(|k| (k.name(), "gauge")));
        families.extend(s.histograms.keys().map(|k| (k.name(), "histogram")));
        families.sort_unstable();
        families.dedup();
        let mut out = String::with_capacity(4096);
        for (name, kind) in families {
            if let Some(help) = s.help.get(name) {
                let _ = writeln!(out, "# HELP {name} {}", help.replace('\\', "\\\\").replace('\n', "\\n"));
            }
            let _ = writeln!(out, "# TYPE {name} {kind}");
            match kind {
                "counter" => {
                    for (labels, v) in sorted(&s.counters, name) {
                        let _ = writeln!(out, "{name}{} {}", braces(&labels, None), v.load(Ordering::Relaxed));
                    }
                }
                "gauge" => {
                    for (labels, v) in sorted(&s.gauges, name) {
                        let v = f64::from_bits(v.load(Ordering::Relaxed));
                        let _ = writeln!(out, "{name}{} {}", braces(&labels, None), number(v));
                    }
                }
                _ => {
                    for (labels, h) in sorted(&s.histograms, name) {
                        let mut cumulative = 0;
                        for (i, le) in BUCKETS.iter().enumerate() {
                            cumulative += h.counts[i].load(Ordering::Relaxed);
                            let le = number(*le);
                            let _ = writeln!(out, "{name}_bucket{} {cumulative}", braces(&labels, Some(&le)));
                        }
                        let count = h.count.load(Ordering::Relaxed);
                        let _ = writeln!(out, "{name}_bucket{} {count}", braces(&labels, Some("+Inf")));
                        let sum = f64::from_bits(h.sum.load(Ordering::Relaxed));
                        let _ = writeln!(out, "{name}_sum{} {}", braces(&labels, None), number(sum));
                        let _ = writeln!(out, "{name}_count{} {count}", braces(&labels, None));
                    }
                }
            }
        }
        out
    }
}

/// The series of family `name` as (escaped `k="v"` pairs, value), sorted by labels.
fn sorted<'a, T>(map: &'a HashMap<Key, Arc<T>>, name: &str) -> Vec<(String, &'a Arc<T>)> {
    let mut v: Vec<(String, &Arc<T>)> = map
        .iter()
        .filter(|(k, _)| k.name() == name)
        .map(|(k, v)| {
            let pairs: Vec<String> = k.labels().map(|l| format!("{}=\"{}\"", l.key(), escape(l.value()))).collect();
            (pairs.join(","), v)
        })
        .collect();
    v.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    v
}

/// `{labels}` with `le` appended for a histogram bucket; nothing when both are empty.
fn braces(labels: &str, le: Option<&str>) -> String {
    match (labels.is_empty(), le) {
        (true, None) => String::new(),
        (true, Some(le)) => format!("{{le=\"{le}\"}}"),
        (false, None) => format!("{{{labels}}}"),
        (false, Some(le)) => format!("{{{labels},le=\"{le}\"}}"),
    }
}

/// A label value as the text format wants it: backslash, double quote and newline escaped.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".to_owned()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf".to_owned() } else { "-Inf".to_owned() }
    } else {
        format!("{v}")
    }
}

/// The recorder installed as the process's global one: every call goes to the shared [`Registry`].
#[derive(Debug, Clone, Default)]
pub struct Recorder(pub Arc<Registry>);

impl metrics::Recorder for Recorder {
    fn describe_counter(&self, key: KeyName, _unit: Option<Unit>, description: SharedString) {
        self.0.describe(key, description);
    }

    fn describe_gauge(&self, key: KeyName, _unit: Option<Unit>, description: SharedString) {
        self.0.describe(key, description);
    }

    fn describe_histogram(&self, key: KeyName, _unit: Option<Unit>, description: SharedString) {
        self.0.describe(key, description);
    }

    fn register_counter(&self, key: &Key, _metadata: &Metadata<'_>) -> Counter {
        Counter::from_arc(get_or_insert(&self.0.series, key, |s| &mut s.counters, |s| &s.counters))
    }

    fn register_gauge(&self, key: &Key, _metadata: &Metadata<'_>) -> Gauge {
        Gauge::from_arc(get_or_insert(&self.0.series, key, |s| &mut s.gauges, |s| &s.gauges))
    }

    fn register_histogram(&self, key: &Key, _metadata: &Metadata<'_>) -> Histogram {
        Histogram::from_arc(get_or_insert(&self.0.series, key, |s| &mut s.histograms, |s| &s.histograms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_render_as_prometheus_text_with_cumulative_buckets() {
        let r = Recorder::default();
        metrics::with_local_recorder(&r, || {
            metrics::describe_counter!("ax_test_total", "Things.\nCounted.");
            metrics::counter!("ax_test_total", "app" => "b", "status" => "OK").increment(2);
            metrics::counter!("ax_test_total", "app" => "a\"x", "status" => "OK").increment(1);
            metrics::counter!("ax_test_total", "app" => "b", "status" => "OK").increment(3);
            metrics::gauge!("ax_test_gauge").set(1.5);
            let h = metrics::histogram!("ax_test_seconds", "loop" => "trigger");
            h.record(0.003_906_25);
            h.record(0.015_625);
            h.record(100.0);
        });
        let text = r.0.render();
        let expected_counter = "# HELP ax_test_total Things.\\nCounted.\n# TYPE ax_test_total counter\n\
                                ax_test_total{app=\"a\\\"x\",status=\"OK\"} 1\nax_test_total{app=\"b\",status=\"OK\"} 5\n";
        assert!(text.contains(expected_counter), "{text}");
        assert!(text.contains("# TYPE ax_test_gauge gauge\nax_test_gauge 1.5\n"), "{text}");
        for line in [
            "ax_test_seconds_bucket{loop=\"trigger\",le=\"0.0025\"} 0",
            "ax_test_seconds_bucket{loop=\"trigger\",le=\"0.005\"} 1",
            "ax_test_seconds_bucket{loop=\"trigger\",le=\"0.025\"} 2",
            "ax_test_seconds_bucket{loop=\"trigger\",le=\"60\"} 2",
            "ax_test_seconds_bucket{loop=\"trigger\",le=\"+Inf\"} 3",
            "ax_test_seconds_sum{loop=\"trigger\"} 100.01953125",
            "ax_test_seconds_count{loop=\"trigger\"} 3",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
    }
}

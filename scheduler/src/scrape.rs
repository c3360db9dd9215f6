//! What a Prometheus scrape of this axd reads at the moment it asks: worker streams and their
//! credits (this axd's registry), database pool usage (this axd's pools) and the PENDING backlog
//! (the database: every axd reports the same numbers), read on a connection of its own
//! (`Pools::metrics`), so that a busy admin pool neither delays scrapes nor is delayed by them. Counters and histograms are recorded where
//! things happen (see [`crate::prometheus`]).

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::{Arc, Mutex},
    time::Duration,
};

use crate::{
    core::Core,
    prometheus::{self as p, http::Scrape, recorder::Registry},
};

/// Longest a scrape waits for the backlog query; past it the last numbers are shown.
const BACKLOG_TIMEOUT: Duration = Duration::from_secs(2);
/// How long one reading of the backlog serves the scrapes that follow: however many scrape, the
/// database answers one backlog query per this interval, one at a time.
const BACKLOG_MAX_AGE: Duration = Duration::from_secs(5);

/// A value loaded at most once per `max_age`: callers that come while it is fresh share it, and
/// callers that come while it loads wait for that load instead of starting their own.
struct Every<T> {
    max_age: Duration,
    last: tokio::sync::Mutex<Option<(std::time::Instant, T)>>,
}

impl<T: Clone> Every<T> {
    fn new(max_age: Duration) -> Self {
        Every { max_age, last: tokio::sync::Mutex::new(None) }
    }

    /// The value as of `now`: the last one if it is younger than `max_age`, else what `load`
    /// gives (None: the load failed, and the next caller tries again).
    async fn get<F, Fut>(&self, now: std::time::Instant, load: F) -> Option<T>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Option<T>>,
    {
        let mut last = self.last.lock().await;
        if let Some((at, v)) = &*last
            && now.saturating_duration_since(*at) < self.max_age
        {
            return Some(v.clone());
        }
        let v = load().await?;
        *last = Some((now, v.clone()));
        Some(v)
    }
}

/// Apps seen by earlier scrapes, so that an app that went away reads 0 instead of its last value.
#[derive(Debug, Default)]
struct Seen {
    streams: BTreeSet<String>,
    pending: BTreeSet<String>,
}

/// The [`Scrape`] of this axd.
pub fn scrape(core: Arc<Core>, registry: Arc<Registry>) -> Scrape {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let backlog = Arc::new(Every::new(BACKLOG_MAX_AGE));
    Arc::new(move || {
        let (core, registry, seen, backlog) = (core.clone(), registry.clone(), seen.clone(), backlog.clone());
        Box::pin(async move {
            refresh(&core, &seen, &backlog).await;
            registry.render()
        })
    })
}

fn set_by_app(name: &'static str, values: &BTreeMap<String, u64>, seen: &mut BTreeSet<String>) {
    for app in seen.iter().filter(|a| !values.contains_key(*a)) {
        metrics::gauge!(name, "app" => app.clone()).set(0.0);
    }
    for (app, v) in values {
        metrics::gauge!(name, "app" => app.clone()).set(*v as f64);
    }
}

async fn refresh(core: &Core, seen: &Mutex<Seen>, backlog: &Every<BTreeMap<String, u64>>) {
    let mut streams: BTreeMap<String, u64> = BTreeMap::new();
    let mut granted: BTreeMap<String, u64> = BTreeMap::new();
    let mut in_use: BTreeMap<String, u64> = BTreeMap::new();
    for s in core.registry.all() {
        let (free, busy) = (u64::from(s.credits()), u64::from(s.in_flight()));
        *streams.entry(s.app.clone()).or_default() += 1;
        *granted.entry(s.app.clone()).or_default() += free + busy;
        *in_use.entry(s.app.clone()).or_default() += busy;
    }
    let pools = &core.pools;
    for store in pools.distinct() {
        let (role, busy, max) = store.usage();
        metrics::gauge!(p::POOL_IN_USE, "role" => role).set(f64::from(busy));
        metrics::gauge!(p::POOL_MAX, "role" => role).set(f64::from(max));
    }
    let pending = backlog
        .get(std::time::Instant::now(), || async {
            match tokio::time::timeout(BACKLOG_TIMEOUT, pools.metrics.pending_by_app()).await {
                Ok(Ok(rows)) => Some(rows.into_iter().collect::<BTreeMap<String, u64>>()),
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "metrics: reading the PENDING backlog failed");
                    None
                }
                Err(_) => {
                    tracing::warn!("metrics: reading the PENDING backlog took over {BACKLOG_TIMEOUT:?}");
                    None
                }
            }
        })
        .await;
    let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
    set_by_app(p::WORKER_STREAMS, &streams, &mut seen.streams);
    set_by_app(p::CREDITS_GRANTED, &granted, &mut seen.streams);
    set_by_app(p::CREDITS_IN_USE, &in_use, &mut seen.streams);
    seen.streams.extend(streams.into_keys());
    // Unread (failed or too slow): the gauges keep their last numbers.
    if let Some(rows) = pending {
        set_by_app(p::PENDING, &rows, &mut seen.pending);
        seen.pending.extend(rows.into_keys());
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    /// However many scrapes come, the backlog is read once per interval, one read at a time.
    #[tokio::test]
    async fn the_backlog_is_read_once_per_interval_however_many_scrape() {
        let every = Arc::new(Every::new(Duration::from_secs(5)));
        let loads = Arc::new(AtomicU32::new(0));
        let t0 = std::time::Instant::now();
        let get = |at: std::time::Instant| {
            let (every, loads) = (every.clone(), loads.clone());
            async move {
                every
                    .get(at, || async {
                        let n = loads.fetch_add(1, Ordering::SeqCst) + 1;
                        tokio::task::yield_now().await;
                        Some(n)
                    })
                    .await
            }
        };
        let at_once: Vec<_> = (0..8).map(|_| tokio::spawn(get(t0))).collect();
        for h in at_once {
            assert_eq!(h.await.expect("scrape"), Some(1), "eight scrapes at once share one read");
        }
        assert_eq!(get(t0 + Duration::from_millis(4_900)).await, Some(1), "still fresh");
        assert_eq!(get(t0 + Duration::from_secs(5)).await, Some(2), "read again once the interval passed");
        assert_eq!(loads.load(Ordering::SeqCst), 2);
        let failing = Every::<u32>::new(Duration::from_secs(5));
        assert_eq!(failing.get(t0, || async { None }).await, None, "a failed read is not kept");
        assert_eq!(failing.get(t0, || async { Some(7) }).await, Some(7), "the next scrape reads again");
    }
}

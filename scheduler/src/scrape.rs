//! What a Prometheus scrape of this axd reads at the moment it asks: worker streams and their
//! credits (this axd's registry), database pool usage (this axd's pools) and the PENDING backlog
//! (the database: every axd reports the same numbers). Counters and histograms are recorded where
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

/// Apps seen by earlier scrapes, so that an app that went away reads 0 instead of its last value.
#[derive(Debug, Default)]
struct Seen {
    streams: BTreeSet<String>,
    pending: BTreeSet<String>,
}

/// The [`Scrape`] of this axd.
pub fn scrape(core: Arc<Core>, registry: Arc<Registry>) -> Scrape {
    let seen = Arc::new(Mutex::new(Seen::default()));
    Arc::new(move || {
        let (core, registry, seen) = (core.clone(), registry.clone(), seen.clone());
        Box::pin(async move {
            refresh(&core, &seen).await;
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

async fn refresh(core: &Core, seen: &Mutex<Seen>) {
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
    for store in [&pools.admin, &pools.trigger, &pools.dispatch, &pools.workers, &pools.sweeper] {
        let (role, busy, max) = store.usage();
        metrics::gauge!(p::POOL_IN_USE, "role" => role).set(f64::from(busy));
        metrics::gauge!(p::POOL_MAX, "role" => role).set(f64::from(max));
    }
    let pending = tokio::time::timeout(BACKLOG_TIMEOUT, pools.admin.pending_by_app()).await;
    let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
    set_by_app(p::WORKER_STREAMS, &streams, &mut seen.streams);
    set_by_app(p::CREDITS_GRANTED, &granted, &mut seen.streams);
    set_by_app(p::CREDITS_IN_USE, &in_use, &mut seen.streams);
    seen.streams.extend(streams.into_keys());
    match pending {
        Ok(Ok(rows)) => {
            let rows: BTreeMap<String, u64> = rows.into_iter().collect();
            set_by_app(p::PENDING, &rows, &mut seen.pending);
            seen.pending.extend(rows.into_keys());
        }
        Ok(Err(e)) => tracing::warn!(error = %e, "metrics: reading the PENDING backlog failed"),
        Err(_) => tracing::warn!("metrics: reading the PENDING backlog took over {BACKLOG_TIMEOUT:?}"),
    }
}

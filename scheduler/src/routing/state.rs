//! What one axd remembers between dispatch rounds about routing inputs that live in the database:
//! which workers are cooling down, and which workers the cluster has (for consistent hashing and
//! retries elsewhere). Both are read from the database at most every [`REFRESH`] by the dispatcher
//! and updated at once when this axd itself commits a change, so another axd's change reaches this
//! one within [`REFRESH`]. Nothing here is a source of truth: a stale entry delays or redirects a
//! dispatch, it never lets a limit be exceeded (those are checked under row locks in the claim).

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

use super::cooldown::CooldownDefaults;
use crate::model::{Ts, WorkerRecord, WorkerStreak};

/// How often the dispatcher reads cooldowns and the cluster's workers while it has work.
pub const REFRESH: Duration = Duration::from_secs(1);

/// (app, worker id, handler).
type Key = (String, String, String);

#[derive(Debug, Default)]
struct Cooling {
    /// Until when each cools down, and since when.
    until: HashMap<Key, (Ts, Ts)>,
    read_at: Option<Instant>,
    /// Streaks this axd noted (committed) and a read that began before them may not hold: each with
    /// its number in `noted`, re-applied over such a read ([`RoutingState::set_streaks`]).
    recent: HashMap<Key, (u64, Option<(Ts, Ts)>)>,
    /// Streak changes noted so far.
    noted: u64,
}

/// Whether a worker is cooling down for a handler now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoolingNow {
    /// Not cooling down.
    No,
    /// Cooling down until then: pass it over.
    Until(Ts),
    /// Its cooldown runs until `until`, but the floor releases it: `cooling` of the `serving`
    /// live workers serving the handler are cooling, more than `--cooldown-max-share` allows.
    Released { until: Ts, cooling: usize, serving: usize },
}

fn began(s: &WorkerStreak, until: Ts) -> Ts {
    s.cooldown.map_or(until, |d| crate::model::sub(until, d))
}

#[derive(Debug, Default)]
struct Workers {
    all: Vec<WorkerRecord>,
    read_at: Option<Instant>,
    /// Sessions this axd opened or closed so far.
    changes: u64,
    /// `changes` when the read in `all` began: a session opened since may be missing from it.
    read_changes: u64,
}

/// Routing knowledge of one axd.
#[derive(Debug, Default)]
pub struct RoutingState {
    /// Cooldown defaults of this axd (`--cooldown-after`, `--cooldown`, `--cooldown-max`).
    pub cooldown: CooldownDefaults,
    cooling: Mutex<Cooling>,
    workers: Mutex<Workers>,
}

impl RoutingState {
    /// State with these cooldown defaults and nothing known yet.
    pub fn new(cooldown: CooldownDefaults) -> Self {
        RoutingState { cooldown, ..Default::default() }
    }

    /// Until when `worker` of `app` is cooling down for `handler`, if it is at `now` and the floor
    /// does not release it (see [`RoutingState::cooling`]).
    pub fn cooling_until(&self, app: &str, worker: &str, handler: &str, now: Ts) -> Option<Ts> {
        match self.cooling(app, worker, handler, now) {
            CoolingNow::Until(u) => Some(u),
            CoolingNow::No | CoolingNow::Released { .. } => None,
        }
    }

    /// Whether `worker` of `app` is cooling down for `handler` at `now`, with the floor applied:
    /// of the cluster's live workers serving the handler (as last read), at most
    /// `--cooldown-max-share` cool at once ([`super::cooldown::released`]).
    pub fn cooling(&self, app: &str, worker: &str, handler: &str, now: Ts) -> CoolingNow {
        let c = self.cooling.lock().unwrap_or_else(|p| p.into_inner());
        // Keys are owned strings; a lookup by borrowed parts needs a tuple of Strings.
        let Some(&(until, _)) = c.until.get(&(app.to_owned(), worker.to_owned(), handler.to_owned())) else {
            return CoolingNow::No;
        };
        if until <= now {
            return CoolingNow::No;
        }
        let w = self.workers.lock().unwrap_or_else(|p| p.into_inner());
        let mut serving: Vec<&str> = w
            .all
            .iter()
            .filter(|r| r.app == app && r.handlers.iter().any(|h| h == handler))
            .map(|r| r.worker_id.as_str())
            .collect();
        serving.sort_unstable();
        serving.dedup();
        let cooling: Vec<(&str, Ts)> = serving
            .iter()
            .filter_map(|sw| {
                let (u, b) = c.until.get(&(app.to_owned(), (*sw).to_owned(), handler.to_owned()))?;
                (*u > now).then_some((*sw, *b))
            })
            .collect();
        if super::cooldown::released(&cooling, serving.len(), self.cooldown.max_share).contains(&worker) {
            CoolingNow::Released { until, cooling: cooling.len(), serving: serving.len() }
        } else {
            CoolingNow::Until(until)
        }
    }

    /// The (app, handler) pairs whose cooldowns the floor is not applying at `now`: more of their
    /// live workers are failing them than `--cooldown-max-share` lets cool at once.
    pub fn floored(&self, now: Ts) -> Vec<(String, String)> {
        let pairs: std::collections::BTreeSet<(String, String)> = {
            let c = self.cooling.lock().unwrap_or_else(|p| p.into_inner());
            c.until.iter().filter(|(_, (u, _))| *u > now).map(|((a, _, h), _)| (a.clone(), h.clone())).collect()
        };
        pairs.into_iter().filter(|(app, handler)| self.any_released(app, handler, now)).collect()
    }

    fn any_released(&self, app: &str, handler: &str, now: Ts) -> bool {
        let workers: Vec<String> = {
            let w = self.workers.lock().unwrap_or_else(|p| p.into_inner());
            w.all.iter().filter(|r| r.app == app).map(|r| r.worker_id.clone()).collect()
        };
        workers.iter().any(|w| matches!(self.cooling(app, w, handler, now), CoolingNow::Released { .. }))
    }

    /// Whether any cooldown is known (the dispatcher skips the per-candidate lookups otherwise).
    pub fn any_cooling(&self, now: Ts) -> bool {
        self.cooling.lock().unwrap_or_else(|p| p.into_inner()).until.values().any(|(u, _)| *u > now)
    }

    /// Whether cooldowns should be read again.
    pub fn cooling_stale(&self) -> bool {
        self.cooling.lock().unwrap_or_else(|p| p.into_inner()).read_at.is_none_or(|t| t.elapsed() >= REFRESH)
    }

    /// Where the streaks' changes stand before a read of them begins, for [`RoutingState::set_streaks`].
    pub fn streaks_read_begins(&self) -> u64 {
        self.cooling.lock().unwrap_or_else(|p| p.into_inner()).noted
    }

    /// Replaces what is known with the streaks read from the database by a read that began at
    /// `read_began` ([`RoutingState::streaks_read_begins`]). What this axd noted since is applied over
    /// it: the read may have been taken before those commits, and must not undo a cooldown that a
    /// result here has just started (or ended).
    pub fn set_streaks(&self, streaks: &[WorkerStreak], read_began: u64) {
        let mut c = self.cooling.lock().unwrap_or_else(|p| p.into_inner());
        c.until = streaks
            .iter()
            .filter_map(|s| {
                s.cooldown_until.map(|u| ((s.app.clone(), s.worker_id.clone(), s.handler.clone()), (u, began(s, u))))
            })
            .collect();
        let Cooling { until, recent, .. } = &mut *c;
        recent.retain(|_, (n, _)| *n > read_began);
        for (key, (_, v)) in recent.iter() {
            match v {
                Some(v) => until.insert(key.clone(), *v),
                None => until.remove(key),
            };
        }
        c.read_at = Some(Instant::now());
    }

    /// Applies streaks this axd has just committed: `Some` written, `None` ended by a success.
    pub fn note_streaks(&self, changes: &[(Key, Option<WorkerStreak>)]) {
        let mut c = self.cooling.lock().unwrap_or_else(|p| p.into_inner());
        for (key, s) in changes {
            let v = s.as_ref().and_then(|s| s.cooldown_until.map(|u| (u, began(s, u))));
            match v {
                Some(u) => c.until.insert(key.clone(), u),
                None => c.until.remove(key),
            };
            c.noted += 1;
            let n = c.noted;
            c.recent.insert(key.clone(), (n, v));
        }
    }

    /// The cluster's worker sessions as last read, and whether to read them again: the read is
    /// older than [`REFRESH`], or this axd opened or closed a session since it began.
    pub fn workers(&self) -> (Vec<WorkerRecord>, bool) {
        let w = self.workers.lock().unwrap_or_else(|p| p.into_inner());
        let stale = w.read_at.is_none_or(|t| t.elapsed() >= REFRESH) || w.read_changes != w.changes;
        (w.all.clone(), stale)
    }

    /// Where this axd's session changes stand before a read of the cluster's workers begins, for
    /// [`RoutingState::set_workers`].
    pub fn workers_read_begins(&self) -> u64 {
        self.workers.lock().unwrap_or_else(|p| p.into_inner()).changes
    }

    /// Replaces the cluster's worker sessions with a read that began at `began`
    /// ([`RoutingState::workers_read_begins`]); if this axd opened or closed a session since, the
    /// read may miss it and stays due.
    pub fn set_workers(&self, all: Vec<WorkerRecord>, began: u64) {
        let mut w = self.workers.lock().unwrap_or_else(|p| p.into_inner());
        w.all = all;
        w.read_at = Some(Instant::now());
        w.read_changes = began;
    }

    /// A session opened or closed here: the cluster's workers are read again, also when a read
    /// under way began before the change (it may miss the session).
    pub fn workers_changed(&self) {
        self.workers.lock().unwrap_or_else(|p| p.into_inner()).changes += 1;
    }
}

/// A streak's key as the state stores it.
pub fn key(app: &str, worker: &str, handler: &str) -> Key {
    (app.to_owned(), worker.to_owned(), handler.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Ts {
        chrono::DateTime::from_timestamp(1_800_000_000, 0).expect("valid")
    }

    fn cooling_w1(until: Ts) -> WorkerStreak {
        WorkerStreak {
            app: "app".into(),
            worker_id: "w1".into(),
            handler: "h".into(),
            failures: 2,
            cooldown_until: Some(until),
            cooldown: Some(std::time::Duration::from_secs(2)),
        }
    }

    /// A result here starts w1's cooldown while the dispatcher reads the streaks; the read was taken
    /// before that commit: it must not undo the cooldown. A read begun after it is the truth.
    #[test]
    fn a_read_that_began_before_a_noted_streak_does_not_undo_it() {
        let r = RoutingState::default();
        let until = crate::model::add(now(), std::time::Duration::from_secs(2));
        let began = r.streaks_read_begins();
        r.note_streaks(&[(key("app", "w1", "h"), Some(cooling_w1(until)))]);
        r.set_streaks(&[], began);
        assert!(r.any_cooling(now()), "the cooldown noted during the read is kept");
        let began = r.streaks_read_begins();
        r.set_streaks(&[], began);
        assert!(!r.any_cooling(now()), "a read begun after the note replaces it");
        // And an end noted during a read is kept over the read's older cooldown.
        let began = r.streaks_read_begins();
        r.note_streaks(&[(key("app", "w1", "h"), None)]);
        r.set_streaks(&[cooling_w1(until)], began);
        assert!(!r.any_cooling(now()), "the success noted during the read ended the cooldown");
    }

    /// A session opened here while the dispatcher reads the cluster's workers may be missing from
    /// that read: the workers stay due until a read that began after it.
    #[test]
    fn a_session_opened_during_a_read_of_the_workers_leaves_them_due() {
        let r = RoutingState::default();
        assert!(r.workers().1, "never read");
        let began = r.workers_read_begins();
        r.workers_changed();
        r.set_workers(Vec::new(), began);
        assert!(r.workers().1, "the read may miss the new session");
        let began = r.workers_read_begins();
        r.set_workers(Vec::new(), began);
        assert!(!r.workers().1, "read after the change");
    }
}

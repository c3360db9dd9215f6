//! The worker streams held by this axd: who they are, their credits and outstanding assignments,
//! and the bounded channel to each stream.
//!
//! Credits are the backpressure: a stream never has more outstanding assignments than the credits
//! its worker granted, and never more than its capacity, so no queue in axd grows without bound.
//! Locks here are held for a few field updates only, never across an await.

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, AtomicUsize, Ordering},
    },
    time::Instant,
};

use ax_proto::v1 as pb;
use tokio::sync::mpsc;

use crate::{
    model::{Instance, RetryOn, SessionSync, Ts},
    routing::RoutingState,
};

/// A PENDING instance offered to the dispatcher's routing decision.
#[derive(Debug, Clone)]
pub struct ReadyInstance {
    /// Instance id.
    pub id: i64,
    pub app: String,
    pub handler: String,
    /// Routing strategy copied from the task.
    pub routing: crate::model::Routing,
    /// Attempts so far (the dispatch makes it `attempt + 1`).
    pub attempt: u32,
    /// Not due yet (`available_at` is after the claim's `now`): only a stream that holds an
    /// assignment until its start time may take it.
    pub early: bool,
    /// When it became (or becomes) due.
    pub available_at: Ts,
    /// Label selector (normalized); empty: any worker.
    pub selector: String,
    /// A broadcast child runs only on this worker.
    pub target_worker: Option<String>,
    /// Routing HASH: its key.
    pub hash_key: Option<String>,
    /// Where a retry goes.
    pub retry_on: RetryOn,
    /// The worker its last attempt failed on, when it is a retry.
    pub failed_on: Option<String>,
    /// (index, total) of a child of a sharded or broadcast fire.
    pub shard: Option<(u32, u32)>,
}

impl ReadyInstance {
    /// What routing needs to know about `i`, due at the claim's `now` or not.
    pub fn of(i: &crate::model::Instance, now: Ts) -> ReadyInstance {
        ReadyInstance {
            id: i.id,
            app: i.app.clone(),
            handler: i.handler.clone(),
            routing: i.routing,
            attempt: i.attempt,
            early: i.available_at > now,
            available_at: i.available_at,
            selector: i.route.selector.clone(),
            target_worker: i.route.target_worker.clone(),
            hash_key: i.route.hash_key.clone(),
            retry_on: i.retry_on(),
            failed_on: if i.failures > 0 { i.worker_id.clone() } else { None },
            shard: i.route.shard,
        }
    }
}

/// The stream chosen for a ready instance.
#[derive(Debug, Clone)]
pub struct SessionRef {
    pub session_id: String,
    /// Worker id of the session.
    pub worker_id: String,
}

/// Demand of one app: handlers that have streams with free credits, and how many instances at most.
#[derive(Debug, Clone)]
pub struct AppDemand {
    pub app: String,
    /// Handlers served by streams with free credits (and not cooling down for them).
    pub handlers: Vec<String>,
    /// Free credits of those streams together.
    pub limit: u32,
    /// Claim instances available up to this time: the claim's `now`, or later when streams of the
    /// app hold early assignments until their start time (`Hello.start_after_supported`).
    pub until: Ts,
    /// Worker ids of those streams (broadcast children pinned to other workers are not claimed).
    pub workers: Vec<String>,
    /// Labels of those streams (which selectors they can satisfy).
    pub labels: Vec<BTreeMap<String, String>>,
}

/// Largest parameters and output (together) of a row a session keeps for the group commit
/// ([`Session::keep_row`]), so that a kept row is about this size and its fixed columns, whatever
/// the parameters a task's triggers carry.
pub const MAX_KEPT_ROW_BYTES: usize = 2048;

/// Rows a session keeps beyond its capacity ([`Session::keep_row`]): those of attempts it has
/// reported whose messages still wait for the writers. A slot is free again when its Result
/// arrives, while the row waits until a writer takes the message, so under load the rows of a
/// session outnumber its capacity by what the writers' queues hold (all sessions together: their
/// places plus one batch of held Accepted messages, which the queue module asserts is at most
/// this). Every such row is kept; a row is never kept longer than its attempt, so the rows of all
/// sessions together stay within their capacities and the queues' places.
pub const KEPT_WHILE_QUEUED: usize = 10_000;

/// How many reported attempts a session remembers (see `SessionState::recent`).
const RECENT: usize = 1024;

/// What goes to a worker stream.
pub type Outbound = Result<pb::SchedulerMessage, tonic::Status>;

/// Mutable state of one session.
#[derive(Debug, Default)]
struct SessionState {
    draining: bool,
    credits: u32,
    /// Attempts assigned to (or adopted by) this session and not finished.
    outstanding: HashSet<(i64, u32)>,
    /// Outstanding attempts the worker said it started (or re-announced): the lease loop renews
    /// exactly these.
    accepted: HashSet<(i64, u32)>,
    /// Attempts Welcome released to this worker: a late Result for them is recorded on the trail.
    late: HashSet<(i64, u32)>,
    /// Assigned attempts not yet accepted, with their ack deadline (database time).
    unaccepted: HashMap<(i64, u32), Ts>,
    /// Attempts this session reported a Result for, most recent last (at most [`RECENT`]): a
    /// repeat is still checked against the instance, not dropped as foreign.
    recent: std::collections::VecDeque<(i64, u32)>,
    /// The highest Heartbeat.seq received.
    heartbeat_seq: u64,
    /// The highest Heartbeat.seq covered by a committed lease renewal.
    renewed_seq: u64,
    last_seen: Option<Instant>,
    last_seen_at: Option<Ts>,
    /// When axd last sent something on this stream (its own liveness towards the worker).
    last_sent: Option<Instant>,
    /// Messages about attempts this session does not hold, dropped without writing anything.
    dropped: u64,
    /// Rows of attempts as their claim wrote them, with their versions (PostgreSQL): the group
    /// commit of the attempt's first messages takes its row from here instead of reading it (see
    /// [`Session::take_row`]). At most the capacity and [`KEPT_WHILE_QUEUED`].
    rows: HashMap<(i64, u32), (Instance, i64)>,
}

/// What the lease loop renews for one session: the attempts it had accepted when the worker's
/// heartbeat `seq` had arrived.
#[derive(Debug, Clone)]
pub struct Renewal {
    pub session_id: String,
    /// The accepted attempts (instance id, attempt), in instance order.
    pub attempts: Vec<(i64, u32)>,
    /// The heartbeat the renewal answers.
    pub seq: u64,
}

/// One worker stream on this axd.
#[derive(Debug)]
pub struct Session {
    /// Session id.
    pub id: String,
    pub worker_id: String,
    pub app: String,
    /// Handlers served.
    pub handlers: HashSet<String>,
    /// Capacity from Hello.
    pub capacity: u32,
    /// Labels from Hello (what selectors match).
    pub labels: BTreeMap<String, String>,
    /// The worker holds an assignment until `Assign.start_after` has passed
    /// (`Hello.start_after_supported`), so it may be sent ahead of the instance's time.
    pub early: bool,
    /// The stream's outbound channel (bounded).
    pub tx: mpsc::Sender<Outbound>,
    /// Acknowledgements of recorded results, which the stream sends ahead of `tx`'s messages.
    /// Not dropped for a full channel: a worker keeps an unacknowledged result (and re-sends it
    /// only after reconnecting), and one group commit may answer more results than `tx` has room
    /// for, as a result frees its slot (and brings the next Assign) before its commit. Bounded by
    /// [`MAX_UNREAD_ACKS`] all the same: a worker that re-sends Results without reading its stream
    /// cannot grow axd's memory.
    acks: mpsc::UnboundedSender<pb::ResultAck>,
    /// Acknowledgements queued and not yet taken by the stream: at most [`MAX_UNREAD_ACKS`].
    acks_waiting: Arc<AtomicUsize>,
    acks_rx: Mutex<Option<AckQueue>>,
    /// Fired to ask the session to send Drain and close (axd is unhealthy).
    pub drain_requested: tokio::sync::Notify,
    state: Mutex<SessionState>,
}

/// The most acknowledgements one stream holds for its worker to read; a worker with up to 10,000
/// attempts in flight that reads its stream never comes near it.
pub const MAX_UNREAD_ACKS: usize = 10_000;

/// The acknowledgements a session queued, as its stream takes them.
#[derive(Debug)]
pub struct AckQueue {
    rx: mpsc::UnboundedReceiver<pb::ResultAck>,
    waiting: Arc<AtomicUsize>,
}

impl AckQueue {
    /// The next acknowledgement, if one is queued (registering `cx` to be woken otherwise).
    pub fn poll_next(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Option<pb::ResultAck>> {
        let next = self.rx.poll_recv(cx);
        if let std::task::Poll::Ready(Some(_)) = next {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
        }
        next
    }
}

impl Session {
    /// A session for a (validated) Hello, with nothing outstanding.
    pub fn new(id: String, hello: &pb::Hello, tx: mpsc::Sender<Outbound>, now: Ts) -> Self {
        let (acks, rx) = mpsc::unbounded_channel();
        let acks_waiting = Arc::new(AtomicUsize::new(0));
        Session {
            acks,
            acks_rx: Mutex::new(Some(AckQueue { rx, waiting: acks_waiting.clone() })),
            acks_waiting,
            id,
            worker_id: hello.worker_id.clone(),
            app: hello.app.clone(),
            handlers: hello.handlers.iter().cloned().collect(),
            capacity: hello.capacity,
            labels: hello.labels.clone().into_iter().collect(),
            early: hello.start_after_supported,
            tx,
            drain_requested: tokio::sync::Notify::new(),
            state: Mutex::new(SessionState {
                last_seen: Some(Instant::now()),
                last_seen_at: Some(now),
                ..SessionState::default()
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SessionState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Applies a Credit message: credits + outstanding never exceed capacity.
    pub fn grant(&self, grant: u32, reset: bool) {
        let mut s = self.state();
        if s.draining {
            return;
        }
        if reset {
            s.credits = 0;
        }
        let room = self.capacity.saturating_sub(u32::try_from(s.outstanding.len()).unwrap_or(u32::MAX));
        s.credits = s.credits.saturating_add(grant).min(room);
    }

    /// Asks the session task to drain this stream (send Drain, then close).
    pub fn request_drain(&self) {
        self.drain_requested.notify_one();
    }

    /// Stops assigning to this session (axd is shutting down and has sent Drain).
    pub fn drain(&self) {
        let mut s = self.state();
        s.draining = true;
        s.credits = 0;
    }

    /// Records attempts this session already runs (re-adopted after a reconnect), and those released
    /// to this worker, whose late results are still recorded.
    pub fn adopt(&self, attempts: &[(i64, u32)], released_to_us: &[(i64, u32)]) {
        let mut s = self.state();
        s.outstanding.extend(attempts.iter().copied());
        s.accepted.extend(attempts.iter().copied());
        s.late.extend(released_to_us.iter().copied());
        let room = self.capacity.saturating_sub(u32::try_from(s.outstanding.len()).unwrap_or(u32::MAX));
        s.credits = s.credits.min(room);
    }

    /// The worker said it started this attempt: false if the session does not hold it.
    pub fn accepted(&self, key: (i64, u32)) -> bool {
        let mut s = self.state();
        if !s.outstanding.contains(&key) {
            return false;
        }
        s.unaccepted.remove(&key);
        s.accepted.insert(key);
        true
    }

    /// Keeps the row of the outstanding attempt `key` as its claim wrote it, at `version`, for
    /// [`Session::take_row`]; not kept once the capacity and [`KEPT_WHILE_QUEUED`] rows are, nor
    /// with parameters and output over [`MAX_KEPT_ROW_BYTES`] (the writer then reads it).
    pub fn keep_row(&self, key: (i64, u32), row: (Instance, i64)) {
        if row.0.params.len() + row.0.output.len() > MAX_KEPT_ROW_BYTES {
            return;
        }
        let mut s = self.state();
        if s.outstanding.contains(&key) && s.rows.len() < self.capacity as usize + KEPT_WHILE_QUEUED {
            s.rows.insert(key, row);
        }
    }

    /// The row kept for `key`, once: the group commit writes it only if the database still holds
    /// that version (otherwise it reads the row, as without a kept one).
    pub fn take_row(&self, key: (i64, u32)) -> Option<(Instance, i64)> {
        self.state().rows.remove(&key)
    }

    /// An Assign for `key` went out: unless accepted by `accept_by` (database time), the slot is
    /// taken back (see [`Session::take_back_expired`]).
    pub fn assigned(&self, key: (i64, u32), accept_by: Ts) {
        let mut s = self.state();
        if s.outstanding.contains(&key) {
            s.unaccepted.insert(key, accept_by);
        }
    }

    /// Assignments whose ack deadline passed without Accepted: their slots are free again (the
    /// sweeper puts the instances back in the queue); the caller tells the worker with Cancel.
    pub fn take_back_expired(&self, now: Ts) -> Vec<(i64, u32)> {
        let mut s = self.state();
        let expired: Vec<(i64, u32)> = s.unaccepted.iter().filter(|(_, at)| **at < now).map(|(k, _)| *k).collect();
        for k in &expired {
            s.unaccepted.remove(k);
            s.outstanding.remove(k);
            s.rows.remove(k);
        }
        expired
    }

    /// Whether a Result for `key` may be recorded: the session holds the attempt, or it was
    /// released to this worker by Welcome (a late result).
    pub fn may_report(&self, key: (i64, u32)) -> bool {
        let s = self.state();
        s.outstanding.contains(&key) || s.late.contains(&key) || s.recent.contains(&key)
    }

    /// A Result for `key` is on its way to the database: its slot is free, and a repeat of it is
    /// still recorded (or recognised as a repeat) rather than dropped.
    pub fn reported(&self, key: (i64, u32)) {
        let mut s = self.state();
        s.accepted.remove(&key);
        s.unaccepted.remove(&key);
        if s.outstanding.remove(&key) {
            if s.recent.len() >= RECENT {
                s.recent.pop_front();
            }
            s.recent.push_back(key);
        }
    }

    /// Counts a message about an attempt this session does not hold; true for the first one, which
    /// the caller logs (later ones are only counted, and the count is logged when the session ends).
    pub fn drop_foreign(&self) -> bool {
        let mut s = self.state();
        s.dropped += 1;
        s.dropped == 1
    }

    /// Messages dropped by [`Session::drop_foreign`].
    pub fn dropped(&self) -> u64 {
        self.state().dropped
    }

    /// Records a Heartbeat.seq from the worker.
    pub fn heartbeat(&self, seq: u64) {
        let mut s = self.state();
        s.heartbeat_seq = s.heartbeat_seq.max(seq);
    }

    /// What a lease renewal of this session covers now.
    pub fn renewal(&self) -> Renewal {
        let s = self.state();
        let mut attempts: Vec<(i64, u32)> = s.accepted.iter().copied().collect();
        attempts.sort_unstable();
        Renewal { session_id: self.id.clone(), attempts, seq: s.heartbeat_seq }
    }

    /// The attempt is no longer this session's to run (the database says it was taken back: timed
    /// out, canceled, moved): later renewals leave it out, and the caller sends Cancel before the
    /// next SchedulerHeartbeat, so the worker's lease for it ends with the last renewal that
    /// covered it. Its slot stays taken until the worker's Result (or the session's end).
    pub fn revoke(&self, key: (i64, u32)) {
        self.state().accepted.remove(&key);
    }

    /// Whether the worker's Accepted for this attempt counts, with no Result reported since.
    pub fn is_accepted(&self, key: (i64, u32)) -> bool {
        self.state().accepted.contains(&key)
    }

    /// A renewal for heartbeat `seq` committed; returns the highest renewed seq.
    pub fn renewed(&self, seq: u64) -> u64 {
        let mut s = self.state();
        s.renewed_seq = s.renewed_seq.max(seq);
        s.renewed_seq
    }

    /// The highest heartbeat covered by a committed renewal.
    pub fn renewed_seq(&self) -> u64 {
        self.state().renewed_seq
    }

    /// Sends a message to the worker without waiting; false if the stream is full or closed (the
    /// caller decides what that means for the message).
    pub fn send(&self, m: Outbound) -> bool {
        let ok = self.tx.try_send(m).is_ok();
        if ok {
            self.state().last_sent = Some(Instant::now());
        }
        ok
    }

    /// Queues the acknowledgement of a recorded result (see `acks`); false if the stream is gone
    /// or [`MAX_UNREAD_ACKS`] wait unread already (the worker re-sends that result after it
    /// reconnects, as after a lost stream).
    pub fn ack(&self, ack: pb::ResultAck) -> bool {
        if self.acks_waiting.fetch_add(1, Ordering::AcqRel) >= MAX_UNREAD_ACKS || self.acks.send(ack).is_err() {
            self.acks_waiting.fetch_sub(1, Ordering::AcqRel);
            return false;
        }
        self.state().last_sent = Some(Instant::now());
        true
    }

    /// The receiving end of the acknowledgements, for the stream that sends them (once).
    pub fn take_acks(&self) -> Option<AckQueue> {
        self.acks_rx.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// How long since axd last sent anything on this stream.
    pub fn since_sent(&self) -> std::time::Duration {
        self.state().last_sent.map_or(std::time::Duration::MAX, |t| t.elapsed())
    }

    /// Takes a credit for an assignment of `(instance, attempt)`; false if none is left.
    pub(super) fn reserve(&self, key: (i64, u32)) -> bool {
        let mut s = self.state();
        if s.credits == 0 {
            return false;
        }
        s.credits -= 1;
        s.outstanding.insert(key);
        true
    }

    /// Undoes `Session::reserve` (the claim did not commit).
    pub fn unreserve(&self, key: (i64, u32)) {
        let mut s = self.state();
        s.rows.remove(&key);
        if s.outstanding.remove(&key) {
            s.credits = s.credits.saturating_add(1);
        }
    }

    /// The attempt is finished (result, reject, ack timeout): its slot is free. Credits are not
    /// returned; the worker grants new ones.
    pub fn finish(&self, key: (i64, u32)) -> bool {
        let mut s = self.state();
        s.rows.remove(&key);
        s.accepted.remove(&key);
        s.unaccepted.remove(&key);
        s.outstanding.remove(&key)
    }

    /// Whether the attempt is outstanding on this session.
    pub fn holds(&self, key: (i64, u32)) -> bool {
        self.state().outstanding.contains(&key)
    }

    /// Notes that the worker said something.
    pub fn seen(&self, now: Ts) {
        let mut s = self.state();
        s.last_seen = Some(Instant::now());
        s.last_seen_at = Some(now);
    }

    /// Unused credits.
    pub fn credits(&self) -> u32 {
        self.state().credits
    }

    /// Outstanding assignments.
    pub fn in_flight(&self) -> u32 {
        u32::try_from(self.state().outstanding.len()).unwrap_or(u32::MAX)
    }

    /// The numbers the lease loop writes to the database.
    pub fn sync(&self) -> SessionSync {
        let s = self.state();
        SessionSync {
            session_id: self.id.clone(),
            credits: s.credits,
            in_flight: u32::try_from(s.outstanding.len()).unwrap_or(u32::MAX),
            last_seen_at: s.last_seen_at.unwrap_or_default(),
        }
    }
}

/// The sessions of this axd.
#[derive(Debug, Default)]
pub struct Registry {
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    round_robin: AtomicU64,
}

impl Registry {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds a session.
    pub fn insert(&self, s: Arc<Session>) {
        self.map().insert(s.id.clone(), s);
    }

    /// Removes a session.
    pub fn remove(&self, id: &str) -> Option<Arc<Session>> {
        self.map().remove(id)
    }

    /// A session by id.
    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        self.map().get(id).cloned()
    }

    /// All sessions.
    pub fn all(&self) -> Vec<Arc<Session>> {
        self.map().values().cloned().collect()
    }

    /// Per app: the handlers of streams with free credits (a handler a stream is cooling down for
    /// does not count for it), the credits together, how far ahead of `now` to claim (`ahead` if one
    /// of those streams takes early assignments), and those streams' workers and labels.
    pub fn demand(&self, now: Ts, ahead: std::time::Duration, routing: &RoutingState) -> Vec<AppDemand> {
        #[derive(Default)]
        struct Acc {
            handlers: HashSet<String>,
            credits: u32,
            early: bool,
            workers: Vec<String>,
            labels: Vec<BTreeMap<String, String>>,
        }
        let cooling = routing.any_cooling(now);
        let mut by_app: HashMap<String, Acc> = HashMap::new();
        for s in self.all() {
            let credits = s.credits();
            if credits == 0 {
                continue;
            }
            let handlers: Vec<&String> = s
                .handlers
                .iter()
                .filter(|h| !cooling || routing.cooling_until(&s.app, &s.worker_id, h, now).is_none())
                .collect();
            if handlers.is_empty() {
                continue;
            }
            let e = by_app.entry(s.app.clone()).or_default();
            e.handlers.extend(handlers.into_iter().cloned());
            e.credits = e.credits.saturating_add(credits);
            e.early |= s.early;
            e.workers.push(s.worker_id.clone());
            e.labels.push(s.labels.clone());
        }
        let mut out: Vec<AppDemand> = by_app
            .into_iter()
            .map(|(app, mut a)| {
                let mut handlers: Vec<String> = a.handlers.into_iter().collect();
                handlers.sort();
                a.workers.sort();
                a.workers.dedup();
                let until = if a.early { crate::model::add(now, ahead) } else { now };
                AppDemand { app, handlers, limit: a.credits, until, workers: a.workers, labels: a.labels }
            })
            .collect();
        out.sort_by(|a, b| a.app.cmp(&b.app));
        out
    }

    /// Apps that have streams here (for "when is the next instance due").
    pub fn apps(&self) -> Vec<String> {
        let mut apps: Vec<String> = self.all().iter().map(|s| s.app.clone()).collect();
        apps.sort();
        apps.dedup();
        apps
    }

    /// The counter round-robin routing turns (see [`super::route::route`]).
    pub fn round_robin(&self) -> &AtomicU64 {
        &self.round_robin
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::InstanceStatus;

    fn row(id: i64) -> (Instance, i64) {
        let mut i = crate::model::testing::instance(id, chrono::Utc::now(), InstanceStatus::Dispatched);
        i.attempt = 1;
        (i, 7)
    }

    /// A session keeps a claimed row only for an attempt it holds, gives it out once, drops it
    /// with the attempt, keeps the rows of its capacity and of every attempt whose messages may
    /// wait in the writers' queues (a reported attempt's row waits for the writer while its slot
    /// is already reused), no more, and no row with large parameters.
    #[test]
    fn kept_rows_are_given_once_and_bounded() {
        let (tx, _rx) = mpsc::channel(4);
        let session =
            Session::new("s".into(), &pb::Hello { capacity: 1, ..Default::default() }, tx, chrono::Utc::now());
        session.keep_row((9, 1), row(9));
        assert!(session.take_row((9, 1)).is_none(), "not an attempt of this session");

        session.grant(1, false);
        assert!(session.reserve((1, 1)));
        session.keep_row((1, 1), row(1));
        assert_eq!(session.take_row((1, 1)).map(|r| r.0.id), Some(1));
        assert!(session.take_row((1, 1)).is_none(), "given once");
        session.reported((1, 1));

        session.grant(1, false);
        assert!(session.reserve((4, 1)));
        session.keep_row((4, 1), row(4));
        session.unreserve((4, 1));
        assert!(session.take_row((4, 1)).is_none(), "dropped with an assignment that was not sent");
        session.grant(1, false);
        assert!(session.reserve((5, 1)));
        session.keep_row((5, 1), row(5));
        assert!(session.finish((5, 1)));
        assert!(session.take_row((5, 1)).is_none(), "dropped with a rejected attempt");
        session.grant(1, false);
        assert!(session.reserve((6, 1)));
        let (mut large, version) = row(6);
        large.params = "x".repeat(MAX_KEPT_ROW_BYTES + 1);
        session.keep_row((6, 1), (large, version));
        assert!(session.take_row((6, 1)).is_none(), "a row with large parameters is read, not kept");
        session.reported((6, 1));

        // One slot, reused by every attempt once the one before reported: their rows wait for the
        // writer, as many as its queues can hold messages for, and no more.
        let first = 100;
        let last = first + KEPT_WHILE_QUEUED as i64;
        for id in first..=last + 1 {
            session.grant(1, false);
            assert!(session.reserve((id, 1)), "a slot for attempt {id}");
            session.keep_row((id, 1), row(id));
            session.reported((id, 1));
        }
        assert_eq!(session.take_row((first, 1)).map(|r| r.0.id), Some(first));
        assert_eq!(session.take_row((last, 1)).map(|r| r.0.id), Some(last), "the queues' worth is kept");
        assert!(session.take_row((last + 1, 1)).is_none(), "one more is over the bound");
    }
}

//! Rules checked on the whole record of every scenario, whatever the scenario is about: a worker
//! may break them at any moment, not only when a scenario looks for it.
//!
//! - Hello is the first message of every stream.
//! - Credits never exceed the room the worker has: on each stream, credits granted and not yet used
//!   by an Assign, plus attempts the worker holds (assigned or re-announced and not yet ended by its
//!   Result or Reject), are never more than Hello.capacity. A worker that grants a credit before the
//!   slot is free asks axd for work it cannot run.
//! - Heartbeat.seq counts 1, 2, 3, ... on each stream (0 throughout means "no leases tracked").

use std::collections::{HashMap, HashSet};

use ax_proto::v1::{scheduler_message::Msg as Down, worker_message::Msg as Up};

use crate::relay::{Ev, Rec};

type Key = (i64, u32);

/// The credit state of one stream, replayed from the record.
#[derive(Debug, Default, Clone)]
pub struct Credits {
    pub capacity: u32,
    /// Credits granted and not yet used.
    pub unused: i64,
    /// Attempts the worker holds on this stream.
    pub held: HashSet<Key>,
}

impl Credits {
    /// Slots the worker has claimed room for.
    pub fn claimed(&self) -> i64 {
        self.unused.max(0) + self.held.len() as i64
    }
}

/// Replays the credits of every stream; fails at the first moment they exceed capacity.
pub fn credits(log: &[Rec]) -> Result<HashMap<usize, Credits>, String> {
    let mut streams: HashMap<usize, Credits> = HashMap::new();
    for r in log {
        let s = streams.entry(r.stream).or_default();
        let what = match &r.ev {
            Ev::FromWorker { msg: Up::Hello(h) } => {
                s.capacity = h.capacity;
                s.unused = i64::from(h.initial_credits);
                s.held = h.in_flight.iter().map(|a| (a.instance_id, a.attempt)).collect();
                format!(
                    "Hello(capacity {}, initial_credits {}, {} in flight)",
                    h.capacity,
                    h.initial_credits,
                    h.in_flight.len()
                )
            }
            Ev::FromWorker { msg: Up::Credit(c) } => {
                if c.reset {
                    s.unused = 0;
                }
                s.unused += i64::from(c.grant);
                format!("Credit{{grant: {}, reset: {}}}", c.grant, c.reset)
            }
            Ev::FromWorker { msg: Up::Result(x) } => {
                s.held.remove(&(x.instance_id, x.attempt));
                continue;
            }
            Ev::FromWorker { msg: Up::Reject(x) } => {
                s.held.remove(&(x.instance_id, x.attempt));
                continue;
            }
            Ev::ToWorker { msg: Down::Assign(a), forwarded: true } => {
                s.unused -= 1;
                s.held.insert((a.instance_id, a.attempt));
                continue;
            }
            _ => continue,
        };
        if s.claimed() > i64::from(s.capacity) {
            return Err(format!(
                "credits exceeded on stream {}: after {what} the worker had {} unused credits while holding {} \
                 attempts, room for {} with capacity {} (grant a credit only for a free slot: after a Result \
                 or Reject; after a reconnect initial_credits = capacity - attempts in in_flight)",
                r.stream,
                s.unused.max(0),
                s.held.len(),
                s.claimed(),
                s.capacity
            ));
        }
    }
    Ok(streams)
}

/// Checks the rules above on a whole record.
pub fn all(log: &[Rec]) -> Result<(), String> {
    let mut first: HashSet<usize> = HashSet::new();
    let mut seqs: HashMap<usize, u64> = HashMap::new();
    for r in log {
        let Ev::FromWorker { msg } = &r.ev else { continue };
        if first.insert(r.stream) && !matches!(msg, Up::Hello(_)) {
            return Err(format!("stream {} began with {} instead of Hello", r.stream, up_name(msg)));
        }
        if let Up::Heartbeat(h) = msg {
            let last = seqs.entry(r.stream).or_insert(0);
            if h.seq != 0 && h.seq != *last + 1 {
                return Err(format!(
                    "stream {}: Heartbeat.seq {} follows {} (must count 1, 2, 3, ... on each stream)",
                    r.stream, h.seq, last
                ));
            }
            *last = h.seq;
        }
    }
    credits(log).map(|_| ())
}

/// A message's kind, for reports.
pub fn up_name(m: &Up) -> &'static str {
    match m {
        Up::Hello(_) => "Hello",
        Up::Heartbeat(_) => "Heartbeat",
        Up::Credit(_) => "Credit",
        Up::Accepted(_) => "Accepted",
        Up::Reject(_) => "Reject",
        Up::Progress(_) => "Progress",
        Up::Log(_) => "Log",
        Up::Result(_) => "Result",
    }
}

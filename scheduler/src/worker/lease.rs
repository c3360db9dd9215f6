//! The lease loop: while a worker heartbeats, the leases of the attempts it accepted are renewed, in
//! one batch per round for every live stream on this axd, and `ax_worker` shows its live numbers.
//! After each committed round every stream is told which of its worker's heartbeats the renewal
//! answered (`SchedulerHeartbeat.renewed_seq`), so a worker knows how long its attempts are its own
//! and stops them in time if renewals stop (self-fencing, see proto/ax/v1/worker.proto).
//!
//! If the worker or this axd dies or stalls, renewals stop and the leases expire; the sweeper (on
//! any axd) then fails the attempts as "worker lost", unless the worker re-announced them elsewhere
//! first.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use ax_proto::v1 as pb;

use crate::{core::Core, model::add, wire::ts_to_pb};

/// Renews leases every heartbeat interval until `cancel` fires.
pub async fn run(core: Arc<Core>, cancel: CancellationToken) {
    let every = core.sessions.heartbeat_interval;
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(every) => {}
        }
        renew(&core).await;
    }
}

/// One renewal round.
pub async fn renew(core: &Core) {
    let live = core.registry.all();
    if live.is_empty() {
        return;
    }
    // What each session covers is read before `now`: the renewal is decided after every heartbeat
    // it answers had arrived, so the lease it writes runs from later than the worker sent them.
    let renewals: Vec<_> = live.iter().map(|s| s.renewal()).collect();
    let sessions: Vec<_> = live.iter().map(|s| s.sync()).collect();
    let now = core.clock.now();
    let lease_until = add(now, core.sessions.lease_ttl());
    match super::sessions::sync_sessions(&core.pools.workers, &sessions, &renewals, lease_until).await {
        Ok(revoked) => {
            // Before the heartbeat that answers this renewal: an attempt the database no longer
            // holds for its session gets a Cancel now (whatever the axd that took it back queued
            // for us may still be on its way), so the worker's lease for it is not extended.
            // A stream that could not take the Cancel gets no heartbeat this round either.
            let mut unsent: Vec<String> = Vec::new();
            for (session_id, key) in revoked {
                // An attempt whose Result came in meanwhile (the database finished it) needs none.
                if let Some(s) = core.registry.get(&session_id).filter(|s| s.is_accepted(key)) {
                    let reason = "the attempt is no longer yours: axd took it back (timed out, canceled or moved)";
                    let cancel = pb::Cancel { instance_id: key.0, attempt: key.1, reason: reason.to_owned() };
                    if !s.send(Ok(pb::SchedulerMessage { msg: Some(pb::scheduler_message::Msg::Cancel(cancel)) })) {
                        tracing::warn!(session = %session_id, instance_id = key.0, "stream full or closed; cancel not sent");
                        unsent.push(session_id);
                    } else {
                        // Sent: later renewals leave it out (a failed send is tried again next round).
                        s.revoke(key);
                    }
                }
            }
            let server_time = Some(ts_to_pb(core.clock.now()));
            for (s, r) in live.iter().zip(&renewals).filter(|(s, _)| !unsent.contains(&s.id)) {
                let renewed_seq = s.renewed(r.seq);
                let hb = pb::SchedulerHeartbeat { renewed_seq, server_time };
                s.send(Ok(pb::SchedulerMessage { msg: Some(pb::scheduler_message::Msg::Heartbeat(hb)) }));
            }
        }
        Err(e) => tracing::warn!(error = %e, sessions = sessions.len(), "renewing worker leases failed"),
    }
}

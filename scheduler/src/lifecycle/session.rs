//! The transitions a worker's session causes: an attempt re-announced on a new session, and the
//! end of the session holding attempts (kept for its worker until the grace period ends, or not
//! kept when the session ended on a message axd cannot read).

use super::*;

/// A worker re-announced this attempt on a new session: it stays (or becomes) RUNNING there.
/// False if it is not this worker's current attempt any more.
pub fn readopt(
    i: &mut Instance,
    attempt: u32,
    worker_id: &str,
    app: &str,
    session_id: &str,
    lease_until: Ts,
    ctx: Ctx<'_>,
) -> (bool, Effects) {
    let ctx = ctx.after(i);
    let mut fx = Effects::new(ctx.now);
    let ours = i.status.is_held()
        && i.attempt == attempt
        && i.worker_id.as_deref() == Some(worker_id)
        && i.app == app
        && not_kept(i).is_none();
    if !ours {
        return (false, fx);
    }
    let from = i.status;
    i.status = InstanceStatus::Running;
    i.session_id = Some(session_id.to_owned());
    i.scheduler_id = Some(ctx.scheduler_id.to_owned());
    i.lease_expires_at = Some(i.lease_expires_at.map_or(lease_until, |l| l.max(lease_until)));
    if i.started_at.is_none() {
        i.started_at = Some(ctx.now);
    }
    if i.deadline_at.is_none() {
        i.deadline_at = i.timeout.map(|t| add(ctx.now, t));
    }
    i.updated_at = ctx.now;
    fx.changed = true;
    fx.event(
        i,
        from,
        InstanceStatus::Running,
        format!("re-announced by worker {worker_id} after reconnecting; kept on session {session_id}"),
    );
    (true, fx)
}

/// The session holding this attempt ended: the attempt keeps its state until `grace_until`, for the
/// worker to come back and re-announce it, or until its lease ends if that is later: the worker
/// was promised the lease, and may still be running the attempt (a broken stream is not a dead
/// worker).
pub fn session_ended(i: &mut Instance, session_id: &str, reason: &str, grace_until: Ts, ctx: Ctx<'_>) -> Effects {
    let ctx = ctx.after(i);
    let mut fx = Effects::new(ctx.now);
    if !i.status.is_held() || i.session_id.as_deref() != Some(session_id) {
        return fx;
    }
    let grace_until = i.lease_expires_at.map_or(grace_until, |l| l.max(grace_until));
    i.lease_expires_at = Some(grace_until);
    i.updated_at = ctx.now;
    fx.changed = true;
    let worker = i.worker_id.clone().unwrap_or_default();
    fx.event(
        i,
        i.status,
        i.status,
        format!(
            "worker session {session_id} ended ({reason}); waiting until {} for worker {worker} to re-announce it",
            grace_until.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        ),
    );
    fx
}

/// How [`session_ended_unreadable`] marks, in `Instance.message`, the current attempt it keeps from
/// its worker: `not kept: attempt N: <why>`. The attempt number makes the mark mean nothing once
/// the instance moves on to another attempt.
pub(super) fn not_kept_mark(attempt: u32) -> String {
    format!("not kept: attempt {attempt}: ")
}

/// Why the current attempt is not kept for its worker (see [`session_ended_unreadable`]), if so.
pub(super) fn not_kept(i: &Instance) -> Option<&str> {
    i.message.strip_prefix(&not_kept_mark(i.attempt))
}

/// The session holding this attempt ended because the worker sent a message axd cannot read (too
/// large, or not a WorkerMessage). axd cannot tell which attempt it was about, and the worker would
/// send it again after re-announcing the attempt, for ever: so the attempt is no longer its worker's
/// to re-announce. It keeps its state and its lease (the worker may still run it until then; it is
/// told to stop, in Welcome.released, as soon as it reconnects), and when the lease ends the
/// sweeper fails it, or puts a DISPATCHED one back in the queue, naming why.
pub fn session_ended_unreadable(i: &mut Instance, session_id: &str, reason: &str, ctx: Ctx<'_>) -> Effects {
    let ctx = ctx.after(i);
    let mut fx = Effects::new(ctx.now);
    if !i.status.is_held() || i.session_id.as_deref() != Some(session_id) {
        return fx;
    }
    let lease = *i.lease_expires_at.get_or_insert(ctx.now);
    let worker = i.worker_id.clone().unwrap_or_default();
    i.message = format!(
        "{}worker {worker}'s session {session_id} ended on a message axd could not read ({reason}); the attempt \
         was not kept for the worker to re-announce",
        not_kept_mark(i.attempt)
    );
    i.updated_at = ctx.now;
    fx.changed = true;
    fx.event(
        i,
        i.status,
        i.status,
        format!(
            "worker session {session_id} ended on a message axd could not read ({reason}); the attempt is not kept \
             for worker {worker}: it ends when its lease does, at {}",
            lease.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        ),
    );
    fx
}

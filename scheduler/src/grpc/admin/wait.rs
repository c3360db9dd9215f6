//! Trigger and wait (`TriggerTaskRequest.wait`) and WatchInstance. A waiting call answers once
//! its instance is final or the wait runs out; a watch sends the instance's changes until it is
//! final or [`MAX_WAIT`] has passed. Both read the instance by its id, at most twice a second,
//! whichever axd records its changes; at most `--max-waiting-calls` of them run at once on one axd. A
//! waiting trigger's instance is created, and the call audited, before the wait begins, and the
//! call answers a second before axd's `--request-timeout` at the latest (done = false): the caller
//! goes on waiting by calling again with the instance's idempotency key, as ax-client and axctl do.

use std::time::Duration;

use ax_proto::v1 as pb;
use tokio::sync::OwnedSemaphorePermit;

use super::AdminApi;
use crate::{
    error::{Error, Result},
    grpc::convert,
    wire,
};

/// The longest a call may wait.
pub(super) const MAX_WAIT: Duration = Duration::from_secs(600);

/// The first pause between two reads of the instance; it doubles up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(50);
const MAX_PAUSE: Duration = Duration::from_millis(500);

/// A call's wait and its place among the waiting calls.
pub(super) type Waiting = (Duration, OwnedSemaphorePermit);

/// The stream of a WatchInstance call.
pub(super) type Watch = tokio_stream::wrappers::ReceiverStream<Result<pb::WatchInstanceResponse, tonic::Status>>;

impl AdminApi {
    /// The wait a request asks for, with a place for it (`None`: no wait). Checked before anything
    /// is created: a wait over [`MAX_WAIT`] is INVALID_ARGUMENT, and with every place taken the
    /// call is RESOURCE_EXHAUSTED.
    pub(super) fn wait_place(&self, wait: Option<&prost_types::Duration>) -> Result<Option<Waiting>> {
        let Some(d) = wait else { return Ok(None) };
        let d = wire::duration_from_pb("wait", d)?;
        if d.is_zero() {
            return Ok(None);
        }
        if d > MAX_WAIT {
            return Err(Error::invalid("wait", format!("{} is longer than 10m", crate::schedule::fmt_duration(d))));
        }
        // Answered before the call's own limit cuts it off.
        let d = d.min(self.core.request_timeout.saturating_sub(Duration::from_secs(1))).max(Duration::from_millis(1));
        Ok(Some((d, self.place("wait")?)))
    }

    /// A place among the waiting calls and watches, or RESOURCE_EXHAUSTED naming `field`.
    fn place(&self, field: &str) -> Result<OwnedSemaphorePermit> {
        self.core.waits.clone().try_acquire_owned().map_err(|_| {
            Error::ResourceExhausted(format!(
                "{field}: every place for a waiting call or watch on this axd is taken (--max-waiting-calls); poll \
                 GetInstance instead"
            ))
        })
    }

    /// WatchInstance: the caller may read instance `id` (checked by the caller of this) and has a
    /// place; the updates are sent from a task of their own until the instance is final, the
    /// watch has lasted [`MAX_WAIT`], or the caller goes away.
    pub(super) fn watch(&self, id: i64, logs: bool) -> Result<Watch> {
        let place = self.place("id")?;
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        let core = self.core.clone();
        crate::core::spawn("watch", async move {
            let _place = place;
            let deadline = tokio::time::Instant::now() + MAX_WAIT;
            let (mut events_sent, mut after_seq, mut last) = (0usize, 0i64, None::<pb::Instance>);
            let mut pause = FIRST_PAUSE;
            loop {
                let store = &core.pools.admin;
                // The trail is read only when the instance changed (every event changes it), the
                // lines only when asked for: a quiet watch costs one read by primary key.
                let read = async {
                    let Some(inst) = store.get_instance(id).await? else { return Ok(None) };
                    // A lease renewal alone is no news to a watcher.
                    let seen = pb::Instance { lease_expire_time: None, ..convert::instance_to_pb(&inst) };
                    let events =
                        if last.as_ref() != Some(&seen) { store.instance_events(id).await? } else { Vec::new() };
                    let lines = if logs { store.instance_logs(id, after_seq, 1000).await?.0 } else { Vec::new() };
                    Ok::<_, crate::error::StoreError>(Some((inst, seen, events, lines)))
                };
                match read.await {
                    Ok(Some((inst, seen, events, lines))) => {
                        let done = inst.status.is_terminal();
                        let new_events: Vec<pb::InstanceEvent> =
                            events.iter().skip(events_sent).map(convert::event_to_pb).collect();
                        if last.as_ref() != Some(&seen) || !new_events.is_empty() || !lines.is_empty() || done {
                            events_sent = events_sent.max(events.len());
                            after_seq = lines.last().map_or(after_seq, |l| l.seq);
                            let update = pb::WatchInstanceResponse {
                                instance: Some(convert::instance_to_pb(&inst)),
                                events: new_events,
                                lines: lines.iter().map(convert::log_to_pb).collect(),
                                done,
                            };
                            if tx.send(Ok(update)).await.is_err() {
                                return; // The caller went away.
                            }
                            last = Some(seen);
                            pause = FIRST_PAUSE;
                        }
                        // Lines may still come after a final state: their last batch is read above.
                        if done {
                            return;
                        }
                    }
                    Ok(None) => {
                        let _ = tx.send(Err(tonic::Status::not_found(format!("instance {id} was deleted")))).await;
                        return;
                    }
                    Err(e) => tracing::warn!(instance = id, error = %e, "watching an instance: reading it failed"),
                }
                let now = tokio::time::Instant::now();
                if now >= deadline {
                    return;
                }
                tokio::select! {
                    () = tokio::time::sleep(pause.min(deadline - now)) => {}
                    () = tx.closed() => return,
                }
                pause = (pause * 2).min(MAX_PAUSE);
            }
        });
        Ok(tokio_stream::wrappers::ReceiverStream::new(rx))
    }

    /// `triggered` once its instance is final, or as it is when `wait` has passed.
    pub(super) async fn wait_until_done(
        &self,
        mut triggered: pb::TriggerTaskResponse,
        wait: Duration,
    ) -> pb::TriggerTaskResponse {
        let Some(id) = triggered.instance.as_ref().map(|i| i.id) else { return triggered };
        let deadline = tokio::time::Instant::now() + wait;
        let mut pause = FIRST_PAUSE;
        loop {
            match self.core.pools.admin.get_instance(id).await {
                Ok(Some(inst)) => {
                    triggered.done = inst.status.is_terminal();
                    triggered.instance = Some(convert::instance_to_pb(&inst));
                    if triggered.done {
                        return triggered;
                    }
                }
                // Deleted with its task meanwhile: nothing more to wait for.
                Ok(None) => return triggered,
                Err(e) => tracing::warn!(instance = id, error = %e, "waiting for an instance: reading it failed"),
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return triggered;
            }
            tokio::time::sleep(pause.min(deadline - now)).await;
            pause = (pause * 2).min(MAX_PAUSE);
        }
    }
}

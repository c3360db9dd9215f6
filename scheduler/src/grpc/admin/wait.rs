//! Trigger and wait (`TriggerTaskRequest.wait`): the call answers once its instance is final or
//! the wait runs out. The instance is created, and the call audited, before the wait begins;
//! the wait reads the instance by its key, at most twice a second, from whichever axd records
//! its end. At most [`MAX_WAITS`] calls wait at once on one axd. A call answers a second before
//! axd's `--request-timeout` at the latest (done = false): the caller goes on waiting by calling
//! again with the instance's idempotency key, as ax-client and axctl do.

use std::time::Duration;

use ax_proto::v1 as pb;
use tokio::sync::OwnedSemaphorePermit;

use super::AdminApi;
use crate::{
    core::MAX_WAITS,
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
        let place = self.core.waits.clone().try_acquire_owned().map_err(|_| {
            Error::ResourceExhausted(format!(
                "wait: {MAX_WAITS} calls are waiting on this axd already; trigger without a wait and poll GetInstance"
            ))
        })?;
        Ok(Some((d, place)))
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

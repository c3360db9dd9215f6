//! Delivers commands queued in `ax_command` (Cancel, from an operator or a timeout decided on any
//! axd) to the worker streams this axd holds. Woken locally when a command is queued here, and at
//! most every poll interval otherwise.

use std::sync::Arc;

use ax_proto::v1 as pb;
use tokio_util::sync::CancellationToken;

use crate::core::Core;

/// Runs until `cancel` fires.
pub async fn run(core: Arc<Core>, cancel: CancellationToken) {
    let wake = core.signals.commands.clone();
    loop {
        deliver(&core).await;
        tokio::select! {
            () = cancel.cancelled() => return,
            () = wake.notified() => {}
            () = tokio::time::sleep(core.sessions.poll_interval) => {}
        }
    }
}

/// Takes this axd's queued commands and sends them. A command for a session that is gone is
/// dropped: the worker learns on reconnect (Welcome.released) that the attempt is no longer its.
pub async fn deliver(core: &Core) {
    loop {
        let taken = async {
            let mut tx = core.pools.workers.begin().await?;
            let commands = tx.cluster().take_commands(&core.scheduler_id, 100).await?;
            tx.commit().await?;
            Ok::<_, crate::error::StoreError>(commands)
        };
        let commands = match taken.await {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "reading queued commands failed");
                return;
            }
        };
        let n = commands.len();
        for c in commands {
            match core.registry.get(&c.session_id) {
                Some(s) => {
                    let cancel = pb::Cancel { instance_id: c.instance_id, attempt: c.attempt, reason: c.reason };
                    let m = pb::SchedulerMessage { msg: Some(pb::scheduler_message::Msg::Cancel(cancel)) };
                    if !s.send(Ok(m)) {
                        tracing::warn!(session = %c.session_id, instance_id = c.instance_id, "stream full or closed; cancel not sent");
                    }
                }
                None => {
                    tracing::debug!(session = %c.session_id, instance_id = c.instance_id, "cancel for a session that is gone")
                }
            }
        }
        if n < 100 {
            return;
        }
    }
}

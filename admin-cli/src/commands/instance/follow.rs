//! `axctl instance logs ID --follow`: prints an instance's log lines as workers send them, until
//! the instance is final.
//!
//! Each round reads the instance's status first, then every line after the last one printed
//! (`after_seq`), so when a round saw the instance final, the lines read after it are all there
//! are: axd stores a worker's log lines before it records the result that follows them on the same
//! stream. Rounds are `--interval` apart. A round that fails on the connection (axd restarting,
//! a failover) is retried, on the same schedule, until `--reconnect-for` has passed since the
//! first failure; then the command fails. Any status axd sends (NOT_FOUND for an unknown instance,
//! PERMISSION_DENIED, ...) ends it at once.

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use ax_proto::v1::{GetInstanceLogsRequest, GetInstanceRequest, InstanceStatus};

use crate::{
    client::{AdminClient, RpcError},
    commands::{Context, required},
    output::{self, LogLineView, OutputFormat},
};

/// Most lines one GetInstanceLogs call returns (the server's cap).
const PAGE: u32 = 1000;

/// Longest a round may take; one that takes longer (axd stopped but its connection still open)
/// counts as failing on the connection, so a stalled axd cannot make the command wait forever.
const ROUND_TIMEOUT: Duration = Duration::from_secs(10);

/// How to follow.
#[derive(Debug, Clone, Copy)]
pub struct Follow {
    /// Time between rounds.
    pub interval: Duration,
    /// How long rounds may keep failing on the connection before the command gives up.
    pub reconnect_for: Duration,
}

/// What one round saw.
struct Round {
    /// The instance was final when the round began.
    finished: bool,
}

/// Follows instance `id` until it is final.
pub async fn run(id: i64, follow: Follow, ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    let mut printer = Printer { after_seq: 0, dropped: 0, output: ctx.output };
    let mut failing_since: Option<Instant> = None;
    loop {
        let outcome = tokio::time::timeout(ROUND_TIMEOUT, round(&mut client, id, &mut printer))
            .await
            .unwrap_or_else(|_| Err(tonic::Status::unavailable(format!("no answer within {ROUND_TIMEOUT:?}"))));
        match outcome {
            Ok(Round { finished: true }) => break,
            Ok(Round { finished: false }) => {
                if failing_since.take().is_some() {
                    eprintln!("axctl: reached {} again; following", ctx.connection.endpoint);
                }
            }
            Err(status) if on_the_connection(&status) => {
                let since = *failing_since.get_or_insert_with(|| {
                    eprintln!(
                        "axctl: lost {} ({}); retrying for {}",
                        ctx.connection.endpoint,
                        RpcError::from(&status),
                        humantime::format_duration(follow.reconnect_for)
                    );
                    Instant::now()
                });
                if since.elapsed() >= follow.reconnect_for {
                    // A message of its own, not an RpcError: it already names the endpoint.
                    bail!(
                        "lost {} for {}; stopped following instance {id} (last failure: {})",
                        ctx.connection.endpoint,
                        humantime::format_duration(follow.reconnect_for),
                        RpcError::from(&status)
                    );
                }
            }
            Err(status) => return Err(RpcError::from(&status).into()),
        }
        tokio::time::sleep(follow.interval).await;
    }
    if printer.dropped > 0 {
        eprintln!("axctl: {} lines dropped: the instance exceeded the server's limit", printer.dropped);
    }
    Ok(())
}

/// Whether a failed call failed on the connection (so axd may answer again) rather than with a
/// status axd sent.
fn on_the_connection(status: &tonic::Status) -> bool {
    status.code() == tonic::Code::Unavailable || std::error::Error::source(status).is_some()
}

/// The status, then every new line; a failure is the call's status.
async fn round(client: &mut AdminClient, id: i64, printer: &mut Printer) -> Result<Round, tonic::Status> {
    let instance = client.get_instance(GetInstanceRequest { id }).await?.into_inner().instance;
    let instance = required(instance, "the instance").map_err(|e| tonic::Status::internal(e.to_string()))?;
    let finished = is_final(instance.status());
    loop {
        let request = GetInstanceLogsRequest { id, after_seq: printer.after_seq, limit: PAGE };
        let page = client.get_instance_logs(request).await?.into_inner();
        let full = page.lines.len() >= PAGE as usize;
        printer.dropped = page.dropped;
        printer
            .print(&page.lines.iter().map(LogLineView::from).collect::<Vec<_>>())
            .map_err(|e| tonic::Status::internal(format!("{e:#}")))?;
        if !full {
            return Ok(Round { finished });
        }
    }
}

/// Whether no attempt of an instance in `status` will run or log any more.
fn is_final(status: InstanceStatus) -> bool {
    match status {
        InstanceStatus::Success
        | InstanceStatus::Failed
        | InstanceStatus::Timeout
        | InstanceStatus::Canceled
        | InstanceStatus::Skipped => true,
        InstanceStatus::Unspecified
        | InstanceStatus::Waiting
        | InstanceStatus::Pending
        | InstanceStatus::Dispatched
        | InstanceStatus::Running => false,
    }
}

/// Prints lines as they come: one text line each, or one compact JSON object per line (JSON Lines).
struct Printer {
    /// The sequence number of the last line printed.
    after_seq: i64,
    /// Lines the server dropped, as of the last page.
    dropped: u64,
    output: OutputFormat,
}

impl Printer {
    fn print(&mut self, lines: &[LogLineView]) -> Result<()> {
        for line in lines {
            // Pages are oldest first; a line at or before the last one printed is never repeated.
            if line.seq <= self.after_seq {
                continue;
            }
            match self.output {
                OutputFormat::Json => output::print_json_line(line)?,
                OutputFormat::Table => output::print_text(&output::log_line_text(line))?,
            }
            self.after_seq = line.seq;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_final_statuses_end_the_follow() {
        let finals: Vec<InstanceStatus> = [
            InstanceStatus::Unspecified,
            InstanceStatus::Pending,
            InstanceStatus::Dispatched,
            InstanceStatus::Running,
            InstanceStatus::Success,
            InstanceStatus::Failed,
            InstanceStatus::Timeout,
            InstanceStatus::Canceled,
            InstanceStatus::Skipped,
        ]
        .into_iter()
        .filter(|s| is_final(*s))
        .collect();
        assert_eq!(
            finals,
            [
                InstanceStatus::Success,
                InstanceStatus::Failed,
                InstanceStatus::Timeout,
                InstanceStatus::Canceled,
                InstanceStatus::Skipped
            ]
        );
    }

    #[test]
    fn connection_failures_are_retried_but_statuses_from_axd_are_not() {
        assert!(on_the_connection(&tonic::Status::unavailable("connection refused")));
        assert!(!on_the_connection(&tonic::Status::not_found("instance 7 does not exist")));
        assert!(!on_the_connection(&tonic::Status::permission_denied("no")));
    }
}

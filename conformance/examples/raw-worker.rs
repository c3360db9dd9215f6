//! A minimal worker written against the generated stubs only (no SDK), used by the kit's own tests:
//! it follows the basic rules (Hello, numbered heartbeats, one credit per slot, Accepted, Result,
//! Cancel) and can be given one flaw, to show that the kit catches it:
//!
//! - `--flaw over-credit`: grants two credits after each Result instead of one, asking axd for
//!   work it has no slot for.
//! - `--flaw no-heartbeat`: never sends a Heartbeat.
//!
//! It does not reconnect, hold early assignments or track leases: the tests run it only through
//! the scenarios about what it does implement.

use std::{collections::HashMap, time::Duration};

use anyhow::Context as _;
use ax_proto::v1::{
    self as pb, scheduler_message::Msg as In, worker_message::Msg as Out, worker_service_client::WorkerServiceClient,
};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;

fn env(name: &str) -> anyhow::Result<String> {
    std::env::var(name).with_context(|| format!("{name} is not set"))
}

fn out(m: Out) -> pb::WorkerMessage {
    pb::WorkerMessage { msg: Some(m) }
}

/// Runs one handler; `Err` is a failure message.
async fn handle(a: &pb::Assign, cancel: CancellationToken) -> Result<String, String> {
    let params: serde_json::Value = serde_json::from_str(&a.params).map_err(|e| format!("params: {e}"))?;
    match a.handler.as_str() {
        "echo" => Ok(a.params.clone()),
        "sleep" => {
            let ms = params["ms"].as_u64().unwrap_or(0);
            tokio::select! {
                () = cancel.cancelled() => Err("canceled".into()),
                () = tokio::time::sleep(Duration::from_millis(ms)) => Ok(String::new()),
            }
        }
        "fail" => Err(params["message"].as_str().unwrap_or("failed").to_owned()),
        "panic" => {
            let r = tokio::spawn(async {
                if std::hint::black_box(true) {
                    panic!("raw-worker: panicking on purpose");
                }
            })
            .await;
            r.map(|()| String::new()).map_err(|e| format!("handler panicked: {e}"))
        }
        "big-output" => Ok("x".repeat(params["bytes"].as_u64().unwrap_or(0) as usize)),
        other => Err(format!("no handler {other:?}")),
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let flaw = args.iter().position(|a| a == "--flaw").and_then(|i| args.get(i + 1)).cloned().unwrap_or_default();
    let endpoint = env("AX_ENDPOINT")?.split(',').next().unwrap_or_default().to_owned();
    let capacity: u32 = env("AX_CAPACITY")?.parse()?;
    let channel = tonic::transport::Endpoint::from_shared(endpoint)?.connect().await?;
    let mut client = WorkerServiceClient::new(channel);
    let (tx, rx) = mpsc::channel::<pb::WorkerMessage>(1024);
    tx.send(out(Out::Hello(pb::Hello {
        app: env("AX_APP")?,
        worker_id: env("AX_WORKER_ID")?,
        handlers: ["echo", "sleep", "fail", "panic", "big-output"].map(String::from).to_vec(),
        capacity,
        client: format!("raw-worker{}", if flaw.is_empty() { String::new() } else { format!(" (flaw: {flaw})") }),
        initial_credits: capacity,
        ..Default::default()
    })))
    .await?;
    let mut inbound = client.connect(ReceiverStream::new(rx)).await?.into_inner();
    let Some(pb::SchedulerMessage { msg: Some(In::Welcome(welcome)) }) = inbound.message().await? else {
        anyhow::bail!("no Welcome");
    };
    let hb = welcome
        .heartbeat_interval
        .map(|d| Duration::new(d.seconds as u64, d.nanos as u32))
        .unwrap_or(Duration::from_secs(2));
    let mut heartbeat = tokio::time::interval_at(tokio::time::Instant::now() + hb, hb);
    let mut seq = 0;
    let (done_tx, mut done_rx) = mpsc::channel::<pb::Result>(1024);
    let mut running: HashMap<(i64, u32), CancellationToken> = HashMap::new();
    loop {
        tokio::select! {
            m = inbound.message() => match m? {
                None => anyhow::bail!("axd ended the stream"),
                Some(pb::SchedulerMessage { msg: Some(In::Assign(a)) }) => {
                    let key = (a.instance_id, a.attempt);
                    tx.send(out(Out::Accepted(pb::Accepted { instance_id: key.0, attempt: key.1 }))).await?;
                    let cancel = CancellationToken::new();
                    running.insert(key, cancel.clone());
                    let done = done_tx.clone();
                    tokio::spawn(async move {
                        let r = handle(&a, cancel).await;
                        let (outcome, message, output) = match r {
                            Ok(o) => (pb::Outcome::Success, String::new(), o),
                            Err(m) => (pb::Outcome::Failed, m, String::new()),
                        };
                        let _ = done.send(pb::Result {
                            instance_id: key.0, attempt: key.1, outcome: outcome.into(), message, output,
                            ..Default::default()
                        }).await;
                    });
                }
                Some(pb::SchedulerMessage { msg: Some(In::Cancel(c)) }) => {
                    if let Some(t) = running.get(&(c.instance_id, c.attempt)) {
                        t.cancel();
                    }
                }
                Some(_) => {}
            },
            Some(r) = done_rx.recv() => {
                running.remove(&(r.instance_id, r.attempt));
                tx.send(out(Out::Result(r))).await?;
                let grant = if flaw == "over-credit" { 2 } else { 1 };
                tx.send(out(Out::Credit(pb::Credit { grant, reset: false }))).await?;
            }
            _ = heartbeat.tick(), if flaw != "no-heartbeat" => {
                seq += 1;
                tx.send(out(Out::Heartbeat(pb::Heartbeat { running: running.len() as u32, seq }))).await?;
            }
        }
    }
}

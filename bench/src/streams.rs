//! streams: what idle worker streams cost one axd, in memory and CPU.
//!
//! One axd (the real binary with its default settings, so a 2 s heartbeat interval) runs on a fresh
//! database, and N simulated workers run in this process. Each is a lightweight client of the real
//! protocol: it opens `WorkerService.Connect`, sends Hello (its own worker id, capacity 1), waits for
//! Welcome, grants one credit, and from then on only sends a Heartbeat every
//! `Welcome.heartbeat_interval`. No task exists, so nothing is ever assigned. The streams are spread
//! over HTTP/2 connections (`--per-connection`, one tonic channel each; axd allows 256 concurrent
//! streams per connection by default, `--max-concurrent-streams`), and at most `--opening` Hellos
//! wait for their Welcome at once.
//!
//! Measured from `/proc/<axd pid>`:
//! - memory: `VmRSS` before the first stream (after an idle window), and once every stream is
//!   established and idle (sampled each second until three samples in a row agree within 0.5 %, or a
//!   bounded time passes): the difference divided by N is the memory per stream. `VmHWM` is the peak,
//!   reached while the streams open;
//! - CPU: `utime + stime` (in `CLK_TCK` ticks) over a window (`--window`) in which the streams only
//!   heartbeat, as a percentage of one core and as microseconds of CPU per heartbeat sent. Everything
//!   axd does in that time counts: its lease round over all sessions every heartbeat interval,
//!   dispatch polls for the credited streams and, on SQLite, the database work, which runs inside
//!   axd. The same window before any stream gives the idle baseline.
//!
//! A Hello that axd refuses with UNAVAILABLE (its documented answer when the database does not
//! give it a connection in time, as while hundreds of Hellos arrive at once on a loaded machine) is
//! sent again on a new stream after a short pause, as the SDKs do; the report counts them.
//! The run fails unless every stream is established, none ends during the measurement, and
//! `AdminService.ListWorkers` lists every worker afterwards (asked only once the figures are taken,
//! as answering it allocates memory in axd).

use std::{
    collections::HashSet,
    future::Future,
    pin::Pin,
    sync::{
        Arc, Mutex, OnceLock,
        atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    },
    task::{Context, Poll, ready},
    time::{Duration, Instant},
};

use anyhow::Context as _;
use ax_proto::v1::{self as pb, admin_service_client::AdminServiceClient, scheduler_message, worker_message};

use tokio::sync::{Semaphore, oneshot};
use tokio_stream::Stream;
use tonic::{
    codec::{BufferSettings, Codec},
    codegen::http::uri::PathAndQuery,
    transport::{Channel, Endpoint},
};

use crate::{
    Bed, DbKind, Report, env,
    stats::{Cpu, status_kb, ticks_per_second},
};

/// App of the simulated workers.
const APP: &str = "bench-streams";

/// Sizes of a streams run.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Worker streams to hold open (smoke: 200).
    #[arg(long, default_value_t = 10_000)]
    pub streams: usize,
    /// Streams per HTTP/2 connection (one tonic channel per connection).
    #[arg(long, default_value_t = 100)]
    pub per_connection: usize,
    /// Seconds over which axd's CPU time is measured while the streams only heartbeat (smoke: 3);
    /// the idle baseline before any stream uses the same window, at most 10 s.
    #[arg(long, default_value_t = 20)]
    pub window: u64,
    /// Most streams waiting for their Welcome at once while they open.
    #[arg(long, default_value_t = 256)]
    pub opening: usize,
}

/// Opens the streams against a fresh axd, measures its memory and CPU, and checks every stream
/// stayed up.
pub async fn run(kind: DbKind, smoke: bool, a: &Args) -> anyhow::Result<Report> {
    let n = if smoke { 200 } else { a.streams };
    let window = Duration::from_secs(if smoke { 3 } else { a.window });
    anyhow::ensure!(n > 0, "--streams must be at least 1");
    anyhow::ensure!(a.per_connection > 0, "--per-connection must be at least 1");
    anyhow::ensure!(a.opening > 0, "--opening must be at least 1");
    anyhow::ensure!(!window.is_zero(), "--window must be at least 1 s");
    let connections = n.div_ceil(a.per_connection);
    // axd inherits the limit: each side holds one socket per connection.
    let nofile = raise_nofile(connections)?;
    let ticks_per_sec = ticks_per_second();
    eprintln!("  open files limit {nofile}, CLK_TCK {ticks_per_sec}");

    let Bed { db, dir, mut axd, endpoint, .. } = Bed::start(kind, "streams", &[]).await?;
    let pid = axd.child.id().context("axd exited right after starting")?;
    let env = env::detect(kind, &db.url).await?;

    // Idle baseline: no stream at all.
    let idle_window = window.min(Duration::from_secs(10));
    eprintln!("  idle baseline for {}s", idle_window.as_secs());
    let idle = Cpu::sample(pid)?;
    tokio::time::sleep(idle_window).await;
    let idle_cpu = Cpu::sample(pid)?.since(&idle, ticks_per_sec);
    let rss_before = status_kb(pid, "VmRSS")?;

    // Open the streams.
    let counters = Arc::new(Counters::default());
    let stop = Arc::new(AtomicBool::new(false));
    let opening = Arc::new(Semaphore::new(a.opening));
    let mut channels = Vec::with_capacity(connections);
    for _ in 0..connections {
        // One Endpoint::connect per channel: one HTTP/2 connection each.
        channels.push(Endpoint::from_shared(endpoint.clone())?.connect().await?);
    }
    eprintln!("  opening {n} streams over {connections} connections");
    let opened = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..n {
        let channel = channels[i / a.per_connection].clone();
        // Heartbeat phases spread over the interval, as independent workers' are.
        let phase = (i % 100) as f64 / 100.0;
        tasks.spawn(hold(channel, i, phase, counters.clone(), stop.clone(), opening.clone()));
    }
    let open_deadline = opened + Duration::from_secs(if smoke { 60 } else { 600 });
    let mut last_report = Instant::now();
    loop {
        counters.check("while the streams opened")?;
        let established = counters.established.load(Ordering::Relaxed);
        if established == n {
            break;
        }
        anyhow::ensure!(
            Instant::now() < open_deadline,
            "only {established} of {n} streams established after {:.0}s",
            opened.elapsed().as_secs_f64()
        );
        if last_report.elapsed() > Duration::from_secs(5) {
            eprintln!("  {established} of {n} established after {:.1}s", opened.elapsed().as_secs_f64());
            last_report = Instant::now();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let open_secs = opened.elapsed().as_secs_f64();
    let interval = *counters.interval.get().context("no Welcome recorded its heartbeat interval")?;
    eprintln!(
        "  {n} streams established in {open_secs:.1}s; heartbeat interval {:.1}s; letting axd settle",
        interval.as_secs_f64()
    );

    // Settle: two heartbeat intervals (every stream has beaten, a lease round ran), then sample
    // RSS each second until it holds still.
    tokio::time::sleep(interval * 2).await;
    let settle_max = Duration::from_secs(if smoke { 6 } else { 30 });
    let settling = Instant::now();
    let mut rss_idle = status_kb(pid, "VmRSS")?;
    let mut still = 0;
    while still < 3 && settling.elapsed() < settle_max {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let rss = status_kb(pid, "VmRSS")?;
        still = if rss.abs_diff(rss_idle) <= (rss / 200).max(256) { still + 1 } else { 0 };
        rss_idle = rss;
    }
    let settled = still >= 3;
    counters.check("while axd settled")?;

    // CPU while the streams only heartbeat.
    eprintln!("  measuring axd CPU for {}s", window.as_secs());
    let beats = counters.heartbeats.load(Ordering::Relaxed);
    let start = Cpu::sample(pid)?;
    tokio::time::sleep(window).await;
    let busy = Cpu::sample(pid)?.since(&start, ticks_per_sec);
    let beats = counters.heartbeats.load(Ordering::Relaxed) - beats;
    counters.check("during the CPU window")?;
    let rss_after = status_kb(pid, "VmRSS")?;
    let rss_peak = status_kb(pid, "VmHWM")?;

    let listed = listed_workers(&endpoint).await?;
    anyhow::ensure!(listed == n, "ListWorkers shows {listed} of the {n} workers");

    // Close: every request stream ends at its next heartbeat; axd then ends the sessions.
    eprintln!("  closing the streams");
    stop.store(true, Ordering::Relaxed);
    let closing = tokio::time::timeout(interval * 3 + Duration::from_secs(30), async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    if closing.is_err() {
        eprintln!("  {} streams did not close in time; cancelling them", tasks.len());
        tasks.shutdown().await;
    }
    drop(channels);
    eprintln!("  stopping axd");
    let _ = axd.terminate().await;
    db.cleanup().await;
    crate::remove_run_dir(&dir);

    let mb = |kb: u64| serde_json::json!((kb as f64 / 1024.0 * 10.0).round() / 10.0);
    let round = |x: f64, digits: i32| serde_json::json!((x * 10f64.powi(digits)).round() / 10f64.powi(digits));
    let per_stream_kb = (rss_idle as f64 - rss_before as f64) / n as f64;
    Ok(Report {
        scenario: "streams",
        env,
        figures: vec![
            ("streams".into(), n.into()),
            ("connections x streams".into(), format!("{connections} x {}", a.per_connection.min(n)).into()),
            ("heartbeat interval s".into(), round(interval.as_secs_f64(), 3)),
            ("open seconds".into(), round(open_secs, 2)),
            ("Hellos sent again after UNAVAILABLE".into(), counters.reopened.load(Ordering::Relaxed).into()),
            ("streams listed by ListWorkers".into(), listed.into()),
            ("axd RSS before streams MB".into(), mb(rss_before)),
            ("axd RSS with idle streams MB".into(), mb(rss_idle)),
            ("RSS settled".into(), settled.into()),
            ("RSS per stream KB".into(), round(per_stream_kb, 2)),
            ("axd RSS after CPU window MB".into(), mb(rss_after)),
            ("axd peak RSS MB".into(), mb(rss_peak)),
            ("CPU window s".into(), round(busy.wall, 2)),
            ("axd idle CPU % (no streams)".into(), round(idle_cpu.percent(), 2)),
            ("axd CPU % of one core".into(), round(busy.percent(), 2)),
            ("heartbeats/s".into(), round(beats as f64 / busy.wall, 0)),
            ("axd CPU us per heartbeat".into(), round(busy.cpu * 1e6 / (beats.max(1) as f64), 2)),
        ],
    })
}

/// Raises the soft limit on open files to the hard limit, and checks it covers the connections.
fn raise_nofile(connections: usize) -> anyhow::Result<u64> {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    // `None` means unlimited.
    let below_hard = match (limit.current, limit.maximum) {
        (Some(soft), Some(hard)) => soft < hard,
        (Some(_), None) => true,
        (None, _) => false,
    };
    if below_hard {
        limit.current = limit.maximum;
        setrlimit(Resource::Nofile, limit).context("raising RLIMIT_NOFILE to its hard limit")?;
    }
    let soft = limit.current.unwrap_or(u64::MAX);
    let need = connections as u64 + 256;
    anyhow::ensure!(
        soft >= need,
        "{connections} connections need about {need} open files, the hard limit is {soft}: raise it or use a larger \
         --per-connection"
    );
    Ok(soft)
}

/// Distinct workers of [`APP`] that AdminService.ListWorkers shows.
async fn listed_workers(endpoint: &str) -> anyhow::Result<usize> {
    let channel = Endpoint::from_shared(endpoint.to_owned())?.connect().await?;
    // Ten thousand sessions are a few MB: more than tonic's default 4 MB message limit allows.
    let mut admin = AdminServiceClient::new(channel).max_decoding_message_size(256 << 20);
    let workers = admin.list_workers(pb::ListWorkersRequest { app: APP.to_owned() }).await?.into_inner().workers;
    Ok(workers.iter().map(|w| w.worker_id.as_str()).collect::<HashSet<_>>().len())
}

/// What the streams report to the measuring task.
#[derive(Default)]
struct Counters {
    /// Streams that got their Welcome.
    established: AtomicUsize,
    /// Streams that ended before the run closed them.
    ended: AtomicUsize,
    /// Hellos refused with UNAVAILABLE and sent again.
    reopened: AtomicUsize,
    /// Heartbeats handed to the transport.
    heartbeats: AtomicU64,
    /// The heartbeat interval axd asked for.
    interval: OnceLock<Duration>,
    /// Why the first stream that ended did.
    first_error: Mutex<Option<String>>,
}

impl Counters {
    /// Fails if any stream ended.
    fn check(&self, when: &str) -> anyhow::Result<()> {
        let ended = self.ended.load(Ordering::Relaxed);
        if ended > 0 {
            let why = self.first_error.lock().map(|e| e.clone()).unwrap_or_default().unwrap_or_default();
            anyhow::bail!("{ended} stream(s) ended {when}; the first: {why}");
        }
        Ok(())
    }
}

/// How often one simulated worker sends its Hello again after UNAVAILABLE, and the pause before the
/// first retry (growing by as much each time).
const REOPEN_LIMIT: u32 = 10;
const REOPEN_PAUSE: Duration = Duration::from_millis(200);

/// One simulated worker: holds its stream until `stop`, recording an unexpected end; a Hello refused
/// with UNAVAILABLE is sent again (at most [`REOPEN_LIMIT`] times).
async fn hold(
    channel: Channel,
    i: usize,
    phase: f64,
    c: Arc<Counters>,
    stop: Arc<AtomicBool>,
    opening: Arc<Semaphore>,
) {
    let mut refused = 0u32;
    let result = loop {
        let mut welcomed = false;
        let r = session(channel.clone(), i, phase, &c, &stop, &opening, &mut welcomed).await;
        let unavailable =
            |e: &anyhow::Error| e.downcast_ref::<tonic::Status>().is_some_and(|s| s.code() == tonic::Code::Unavailable);
        match &r {
            Err(e) if !welcomed && refused < REOPEN_LIMIT && !stop.load(Ordering::Relaxed) && unavailable(e) => {
                refused += 1;
                c.reopened.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(REOPEN_PAUSE * refused).await;
            }
            _ => break r,
        }
    };
    if stop.load(Ordering::Relaxed) {
        return;
    }
    let why = match result {
        Ok(()) => format!("stream {i} closed"),
        Err(e) => format!("stream {i}: {e:#}"),
    };
    if let Ok(mut first) = c.first_error.lock() {
        first.get_or_insert(why);
    }
    c.ended.fetch_add(1, Ordering::Relaxed);
}

/// Cancels the request stream (HTTP/2 RST_STREAM) if the session ends without the run closing it,
/// so that axd does not keep a stream whose reader is gone.
struct CancelOnDrop(Option<tonic::CancellationHandle>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(h) = self.0.take() {
            h.cancel();
        }
    }
}

async fn session(
    channel: Channel,
    i: usize,
    phase: f64,
    c: &Arc<Counters>,
    stop: &Arc<AtomicBool>,
    opening: &Semaphore,
    welcomed_here: &mut bool,
) -> anyhow::Result<()> {
    let permit = opening.acquire().await?;
    let hello = pb::Hello {
        app: APP.to_owned(),
        worker_id: format!("stream-{i:05}"),
        handlers: vec!["noop".to_owned()],
        capacity: 1,
        client: "ax-bench-streams".to_owned(),
        ..Default::default()
    };
    let (welcomed, welcome) = oneshot::channel();
    let mut request = tonic::Request::new(Outbound {
        hello: Some(pb::WorkerMessage { msg: Some(worker_message::Msg::Hello(hello)) }),
        welcome: Some(welcome),
        phase,
        beats: None,
        stop: stop.clone(),
        counters: c.clone(),
    });
    let mut cancel = CancelOnDrop(Some(request.cancellation_handle()));
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await?;
    let path = PathAndQuery::from_static("/ax.v1.WorkerService/Connect");
    let mut inbound = grpc.streaming(request, path, LeanCodec).await?.into_inner();
    let first = inbound.message().await?.context("axd closed the stream before Welcome")?;
    let Some(scheduler_message::Msg::Welcome(w)) = first.msg else {
        anyhow::bail!("expected Welcome, got {:?}", first.msg);
    };
    let every = w
        .heartbeat_interval
        .map(|d| Duration::new(u64::try_from(d.seconds).unwrap_or(0), u32::try_from(d.nanos).unwrap_or(0)))
        .filter(|d| !d.is_zero())
        .context("Welcome without a heartbeat interval")?;
    let _ = c.interval.set(every);
    welcomed.send(every).map_err(|_| anyhow::anyhow!("the request stream is gone"))?;
    c.established.fetch_add(1, Ordering::Relaxed);
    *welcomed_here = true;
    drop(permit);
    // After Welcome only axd's heartbeats are expected (no task exists), then the end of the stream.
    loop {
        match inbound.message().await {
            Ok(Some(m)) => match m.msg {
                Some(scheduler_message::Msg::Heartbeat(_)) => {}
                Some(scheduler_message::Msg::Drain(d)) => anyhow::bail!("axd sent Drain: {}", d.reason),
                other => anyhow::bail!("unexpected message {other:?}"),
            },
            Ok(None) if stop.load(Ordering::Relaxed) => {
                // Closed by the run: the request stream already ended cleanly.
                cancel.0 = None;
                return Ok(());
            }
            Ok(None) => anyhow::bail!("axd closed the stream"),
            Err(status) => return Err(status.into()),
        }
    }
}

/// The request stream of one simulated worker, without a channel or task of its own: Hello at once;
/// after Welcome (its interval arrives through `welcome`) one Credit; then a Heartbeat every
/// interval (the first one `phase` of an interval after Welcome), until `stop` is seen at a tick.
struct Outbound {
    hello: Option<pb::WorkerMessage>,
    welcome: Option<oneshot::Receiver<Duration>>,
    phase: f64,
    beats: Option<tokio::time::Interval>,
    stop: Arc<AtomicBool>,
    counters: Arc<Counters>,
}

impl Stream for Outbound {
    type Item = pb::WorkerMessage;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        if let Some(hello) = this.hello.take() {
            return Poll::Ready(Some(hello));
        }
        if let Some(welcome) = &mut this.welcome {
            let every = match ready!(Pin::new(welcome).poll(cx)) {
                Ok(every) => every,
                // The session failed before Welcome.
                Err(_) => return Poll::Ready(None),
            };
            this.welcome = None;
            let first = tokio::time::Instant::now() + every.mul_f64(this.phase);
            let mut beats = tokio::time::interval_at(first, every);
            beats.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            this.beats = Some(beats);
            let credit = pb::Credit { grant: 1, reset: false };
            return Poll::Ready(Some(pb::WorkerMessage { msg: Some(worker_message::Msg::Credit(credit)) }));
        }
        let Some(beats) = &mut this.beats else { return Poll::Ready(None) };
        ready!(beats.poll_tick(cx));
        if this.stop.load(Ordering::Relaxed) {
            this.beats = None;
            return Poll::Ready(None);
        }
        this.counters.heartbeats.fetch_add(1, Ordering::Relaxed);
        Poll::Ready(Some(pb::WorkerMessage {
            msg: Some(worker_message::Msg::Heartbeat(pb::Heartbeat { running: 0, seq: 0 })),
        }))
    }
}

/// The prost codec with small buffers: tonic's default reserves 8 KiB per direction for every
/// stream, which for ten thousand streams would make this client heavier than the server it
/// measures. Messages larger than the buffer still work (it grows).
#[derive(Debug, Clone, Copy, Default)]
struct LeanCodec;

impl Codec for LeanCodec {
    type Encode = pb::WorkerMessage;
    type Decode = pb::SchedulerMessage;
    type Encoder = tonic_prost::ProstEncoder<pb::WorkerMessage>;
    type Decoder = tonic_prost::ProstDecoder<pb::SchedulerMessage>;

    fn encoder(&mut self) -> Self::Encoder {
        tonic_prost::ProstEncoder::new(BufferSettings::new(256, 32 * 1024))
    }

    fn decoder(&mut self) -> Self::Decoder {
        tonic_prost::ProstDecoder::new(BufferSettings::new(256, 32 * 1024))
    }
}

//! The scenarios, one function each, in the order they run. Each starts from a fresh worker process
//! that axd has welcomed, does one thing to it through axd (or through the relay, when axd has to
//! misbehave), and checks what the worker said on the wire and what axd recorded.

use std::{
    collections::HashSet,
    sync::{Arc, Mutex},
    time::Duration,
};

use anyhow::bail;
use ax_proto::v1::{self as pb, scheduler_message::Msg as Down, worker_message::Msg as Up};
use tokio::time::Instant;

use crate::{
    checks,
    relay::Ev,
    scenario::{HANDLERS, S, ensure, failed, lists, ms, need, outcome, pb_dur},
};

/// What a scenario concluded.
pub enum Verdict {
    Pass(String),
    Skip(String),
}

/// Every scenario: name, what it checks.
pub const ALL: &[(&str, &str)] = &[
    ("hello-welcome", "Hello names the app, worker id, handlers and capacity; Welcome; credits; an echo round trip"),
    ("heartbeats", "Heartbeat every interval, numbered 1, 2, 3, ..., idle and while a handler runs"),
    ("credits", "never more credits than free slots; never more running than capacity; slots all come back"),
    ("early-hold", "an early assignment is held until Assign.start_after, then Accepted"),
    ("cancel-during-run", "Cancel stops a running handler; its Result is FAILED"),
    ("cancel-during-hold", "Cancel during an early assignment's hold: never started, slot returned"),
    ("timeout-cancel", "the Cancel axd sends at the task's timeout stops the handler"),
    (
        "timeout-no-cancel",
        "without axd's Cancel, the worker stops an attempt itself at its timeout plus the fence margin, even a \
         handler that ignores cancellation",
    ),
    ("ack-timeout", "axd takes back an attempt whose Accepted it never got: the worker stops it and goes on"),
    ("reconnect", "after a broken stream the worker reconnects, re-announces its attempt and keeps it"),
    ("result-replay", "a Result not acknowledged before a reconnect is sent again and recorded once"),
    ("drain", "on Drain the worker moves to a new stream, keeping its attempt"),
    ("output-limit", "an output over 65536 bytes reaches axd and is stored truncated and marked"),
    ("handler-panic", "a failing and a panicking (throwing) handler are reported FAILED; the worker goes on"),
    ("silent-axd", "the worker leaves an axd that says nothing for 3 heartbeat intervals, keeping its attempt"),
    ("lease-fence", "an attempt whose lease is not renewed is stopped and reported before the lease ends"),
    ("stale-assignment", "an Assign read after its accept_by is rejected, not started"),
    (
        "late-welcome",
        "a Welcome read late does not slow the worker's database clock: a stale Assign behind it is rejected",
    ),
];

/// How long a cooperative handler may take to stop once told to.
const STOP: Duration = Duration::from_secs(2);
/// Generous bound for things that take one round trip through axd.
const SOON: Duration = Duration::from_secs(10);

/// Runs scenario `name` on `s`.
pub async fn run(name: &str, s: &mut S<'_>) -> anyhow::Result<Verdict> {
    match name {
        "hello-welcome" => hello_welcome(s).await,
        "heartbeats" => heartbeats(s).await,
        "credits" => credits(s).await,
        "early-hold" => early_hold(s).await,
        "cancel-during-run" => cancel_during_run(s).await,
        "cancel-during-hold" => cancel_during_hold(s).await,
        "timeout-cancel" => timeout_cancel(s).await,
        "timeout-no-cancel" => timeout_no_cancel(s).await,
        "ack-timeout" => ack_timeout(s).await,
        "reconnect" => reconnect(s).await,
        "result-replay" => result_replay(s).await,
        "drain" => drain(s).await,
        "output-limit" => output_limit(s).await,
        "handler-panic" => handler_panic(s).await,
        "silent-axd" => silent_axd(s).await,
        "lease-fence" => lease_fence(s).await,
        "stale-assignment" => stale_assignment(s).await,
        "late-welcome" => late_welcome(s).await,
        other => bail!("no scenario named {other:?}"),
    }
}

fn sleep_params(d: Duration) -> String {
    format!("{{\"ms\":{}}}", d.as_millis())
}

async fn hello_welcome(s: &mut S<'_>) -> anyhow::Result<Verdict> {
    let h = s.hello.clone();
    ensure(h.app == s.app, || format!("Hello.app is {:?}, not AX_APP ({:?})", h.app, s.app))?;
    ensure(h.worker_id == s.worker_id, || {
        format!("Hello.worker_id is {:?}, not AX_WORKER_ID ({:?})", h.worker_id, s.worker_id)
    })?;
    for name in HANDLERS {
        ensure(h.handlers.iter().any(|x| x == name), || {
            format!("Hello.handlers {:?} lacks {name:?} (the kit needs {HANDLERS:?})", h.handlers)
        })?;
    }
    ensure(h.capacity == s.kit.capacity, || {
        format!("Hello.capacity is {}, not AX_CAPACITY ({})", h.capacity, s.kit.capacity)
    })?;
    ensure(h.in_flight.is_empty(), || format!("a new worker's Hello lists {} attempts in flight", h.in_flight.len()))?;
    s.relay
        .wait("a credit from the worker (Hello.initial_credits or Credit)", Duration::from_secs(3), |log| {
            checks::credits(log).ok()?.get(&0).filter(|c| c.unused > 0).map(|_| ())
        })
        .await?;
    let params = r#"{"hello":"conformance","n":1,"nested":{"list":[1,2,3]}}"#;
    let id = s.run("echo", params).await?;
    let (i, _) = s.kit.admin.expect_final(id, pb::InstanceStatus::Success, SOON).await?;
    let (acc, _) = s.accepted(id, 1, Duration::ZERO).await?;
    let (res, _, _) = s.result(id, 1, None, Duration::ZERO).await?;
    ensure(acc <= res, || "the Result came before the Accepted".into())?;
    let got: serde_json::Value = serde_json::from_str(&i.output)
        .map_err(|e| anyhow::anyhow!("echo's output {:?} is not JSON: {e}", i.output))?;
    let want: serde_json::Value = serde_json::from_str(params)?;
    ensure(got == want, || format!("echo returned {:?}, expected its params {params}", i.output))?;
    Ok(Verdict::Pass(format!(
        "client {:?}, {} handlers, capacity {}; echo round trip",
        h.client,
        h.handlers.len(),
        h.capacity
    )))
}

async fn heartbeats(s: &mut S<'_>) -> anyhow::Result<Verdict> {
    let hb = s.timing.heartbeat;
    // Idle for a few intervals, then busy with a handler for a few more.
    let count = |log: &[crate::relay::Rec]| {
        log.iter().filter(|r| matches!(&r.ev, Ev::FromWorker { msg: Up::Heartbeat(_) })).count()
    };
    s.relay.wait("4 heartbeats while idle", hb * 6, |log| (count(log) >= 4).then_some(())).await.map_err(|_| {
        anyhow::anyhow!(
            "{} heartbeats in {} while idle; the interval is {} (axd ends a session after 3 silent intervals)",
            count(&s.log()),
            ms(hb * 6),
            ms(hb)
        )
    })?;
    let id = s.run("sleep", &sleep_params(hb * 3)).await?;
    s.kit.admin.expect_final(id, pb::InstanceStatus::Success, hb * 3 + SOON).await?;
    let end = Instant::now();
    let beats: Vec<(Instant, u64)> = s
        .log()
        .iter()
        .filter(|r| r.stream == 0)
        .filter_map(|r| match &r.ev {
            Ev::FromWorker { msg: Up::Heartbeat(h) } => Some((r.at, h.seq)),
            _ => None,
        })
        .collect();
    // Heartbeats may come late by half an interval (a busy machine), never by more.
    let bound = hb + hb / 2;
    let mut prev = s.welcome_at;
    for (i, (at, seq)) in beats.iter().enumerate() {
        let gap = at.duration_since(prev);
        ensure(gap <= bound, || {
            let after = if i == 0 { "the Welcome".to_owned() } else { format!("heartbeat {}", beats[i - 1].1) };
            format!("heartbeat {} came {} after {after}; the interval is {}", seq, ms(gap), ms(hb))
        })?;
        ensure(*seq == i as u64 + 1, || {
            if *seq == 0 {
                "Heartbeat.seq is 0: without numbered heartbeats the worker cannot tell which heartbeat a lease \
                 renewal answers, so it cannot fence its attempts (worker.proto, \"Leases and self-fencing\")"
                    .to_owned()
            } else {
                format!("heartbeat number {} carries seq {seq}", i + 1)
            }
        })?;
        prev = *at;
    }
    let gap = end.duration_since(prev);
    ensure(gap <= bound, || format!("no heartbeat for {} (the interval is {})", ms(gap), ms(hb)))?;
    Ok(Verdict::Pass(format!("{} heartbeats, interval {}, numbered 1..{}", beats.len(), ms(hb), beats.len())))
}

async fn credits(s: &mut S<'_>) -> anyhow::Result<Verdict> {
    let cap = s.hello.capacity;
    let n = 3 * cap as usize;
    let name = s.create("sleep", "{}", None, None).await?;
    let mut ids = Vec::new();
    for _ in 0..n {
        ids.push(s.kit.admin.trigger(&name, &sleep_params(Duration::from_millis(400))).await?);
    }
    for id in &ids {
        s.kit.admin.expect_final(*id, pb::InstanceStatus::Success, Duration::from_secs(30)).await?;
    }
    // At most `capacity` ran at once: Accepted .. Result.
    let mut running: HashSet<(i64, u32)> = HashSet::new();
    let mut peak = 0;
    for r in s.log() {
        match &r.ev {
            Ev::FromWorker { msg: Up::Accepted(a) } => {
                running.insert((a.instance_id, a.attempt));
            }
            Ev::FromWorker { msg: Up::Result(x) } => {
                running.remove(&(x.instance_id, x.attempt));
            }
            _ => {}
        }
        peak = peak.max(running.len());
    }
    ensure(peak <= cap as usize, || format!("{peak} attempts ran at once with capacity {cap}"))?;
    // Every slot comes back once the work is done.
    s.relay
        .wait("the worker granting its slots back (unused credits = capacity)", Duration::from_secs(3), |log| {
            let c = checks::credits(log).ok()?;
            let c = c.get(&0)?;
            (c.held.is_empty() && c.unused == i64::from(cap)).then_some(())
        })
        .await
        .map_err(|e| {
            let c = checks::credits(&s.log()).ok().and_then(|c| c.get(&0).cloned()).unwrap_or_default();
            anyhow::anyhow!("{e}: {} unused credits and {} attempts held at the end", c.unused, c.held.len())
        })?;
    Ok(Verdict::Pass(format!("{n} instances, at most {peak} running at once with capacity {cap}")))
}

/// Waits for the first forwarded Assign of task `task`.
async fn assign_of(s: &S<'_>, task: &str, within: Duration) -> anyhow::Result<(Instant, usize, pb::Assign)> {
    s.wait_down(&format!("axd's Assign for task {task}"), within, |_, m| match m {
        Down::Assign(a) if a.task_name == task => Some(a.clone()),
        _ => None,
    })
    .await
}

fn start_after_of(a: &pb::Assign) -> Option<Duration> {
    let d = a.start_after?;
    let d = Duration::new(u64::try_from(d.seconds).ok()?, u32::try_from(d.nanos).ok()?);
    (!d.is_zero()).then_some(d)
}

async fn early_assignment(
    s: &mut S<'_>,
    handler: &str,
    params: &str,
) -> anyhow::Result<Option<(Instant, pb::Assign, Duration)>> {
    let task = s.create(handler, params, None, Some(Duration::from_millis(2500))).await?;
    let (at, _, a) = assign_of(s, &task, SOON).await?;
    match start_after_of(&a) {
        Some(d) => Ok(Some((at, a, d))),
        None if s.kit.own_axd => {
            bail!("axd sent the assignment without start_after although the worker announced the hold")
        }
        None => Ok(None),
    }
}

async fn early_hold(s: &mut S<'_>) -> anyhow::Result<Verdict> {
    if !s.hello.start_after_supported {
        return Ok(Verdict::Skip(
            "the worker does not set Hello.start_after_supported (allowed: axd then assigns only due instances)".into(),
        ));
    }
    let Some((at, a, hold)) = early_assignment(s, "echo", "{}").await? else {
        return Ok(Verdict::Skip("axd sent no early assignment (is its --dispatch-ahead 0?)".into()));
    };
    let (acc, _) = s.accepted(a.instance_id, a.attempt, hold + SOON).await?;
    let held = acc.duration_since(at);
    ensure(held >= hold, || {
        format!("Accepted {} after the Assign, before its start_after of {}: the run started early", ms(held), ms(hold))
    })?;
    let late = held - hold;
    ensure(late <= Duration::from_secs(1), || format!("the hold of {} ended {} late", ms(hold), ms(late)))?;
    s.kit.admin.expect_final(a.instance_id, pb::InstanceStatus::Success, SOON).await?;
    Ok(Verdict::Pass(format!("held {} for a start_after of {}", ms(held), ms(hold))))
}

async fn cancel_during_run(s: &mut S<'_>) -> anyhow::Result<Verdict> {
    let id = s.run("sleep", &sleep_params(Duration::from_secs(60))).await?;
    s.accepted(id, 1, SOON).await?;
    s.kit.admin.cancel(id).await?;
    let (c, _, _) = s
        .wait_down("axd's Cancel", SOON, |_, m| matches!(m, Down::Cancel(c) if c.instance_id == id).then_some(()))
        .await?;
    let (r, _, res) = s
        .result(id, 1, None, STOP)
        .await
        .map_err(|e| anyhow::anyhow!("{e} after the Cancel: the handler was not stopped"))?;
    ensure(failed(&res), || format!("a 60 s sleep canceled after it started reported {}", outcome(&res)))?;
    s.kit.admin.expect_final(id, pb::InstanceStatus::Canceled, SOON).await?;
    Ok(Verdict::Pass(format!("stopped {} after the Cancel", ms(r.duration_since(c)))))
}

async fn cancel_during_hold(s: &mut S<'_>) -> anyhow::Result<Verdict> {
    if !s.hello.start_after_supported {
        return Ok(Verdict::Skip("the worker does not set Hello.start_after_supported".into()));
    }
    let Some((at, a, hold)) = early_assignment(s, "sleep", &sleep_params(Duration::from_secs(60))).await? else {
        return Ok(Verdict::Skip("axd sent no early assignment (is its --dispatch-ahead 0?)".into()));
    };
    let key = (a.instance_id, a.attempt);
    s.kit.admin.cancel(a.instance_id).await?;
    let (c, _, _) = s
        .wait_down("axd's Cancel", SOON, |_, m| {
            matches!(m, Down::Cancel(c) if (c.instance_id, c.attempt) == key).then_some(())
        })
        .await?;
    if c >= at + hold {
        bail!(
            "the Cancel reached the worker {} after the hold had ended; the kit could not test a cancel during the hold (machine too slow?)",
            ms(c - (at + hold))
        );
    }
    // The attempt must end (Result or Reject) and never start: watch until well past the hold.
    let (ended, _, how) = s
        .wait_up("the worker ending the canceled held attempt (Result or Reject)", STOP, |_, m| match m {
            Up::Result(x) if (x.instance_id, x.attempt) == key => Some("Result"),
            Up::Reject(x) if (x.instance_id, x.attempt) == key => Some("Reject"),
            _ => None,
        })
        .await?;
    tokio::time::sleep_until((at + hold + s.timing.heartbeat).max(Instant::now())).await;
    let started = s
        .log()
        .iter()
        .any(|r| matches!(&r.ev, Ev::FromWorker { msg: Up::Accepted(x) } if (x.instance_id, x.attempt) == key));
    ensure(!started, || "the worker sent Accepted for an assignment canceled during its hold".into())?;
    s.kit.admin.expect_final(a.instance_id, pb::InstanceStatus::Canceled, SOON).await?;
    Ok(Verdict::Pass(format!(
        "canceled {} into a {} hold; ended with {how} {} later, never started",
        ms(c - at),
        ms(hold),
        ms(ended - c)
    )))
}

async fn timeout_cancel(s: &mut S<'_>) -> anyhow::Result<Verdict> {
    let params = sleep_params(Duration::from_secs(60));
    let name = s.create("sleep", &params, Some(Duration::from_secs(1)), None).await?;
    let id = s.kit.admin.trigger(&name, &params).await?;
    s.accepted(id, 1, SOON).await?;
    let (c, _, reason) = s
        .wait_down("axd's Cancel at the timeout", SOON, |_, m| match m {
            Down::Cancel(c) if c.instance_id == id => Some(c.reason.clone()),
            _ => None,
        })
        .await?;
    let (r, _, res) =
        s.result(id, 1, None, STOP).await.map_err(|e| anyhow::anyhow!("{e} after the timeout's Cancel"))?;
    ensure(failed(&res), || format!("a handler stopped by its timeout reported {}", outcome(&res)))?;
    s.kit.admin.expect_final(id, pb::InstanceStatus::Timeout, SOON).await?;
    Ok(Verdict::Pass(format!("Cancel {reason:?}; stopped {} later", ms(r.duration_since(c)))))
}

async fn timeout_no_cancel(s: &mut S<'_>) -> anyhow::Result<Verdict> {
    // axd's Cancel never reaches the worker, and the handler would not listen to it anyway: only the
    // attempt's own deadline (worker.proto, Assign.timeout) stops it. Renewals keep coming, so its
    // lease does not.
    s.relay.set_down(Some(Box::new(|_, m| !matches!(m, Down::Cancel(_)))));
    let timeout = Duration::from_secs(1);
    let params = r#"{"ms":60000,"ignore_cancel":true}"#;
    let name = s.create("sleep", params, Some(timeout), None).await?;
    let id = s.kit.admin.trigger(&name, params).await?;
    let (assigned, _, a) = s
        .wait_down("axd's Assign", SOON, |_, m| match m {
            Down::Assign(a) if a.instance_id == id && a.attempt == 1 => Some(a.clone()),
            _ => None,
        })
        .await?;
    ensure(a.timeout == Some(pb_dur(timeout)), || {
        format!("axd's Assign carries timeout {:?}, not {timeout:?}", a.timeout)
    })?;
    let hold = start_after_of(&a).unwrap_or_default();
    let (acc, _) = s.accepted(id, 1, hold + SOON).await?;
    let margin = s.timing.fence_margin;
    let (r, _, res) = s.result(id, 1, None, timeout + margin + STOP + SOON).await.map_err(|e| {
        anyhow::anyhow!(
            "{e}: the worker did not stop the attempt at its timeout ({}) plus the fence margin ({}) when axd's \
             Cancel did not come (worker.proto, Assign.timeout)",
            ms(timeout),
            ms(margin)
        )
    })?;
    s.relay.set_down(None);
    // Counted from the handler's start: after the Assign arrived, and after its hold.
    let earliest = assigned + hold + timeout + margin;
    ensure(r >= earliest, || {
        format!(
            "the worker reported the attempt {} after its Assign, before its timeout ({}) and the fence margin ({}) had \
             passed since it could have started",
            ms(r.duration_since(assigned)),
            ms(timeout),
            ms(margin)
        )
    })?;
    ensure(r <= acc + timeout + margin + STOP, || {
        format!(
            "the worker reported the attempt {} after Accepted; with a timeout of {} and a fence margin of {} it must \
             stop it within {} of those",
            ms(r.duration_since(acc)),
            ms(timeout),
            ms(margin),
            ms(STOP)
        )
    })?;
    let withheld = s.log().iter().any(|x| {
        x.at < r && matches!(&x.ev, Ev::ToWorker { msg: Down::Cancel(c), forwarded: false } if c.instance_id == id)
    });
    ensure(withheld, || {
        "axd sent no Cancel at the timeout before the Result (the kit withholds it): nothing was tested".into()
    })?;
    ensure(failed(&res) && res.retryable, || {
        format!(
            "the timed-out attempt was reported {} (retryable: {}), not FAILED (retryable)",
            outcome(&res),
            res.retryable
        )
    })?;
    s.kit.admin.expect_final(id, pb::InstanceStatus::Timeout, SOON).await?;
    Ok(Verdict::Pass(format!(
        "no Cancel; stopped {} after Accepted (timeout {}, fence margin {}): {:?}",
        ms(r.duration_since(acc)),
        ms(timeout),
        ms(margin),
        res.message
    )))
}

async fn ack_timeout(s: &mut S<'_>) -> anyhow::Result<Verdict> {
    // axd never hears the first attempt's Accepted, so it takes the attempt back.
    s.relay.set_up(Some(Box::new(|_, m| !matches!(m, Up::Accepted(a) if a.attempt == 1))));
    let id = s.run("sleep", &sleep_params(Duration::from_secs(60))).await?;
    let within = s.timing.ack_timeout + SOON;
    let (c, _, reason) = s
        .wait_down("axd's Cancel after the ack timeout", within, |_, m| match m {
            Down::Cancel(c) if c.instance_id == id && c.attempt == 1 => Some(c.reason.clone()),
            _ => None,
        })
        .await?;
    let (r, _, _) =
        s.result(id, 1, None, STOP).await.map_err(|e| anyhow::anyhow!("{e} after the ack timeout's Cancel"))?;
    // The instance goes back to the queue and comes back as attempt 2, which the worker runs.
    s.wait_down("attempt 2 assigned", within, |_, m| {
        matches!(m, Down::Assign(a) if a.instance_id == id && a.attempt == 2).then_some(())
    })
    .await?;
    s.accepted(id, 2, SOON).await?;
    s.relay.set_up(None);
    s.kit.admin.cancel(id).await?;
    s.result(id, 2, None, STOP).await?;
    Ok(Verdict::Pass(format!("Cancel {reason:?}: stopped {} later; attempt 2 then ran", ms(r.duration_since(c)))))
}

/// Waits until a lease renewal covering an attempt accepted (on stream 0) at `accepted` has reached
/// the worker, so that its lease reaches well past the ack deadline; returns the heartbeat number
/// it answered (0 if the worker does not number its heartbeats).
async fn renewed(s: &S<'_>, accepted: Instant) -> anyhow::Result<u64> {
    let hb = s.timing.heartbeat;
    let (sent, k) = s
        .relay
        .wait("a heartbeat after Accepted", hb * 3, |log| {
            log.iter().find_map(|r| match &r.ev {
                Ev::FromWorker { msg: Up::Heartbeat(h) } if r.stream == 0 && r.at > accepted => Some((r.at, h.seq)),
                _ => None,
            })
        })
        .await?;
    s.relay
        .wait("a lease renewal covering the attempt", hb * 4, |log| {
            log.iter().find_map(|r| match &r.ev {
                Ev::ToWorker { msg: Down::Heartbeat(h), forwarded: true }
                    if r.stream == 0 && r.at > sent && (k == 0 || h.renewed_seq >= k) =>
                {
                    Some(())
                }
                _ => None,
            })
        })
        .await?;
    Ok(k)
}

/// Checks that the worker, on a new stream, re-announced instance `id` attempt 1 and axd adopted it.
async fn moved_with_attempt(s: &mut S<'_>, id: i64, within: Duration) -> anyhow::Result<(Instant, usize)> {
    let (at, st, h) = s.rehello(within).await?;
    ensure(h.worker_id == s.hello.worker_id, || {
        format!("worker_id changed from {:?} to {:?} across the reconnect", s.hello.worker_id, h.worker_id)
    })?;
    ensure(lists(&h.in_flight, id, 1), || {
        format!(
            "the new Hello does not re-announce instance {id} attempt 1, which was still running (in_flight: {:?})",
            h.in_flight
        )
    })?;
    let w = s.welcome_on(st, SOON).await?;
    ensure(lists(&w.adopted, id, 1), || {
        format!("axd did not adopt instance {id} attempt 1 (released: {:?})", w.released)
    })?;
    Ok((at, st))
}

async fn reconnect(s: &mut S<'_>) -> anyhow::Result<Verdict> {
    let id = s.run("sleep", &sleep_params(s.timing.heartbeat * 4)).await?;
    let (acc, _) = s.accepted(id, 1, SOON).await?;
    renewed(s, acc).await?;
    let cut = Instant::now();
    s.relay.cut(0);
    let (at, _) = moved_with_attempt(s, id, SOON).await?;
    let (_, _, res) = s.result(id, 1, None, SOON).await?;
    ensure(!failed(&res), || format!("the kept attempt reported {}: {:?}", outcome(&res), res.message))?;
    let (i, _) = s.kit.admin.expect_final(id, pb::InstanceStatus::Success, SOON).await?;
    ensure(i.attempt == 1, || format!("the instance ran again as attempt {}: the worker did not keep it", i.attempt))?;
    Ok(Verdict::Pass(format!("reconnected {} after the cut, attempt 1 kept", ms(at.duration_since(cut)))))
}

async fn result_replay(s: &mut S<'_>) -> anyhow::Result<Verdict> {
    // axd records the Result, but its ResultAck never reaches the worker; then the stream breaks.
    s.relay.set_down(Some(Box::new(|st, m| !(st == 0 && matches!(m, Down::ResultAck(_))))));
    let id = s.run("sleep", &sleep_params(Duration::from_millis(300))).await?;
    s.relay
        .wait("axd acknowledging the Result (held back from the worker)", SOON, |log| {
            log.iter().find_map(|r| match &r.ev {
                Ev::ToWorker { msg: Down::ResultAck(a), forwarded: false } if a.instance_id == id => Some(()),
                _ => None,
            })
        })
        .await?;
    s.relay.cut(0);
    let (_, st, h) = s.rehello(SOON).await?;
    ensure(lists(&h.in_flight, id, 1), || {
        format!("the new Hello does not list instance {id} attempt 1, whose Result was never acknowledged")
    })?;
    let (at, _, _) = s
        .wait_up("the unacknowledged Result sent again on the new stream", SOON, |x, m| {
            matches!(m, Up::Result(r) if x == st && r.instance_id == id).then_some(())
        })
        .await?;
    let (ack, _, _) = s
        .wait_down("axd's ResultAck on the new stream", SOON, |x, m| {
            matches!(m, Down::ResultAck(a) if x == st && a.instance_id == id).then_some(())
        })
        .await?;
    // Once acknowledged it is forgotten: no more copies.
    tokio::time::sleep(s.timing.heartbeat * 2).await;
    let copies = s
        .log()
        .iter()
        .filter(|r| r.stream == st && matches!(&r.ev, Ev::FromWorker { msg: Up::Result(x) } if x.instance_id == id))
        .count();
    ensure(copies == 1, || format!("the Result was sent {copies} times on the new stream, still after its ResultAck"))?;
    let (_, events) = s.kit.admin.expect_final(id, pb::InstanceStatus::Success, SOON).await?;
    let recorded = events
        .iter()
        .filter(|e| e.to_status == pb::InstanceStatus::Success as i32 && e.from_status != e.to_status)
        .count();
    ensure(recorded == 1, || format!("the trail records SUCCESS {recorded} times"))?;
    Ok(Verdict::Pass(format!(
        "re-sent on the new stream, acknowledged {} later, recorded once",
        ms(ack.duration_since(at))
    )))
}

async fn drain(s: &mut S<'_>) -> anyhow::Result<Verdict> {
    let id = s.run("sleep", &sleep_params(s.timing.heartbeat * 4)).await?;
    let (acc, _) = s.accepted(id, 1, SOON).await?;
    renewed(s, acc).await?;
    let t = Instant::now();
    s.relay
        .inject(
            0,
            Down::Drain(pb::Drain {
                reason: "ax-conformance: drain".into(),
                deadline: Some(pb_dur(Duration::from_secs(10))),
            }),
        )
        .await?;
    let bound = Duration::from_secs(3);
    let (at, _) = moved_with_attempt(s, id, bound).await.map_err(|e| anyhow::anyhow!("after Drain: {e}"))?;
    s.relay
        .wait("the worker closing the drained stream", bound, |log| {
            log.iter().find_map(|r| matches!(&r.ev, Ev::WorkerClosed { .. } if r.stream == 0).then_some(()))
        })
        .await?;
    let (i, _) = s.kit.admin.expect_final(id, pb::InstanceStatus::Success, SOON).await?;
    ensure(i.attempt == 1, || format!("the instance ran again as attempt {}", i.attempt))?;
    Ok(Verdict::Pass(format!("new stream {} after Drain, attempt 1 kept", ms(at.duration_since(t)))))
}

/// Result.output's limit (worker.proto); axd cuts longer outputs and marks the cut.
pub const OUTPUT_LIMIT: usize = 65536;

async fn output_limit(s: &mut S<'_>) -> anyhow::Result<Verdict> {
    let bytes = 1 << 20;
    let id = s.run("big-output", &format!("{{\"bytes\":{bytes}}}")).await?;
    let (_, _, res) = s.result(id, 1, None, SOON).await?;
    ensure(!failed(&res), || format!("big-output reported FAILED: {:?}", res.message))?;
    let (i, _) = s.kit.admin.expect_final(id, pb::InstanceStatus::Success, SOON).await?;
    ensure(i.output.len() <= OUTPUT_LIMIT, || format!("axd stored {} bytes of output", i.output.len()))?;
    ensure(i.output.starts_with(&"x".repeat(1000)), || {
        "the stored output does not start with the handler's output".into()
    })?;
    ensure(i.output.contains("truncated"), || {
        format!(
            "the stored output is not marked as truncated: ends {:?}",
            &i.output[i.output.len().saturating_sub(60)..]
        )
    })?;
    Ok(Verdict::Pass(format!(
        "handler output {bytes} bytes, sent {} bytes, stored {} bytes, marked",
        res.output.len(),
        i.output.len()
    )))
}

async fn handler_panic(s: &mut S<'_>) -> anyhow::Result<Verdict> {
    let id = s.run("fail", r#"{"message":"conformance: failing on purpose"}"#).await?;
    let (i, _) = s.kit.admin.expect_final(id, pb::InstanceStatus::Failed, SOON).await?;
    ensure(i.message.contains("failing on purpose"), || {
        format!("the failure's message did not reach axd: {:?}", i.message)
    })?;
    let id = s.run("panic", "{}").await?;
    let (_, _, res) = s.result(id, 1, None, SOON).await.map_err(|e| match s.worker_exited() {
        Some(status) => anyhow::anyhow!("the worker process died ({status}) when its handler panicked"),
        None => e,
    })?;
    ensure(failed(&res), || format!("a panicking handler was reported {}", outcome(&res)))?;
    s.kit.admin.expect_final(id, pb::InstanceStatus::Failed, SOON).await?;
    let id = s.run("echo", "{}").await?;
    s.kit
        .admin
        .expect_final(id, pb::InstanceStatus::Success, SOON)
        .await
        .map_err(|e| anyhow::anyhow!("after the panic: {e}"))?;
    Ok(Verdict::Pass(format!("panic reported FAILED ({:?}); the worker went on", res.message)))
}

async fn silent_axd(s: &mut S<'_>) -> anyhow::Result<Verdict> {
    let hb = s.timing.heartbeat;
    let id = s.run("sleep", &sleep_params(hb * 8)).await?;
    let (acc, _) = s.accepted(id, 1, SOON).await?;
    // Frozen before any renewal, the attempt would be the worker's only until its ack deadline.
    renewed(s, acc).await?;
    // axd goes on working, but nothing it says reaches the worker any more.
    s.relay.set_down(Some(Box::new(|st, _| st != 0)));
    let last = s
        .log()
        .iter()
        .rev()
        .find(|r| r.stream == 0 && matches!(r.ev, Ev::ToWorker { forwarded: true, .. }))
        .map(|r| r.at)
        .unwrap_or(s.welcome_at);
    let slack = Duration::from_secs(1);
    let (closed, _, how) = s
        .relay
        .wait("the worker leaving the silent axd", hb * 3 + slack + SOON, |log| {
            log.iter().find_map(|r| match &r.ev {
                Ev::WorkerClosed { how } if r.stream == 0 => Some((r.at, (), how.clone())),
                _ => None,
            })
        })
        .await?;
    let silent = closed.duration_since(last);
    ensure(silent <= hb * 3 + slack, || {
        format!(
            "the worker left {} after it last heard from axd; it must leave after 3 heartbeat intervals ({})",
            ms(silent),
            ms(hb * 3)
        )
    })?;
    moved_with_attempt(s, id, SOON).await?;
    let (i, _) = s.kit.admin.expect_final(id, pb::InstanceStatus::Success, hb * 8 + SOON).await?;
    ensure(i.attempt == 1, || format!("the instance ran again as attempt {}", i.attempt))?;
    Ok(Verdict::Pass(format!("left after {} of silence ({how}), attempt 1 kept", ms(silent))))
}

async fn lease_fence(s: &mut S<'_>) -> anyhow::Result<Verdict> {
    let id = s.run("sleep", &sleep_params(Duration::from_secs(60))).await?;
    let (acc, _) = s.accepted(id, 1, SOON).await?;
    let k = renewed(s, acc).await?;
    ensure(k > 0, || "Heartbeat.seq is 0: the worker does not track leases, so it cannot fence".into())?;
    // From now on axd keeps talking, but no renewal reaches the worker: the lease it has runs out.
    let frozen: Arc<Mutex<Option<u64>>> = Arc::default();
    let f = frozen.clone();
    s.relay.set_down(Some(Box::new(move |st, m| {
        if let (0, Down::Heartbeat(h)) = (st, m) {
            let mut f = f.lock().unwrap_or_else(|p| p.into_inner());
            let k0 = *f.get_or_insert(h.renewed_seq);
            h.renewed_seq = h.renewed_seq.min(k0);
        }
        true
    })));
    let ttl = s.timing.lease_ttl;
    let (at, _, res) = s
        .result(id, 1, None, ttl + SOON)
        .await
        .map_err(|e| anyhow::anyhow!("{e}: the attempt was not stopped although its lease ran out"))?;
    s.relay.set_down(None);
    // The lease the worker had: lease_ttl from when it sent the last heartbeat a renewal answered.
    let log = s.log();
    let renewed = log
        .iter()
        .filter(|r| r.stream == 0 && r.at < at)
        .filter_map(|r| match &r.ev {
            Ev::ToWorker { msg: Down::Heartbeat(h), forwarded: true } => Some(h.renewed_seq),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let sent = need(
        log.iter().find_map(|r| match &r.ev {
            Ev::FromWorker { msg: Up::Heartbeat(h) } if r.stream == 0 && h.seq == renewed => Some(r.at),
            _ => None,
        }),
        "the heartbeat the last renewal answered",
    )?;
    let lease_end = sent + ttl;
    ensure(failed(&res), || format!("a 60 s sleep whose lease ran out reported {}", outcome(&res)))?;
    let tolerance = Duration::from_millis(50);
    ensure(at <= lease_end + tolerance, || {
        format!(
            "the worker reported its attempt {} after its lease ended (last renewal answered heartbeat {renewed}; lease_ttl {}): \
             it kept running an attempt another worker may already run",
            ms(at - lease_end),
            ms(ttl)
        )
    })?;
    Ok(Verdict::Pass(format!(
        "stopped {} before its lease ended (fence margin {})",
        ms(lease_end.saturating_duration_since(at)),
        ms(s.timing.fence_margin)
    )))
}

async fn stale_assignment(s: &mut S<'_>) -> anyhow::Result<Verdict> {
    // The first attempt's Assign reaches the worker as if read late: its accept_by has passed.
    let server_time: Arc<Mutex<Option<prost_types::Timestamp>>> = Arc::new(Mutex::new(s.welcome.server_time));
    let t = server_time.clone();
    s.relay.set_down(Some(Box::new(move |_, m| {
        let mut t = t.lock().unwrap_or_else(|p| p.into_inner());
        match m {
            Down::Heartbeat(h) if h.server_time.is_some() => *t = h.server_time,
            Down::Assign(a) if a.attempt == 1 => {
                if let Some(now) = *t {
                    a.accept_by = Some(prost_types::Timestamp { seconds: now.seconds - 1, nanos: now.nanos });
                }
                a.start_after = None;
            }
            _ => {}
        }
        true
    })));
    let id = s.run("echo", r#"{"stale":true}"#).await?;
    let (_, _, answer) = s
        .wait_up("the worker's answer to the stale Assign", SOON, |_, m| match m {
            Up::Reject(r) if r.instance_id == id && r.attempt == 1 => Some(Ok(r.reason.clone())),
            Up::Accepted(a) if a.instance_id == id && a.attempt == 1 => Some(Err(())),
            Up::Result(r) if r.instance_id == id && r.attempt == 1 => Some(Err(())),
            _ => None,
        })
        .await?;
    let Ok(reason) = answer else {
        bail!("the worker started an assignment whose accept_by had passed (it must Reject it)");
    };
    let (i, _) = s.kit.admin.expect_final(id, pb::InstanceStatus::Success, SOON).await?;
    ensure(i.attempt == 2, || {
        format!("expected the instance to succeed on attempt 2, it ended on attempt {}", i.attempt)
    })?;
    Ok(Verdict::Pass(format!("rejected ({reason:?}); attempt 2 ran")))
}

/// What the relay holds back of a new stream in `late-welcome`: its Assigns, until `released`.
#[derive(Default)]
struct Held {
    assigns: Vec<pb::Assign>,
    released: bool,
}

async fn late_welcome(s: &mut S<'_>) -> anyhow::Result<Verdict> {
    // On the next stream, the Welcome reaches the worker `late` after axd sent it, with nothing
    // before it (axd's heartbeats are dropped, Assigns held). Counted from its receipt, its
    // server_time would put the worker's database clock `late` behind; counted from the Hello it
    // answers (the proto's rule), the clock can only run ahead. The Assign that follows has an
    // accept_by half-way: in the past on the database clock, in the future on a slow one.
    let held: Arc<Mutex<Held>> = Arc::default();
    let h = held.clone();
    s.relay.set_down(Some(Box::new(move |st, m| {
        let mut h = h.lock().unwrap_or_else(|p| p.into_inner());
        if st == 0 || h.released {
            return true;
        }
        // The Welcome is sent later from the record of what was dropped; heartbeats are dropped.
        if let Down::Assign(a) = m {
            h.assigns.push(a.clone());
        }
        false
    })));
    s.relay.cut(0);
    let (_, st, _) = s.rehello(SOON).await?;
    let welcome = s
        .relay
        .wait("axd's Welcome on the new stream (held back)", SOON, |log| {
            log.iter().find_map(|r| match &r.ev {
                Ev::ToWorker { msg: Down::Welcome(w), forwarded: false } if r.stream == st => Some(w.clone()),
                _ => None,
            })
        })
        .await?;
    let sent = need(welcome.server_time, "Welcome.server_time")?;
    // The worker rejects an Assign within the fence margin of its accept_by; axd ends a stream
    // silent for 3 intervals (the worker says nothing before its Welcome). So: accept_by is
    // margin + slack after the Welcome was sent, and the Welcome arrives margin + 3 slack late.
    let margin = s.timing.fence_margin;
    let slack = s.timing.heartbeat / 3;
    let late = margin + slack * 3;
    if late + slack * 2 > s.timing.heartbeat * 3 {
        return Ok(Verdict::Skip(format!(
            "needs a fence margin of at most 4/3 heartbeat intervals (axd has {} and {})",
            ms(margin),
            ms(s.timing.heartbeat)
        )));
    }
    let id = s.run("echo", r#"{"late_welcome":true}"#).await?;
    tokio::time::sleep(late).await;
    let half_way = ts_plus(sent, margin + slack);
    let stale = move |mut a: pb::Assign| {
        if a.instance_id == id && a.attempt == 1 {
            a.accept_by = Some(half_way);
            a.start_after = None;
        }
        a
    };
    let assigns = {
        let mut h = held.lock().unwrap_or_else(|p| p.into_inner());
        h.released = true;
        std::mem::take(&mut h.assigns)
    };
    // From here on the stream flows, except axd's heartbeats (their server_time would correct a
    // slow clock before the Assign is read); an Assign of attempt 1 not yet sent gets the same
    // accept_by.
    s.relay.set_down(Some(Box::new(move |x, m| match m {
        Down::Heartbeat(_) if x == st => false,
        Down::Assign(a) if x == st => {
            *a = stale(a.clone());
            true
        }
        _ => true,
    })));
    s.relay.inject(st, Down::Welcome(welcome)).await?;
    for a in assigns {
        s.relay.inject(st, Down::Assign(stale(a))).await?;
    }
    let (_, _, answer) = s
        .wait_up("the worker's answer to the Assign behind the late Welcome", SOON, |x, m| match m {
            Up::Reject(r) if x == st && r.instance_id == id && r.attempt == 1 => Some(Ok(r.reason.clone())),
            Up::Accepted(a) if a.instance_id == id && a.attempt == 1 => Some(Err(())),
            Up::Result(r) if r.instance_id == id && r.attempt == 1 => Some(Err(())),
            _ => None,
        })
        .await?;
    s.relay.set_down(None);
    let Ok(reason) = answer else {
        bail!(
            "the worker started an Assign whose accept_by had passed {} before it read it: it counted the late \
             Welcome's server_time from when it read it, not from when it sent the Hello",
            ms(late - margin - slack)
        );
    };
    let (i, _) = s.kit.admin.expect_final(id, pb::InstanceStatus::Success, SOON).await?;
    ensure(i.attempt == 2, || {
        format!("expected the instance to succeed on attempt 2, it ended on attempt {}", i.attempt)
    })?;
    Ok(Verdict::Pass(format!("rejected ({reason:?}) after a Welcome {} late; attempt 2 ran", ms(late))))
}

/// `t` plus `d`.
fn ts_plus(t: prost_types::Timestamp, d: Duration) -> prost_types::Timestamp {
    let nanos = i64::from(t.nanos) + i64::from(d.subsec_nanos());
    prost_types::Timestamp {
        seconds: t.seconds + i64::try_from(d.as_secs()).unwrap_or(i64::MAX / 2) + nanos / 1_000_000_000,
        nanos: i32::try_from(nanos % 1_000_000_000).unwrap_or(0),
    }
}

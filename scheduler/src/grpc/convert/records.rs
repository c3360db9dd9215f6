//! Instances, their events and logs, and worker sessions, to the wire.

use super::*;

/// The proto form of an instance.
pub fn instance_to_pb(i: &Instance) -> pb::Instance {
    pb::Instance {
        id: i.id,
        task_id: i.task_id,
        task_name: i.task_name.clone(),
        app: i.app.clone(),
        handler: i.handler.clone(),
        params: i.params.clone(),
        idempotency_key: i.idempotency_key.clone(),
        source: source_to_pb(i.source).into(),
        trigger_time: Some(ts_to_pb(i.fire_at)),
        available_time: Some(ts_to_pb(i.available_at)),
        status: status_to_pb(i.status).into(),
        attempt: i.attempt,
        max_retries: i.max_retries,
        failures: i.failures,
        worker_id: i.worker_id.clone().unwrap_or_default(),
        session_id: i.session_id.clone().unwrap_or_default(),
        // Before its first dispatch the row names the axd that created it (model::trail::CREATED):
        // not the field's meaning.
        scheduler_id: if i.attempt == 0 { String::new() } else { i.scheduler_id.clone().unwrap_or_default() },
        start_time: opt_ts(i.started_at),
        finish_time: opt_ts(i.finished_at),
        deadline: opt_ts(i.deadline_at),
        message: i.message.clone(),
        output: i.output.clone(),
        progress_percent: i.progress_percent,
        progress_message: i.progress_message.clone(),
        create_time: Some(ts_to_pb(i.created_at)),
        update_time: Some(ts_to_pb(i.updated_at)),
        lease_expire_time: opt_ts(i.lease_expires_at),
        trace_id: i
            .trace_parent
            .as_deref()
            .and_then(ax_proto::otlp::SpanContext::from_traceparent)
            .map(|c| c.trace_id_hex())
            .unwrap_or_default(),
        parent_id: i.route.parent_id.unwrap_or(0),
        shard_index: i.route.shard.map_or(0, |(n, _)| n),
        shard_total: i.route.shard.map_or(0, |(_, t)| t),
        priority: u32::from(i.route.priority),
        selector: i.route.selector.clone(),
        target_worker: i.route.target_worker.clone().unwrap_or_default(),
        hash_key: i.route.hash_key.clone().unwrap_or_default(),
        concurrency_value: i.route.concurrency_value.clone().unwrap_or_default(),
        retry_on: retry_on_to_pb(i.retry_on()).into(),
        run_id: i.run(),
        chained_from: i.lineage.chained_from.unwrap_or(0),
        // Read apart (ax_instance_tag): filled by the calls that list or get instances.
        tags: Default::default(),
    }
}

/// The proto form of an instance event.
pub fn event_to_pb(e: &InstanceEvent) -> pb::InstanceEvent {
    pb::InstanceEvent {
        time: Some(ts_to_pb(e.at)),
        from_status: e.from.map(|s| status_to_pb(s).into()).unwrap_or(0),
        to_status: status_to_pb(e.to).into(),
        attempt: e.attempt,
        scheduler_id: e.scheduler_id.clone(),
        worker_id: e.worker_id.clone(),
        reason: e.reason.clone(),
    }
}

/// The proto form of a log line.
pub fn log_to_pb(l: &LogLine) -> pb::LogLine {
    let level = match l.level.as_str() {
        "DEBUG" => pb::LogLevel::Debug,
        "WARN" => pb::LogLevel::Warn,
        "ERROR" => pb::LogLevel::Error,
        _ => pb::LogLevel::Info,
    };
    pb::LogLine {
        seq: l.seq,
        attempt: l.attempt,
        level: level.into(),
        time: Some(ts_to_pb(l.at)),
        message: l.message.clone(),
    }
}

/// The proto form of a worker session, with the failure streaks of its worker (`streaks` may hold
/// other workers' too).
pub fn worker_to_pb(w: &WorkerRecord, streaks: &[WorkerStreak]) -> pb::WorkerSession {
    let mut cooldowns: Vec<pb::WorkerCooldown> = streaks
        .iter()
        .filter(|s| s.app == w.app && s.worker_id == w.worker_id)
        .map(|s| pb::WorkerCooldown {
            handler: s.handler.clone(),
            consecutive_failures: s.failures,
            until: opt_ts(s.cooldown_until),
        })
        .collect();
    cooldowns.sort_by(|a, b| a.handler.cmp(&b.handler));
    pb::WorkerSession {
        session_id: w.session_id.clone(),
        worker_id: w.worker_id.clone(),
        app: w.app.clone(),
        handlers: w.handlers.clone(),
        capacity: w.capacity,
        credits: w.credits,
        in_flight: w.in_flight,
        labels: w.labels.clone().into_iter().collect(),
        scheduler_id: w.scheduler_id.clone(),
        client: w.client.clone(),
        connect_time: Some(ts_to_pb(w.connected_at)),
        last_seen_time: Some(ts_to_pb(w.last_seen_at)),
        cooldowns,
    }
}

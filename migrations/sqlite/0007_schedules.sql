-- Schedules and chains (README "Schedules and chains"): overlap policies, pauses with a note, active
-- windows, excluded dates and shared calendars, jitter, chains and small DAGs with run ids, and the
-- intake table applications insert into inside their own transactions.
--
-- SQLite cannot change a CHECK constraint in place: ax_task (the concurrency policies) and
-- ax_instance (the instance sources) are rebuilt as in 0006 (new table, copy, drop, rename, indexes
-- again), keeping each table's AUTOINCREMENT sequence so that no id is ever handed out twice.
--
-- Task settings: NULL means "none" (no window bound, no excluded date, no calendar, no jitter, no
-- chain); lists (dates, task names) are comma-separated. The pause columns are state, not
-- configuration: an update of the task leaves them alone. run_id is the id of the first instance of
-- the workflow run an instance belongs to (NULL for an instance no chain or DAG edge created: it is
-- the first of its own run); chained_from the instance whose final state created it. Both are
-- written once, at creation.

CREATE TABLE ax_task_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name VARCHAR(128) NOT NULL,
    app VARCHAR(64) NOT NULL,
    handler VARCHAR(128) NOT NULL,
    description TEXT NOT NULL,
    schedule_kind VARCHAR(16) NOT NULL,
    cron_expr VARCHAR(256),
    cron_dialect VARCHAR(16),
    time_zone VARCHAR(64) NOT NULL,
    interval_us BIGINT,
    start_at BIGINT,
    params TEXT NOT NULL,
    enabled BOOLEAN NOT NULL,
    next_fire_at BIGINT,
    misfire_policy VARCHAR(16) NOT NULL,
    misfire_threshold_us BIGINT NOT NULL,
    max_catch_up INTEGER NOT NULL,
    concurrency_policy VARCHAR(16) NOT NULL,
    routing VARCHAR(16) NOT NULL,
    timeout_us BIGINT,
    max_retries INTEGER NOT NULL,
    backoff TEXT NOT NULL,
    labels TEXT NOT NULL,
    version BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    selector VARCHAR(1024) NOT NULL DEFAULT '',
    retry_on VARCHAR(8) NOT NULL DEFAULT 'OTHER',
    shards INTEGER NULL,
    hash_key VARCHAR(128) NULL,
    priority INTEGER NOT NULL DEFAULT 0,
    max_running INTEGER NULL,
    max_pending INTEGER NOT NULL DEFAULT 100,
    cooldown_after INTEGER NULL,
    cooldown_us BIGINT NULL,
    coalesced_since BIGINT NULL,
    coalesced_count BIGINT NOT NULL DEFAULT 0,
    active_from BIGINT NULL,
    active_until BIGINT NULL,
    exclude_dates TEXT NULL,
    calendar VARCHAR(128) NULL,
    jitter_us BIGINT NULL,
    on_success TEXT NULL,
    on_failure TEXT NULL,
    after_all TEXT NULL,
    paused_at BIGINT NULL,
    paused_by VARCHAR(255) NULL,
    pause_note TEXT NULL,
    paused_until BIGINT NULL,
    CONSTRAINT ax_task_name_key UNIQUE (name),
    CONSTRAINT ax_task_schedule_kind_valid CHECK (schedule_kind IN ('CRON', 'FIXED_RATE', 'FIXED_DELAY', 'ONE_TIME', 'MANUAL')),
    CONSTRAINT ax_task_cron_has_expression CHECK (schedule_kind <> 'CRON' OR (cron_expr IS NOT NULL AND cron_dialect IN ('UNIX', 'QUARTZ'))),
    CONSTRAINT ax_task_interval_positive CHECK (schedule_kind NOT IN ('FIXED_RATE', 'FIXED_DELAY') OR (interval_us > 0 AND start_at IS NOT NULL)),
    CONSTRAINT ax_task_one_time_has_time CHECK (schedule_kind <> 'ONE_TIME' OR start_at IS NOT NULL),
    CONSTRAINT ax_task_manual_never_fires CHECK (schedule_kind <> 'MANUAL' OR next_fire_at IS NULL),
    CONSTRAINT ax_task_misfire_policy_valid CHECK (misfire_policy IN ('FIRE_ONCE', 'FIRE_ALL', 'SKIP')),
    CONSTRAINT ax_task_misfire_bounds CHECK (misfire_threshold_us > 0 AND max_catch_up > 0),
    CONSTRAINT ax_task_concurrency_policy_valid CHECK (concurrency_policy IN ('ALLOW', 'FORBID', 'BUFFER_ONE', 'BUFFER_ALL', 'CANCEL_OTHER')),
    CONSTRAINT ax_task_routing_valid CHECK (routing IN ('LEAST_LOADED', 'ROUND_ROBIN', 'RANDOM', 'BROADCAST', 'HASH')),
    CONSTRAINT ax_task_retry_on_valid CHECK (retry_on IN ('OTHER', 'SAME', 'ANY')),
    CONSTRAINT ax_task_shards_bounds CHECK (shards IS NULL OR (shards BETWEEN 1 AND 10000 AND routing <> 'BROADCAST')),
    CONSTRAINT ax_task_hash_key_needs_hash CHECK (hash_key IS NULL OR routing = 'HASH'),
    CONSTRAINT ax_task_priority_bounds CHECK (priority BETWEEN 0 AND 9),
    CONSTRAINT ax_task_limits_positive CHECK ((max_running IS NULL OR max_running > 0) AND max_pending > 0),
    CONSTRAINT ax_task_cooldown_not_negative CHECK ((cooldown_after IS NULL OR cooldown_after >= 0) AND (cooldown_us IS NULL OR cooldown_us >= 0)),
    CONSTRAINT ax_task_retries_not_negative CHECK (max_retries >= 0),
    CONSTRAINT ax_task_disabled_never_fires CHECK (enabled OR next_fire_at IS NULL),
    CONSTRAINT ax_task_window_ordered CHECK (active_from IS NULL OR active_until IS NULL OR active_from <= active_until),
    CONSTRAINT ax_task_jitter_positive CHECK (jitter_us IS NULL OR jitter_us > 0),
    CONSTRAINT ax_task_paused_has_actor CHECK (paused_at IS NULL OR paused_by IS NOT NULL)
);

INSERT INTO ax_task_new (id, name, app, handler, description, schedule_kind, cron_expr, cron_dialect, time_zone, interval_us, start_at, params, enabled, next_fire_at, misfire_policy, misfire_threshold_us, max_catch_up, concurrency_policy, routing, timeout_us, max_retries, backoff, labels, version, created_at, updated_at, selector, retry_on, shards, hash_key, priority, max_running, max_pending, cooldown_after, cooldown_us, coalesced_since, coalesced_count) SELECT id, name, app, handler, description, schedule_kind, cron_expr, cron_dialect, time_zone, interval_us, start_at, params, enabled, next_fire_at, misfire_policy, misfire_threshold_us, max_catch_up, concurrency_policy, routing, timeout_us, max_retries, backoff, labels, version, created_at, updated_at, selector, retry_on, shards, hash_key, priority, max_running, max_pending, cooldown_after, cooldown_us, coalesced_since, coalesced_count FROM ax_task;
DELETE FROM sqlite_sequence WHERE name = 'ax_task_new';
INSERT INTO sqlite_sequence (name, seq) SELECT 'ax_task_new', seq FROM sqlite_sequence WHERE name = 'ax_task';
DROP TABLE ax_task;
ALTER TABLE ax_task_new RENAME TO ax_task;

CREATE INDEX ax_task_due ON ax_task (next_fire_at) WHERE next_fire_at IS NOT NULL;
CREATE INDEX ax_task_wake ON ax_task (concurrency_policy, next_fire_at) WHERE next_fire_at IS NOT NULL;
CREATE INDEX ax_task_app ON ax_task (app, name);

CREATE TABLE ax_instance_new (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id BIGINT NOT NULL,
    task_name VARCHAR(128) NOT NULL,
    app VARCHAR(64) NOT NULL,
    handler VARCHAR(128) NOT NULL,
    params TEXT NOT NULL,
    idempotency_key VARCHAR(200) NOT NULL,
    source VARCHAR(16) NOT NULL,
    fire_at BIGINT NOT NULL,
    available_at BIGINT NOT NULL,
    status VARCHAR(16) NOT NULL,
    attempt INTEGER NOT NULL,
    max_retries INTEGER NOT NULL,
    failures INTEGER NOT NULL,
    timeout_us BIGINT,
    backoff TEXT NOT NULL,
    routing VARCHAR(16) NOT NULL,
    worker_id VARCHAR(128),
    session_id VARCHAR(64),
    scheduler_id VARCHAR(128),
    lease_expires_at BIGINT,
    deadline_at BIGINT,
    started_at BIGINT,
    finished_at BIGINT,
    message TEXT NOT NULL,
    output TEXT NOT NULL,
    progress_percent INTEGER NOT NULL,
    progress_message VARCHAR(1024) NOT NULL,
    log_count INTEGER NOT NULL DEFAULT 0,
    log_dropped BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    trace_parent TEXT NULL,
    priority INTEGER NOT NULL DEFAULT 0,
    ready_at BIGINT NOT NULL DEFAULT 0,
    selector VARCHAR(1024) NOT NULL DEFAULT '',
    retry_on VARCHAR(8) NOT NULL DEFAULT 'OTHER',
    hash_key VARCHAR(255) NULL,
    parent_id BIGINT NULL,
    shard_index INTEGER NULL,
    shard_total INTEGER NULL,
    target_worker VARCHAR(128) NULL,
    run_id BIGINT NULL,
    chained_from BIGINT NULL,
    CONSTRAINT ax_instance_status_valid CHECK (status IN ('PENDING', 'DISPATCHED', 'RUNNING', 'SUCCESS', 'FAILED', 'TIMEOUT', 'CANCELED', 'SKIPPED', 'WAITING')),
    CONSTRAINT ax_instance_source_valid CHECK (source IN ('SCHEDULE', 'CATCH_UP', 'MANUAL', 'BACKFILL', 'CHAIN', 'DAG', 'INTAKE')),
    CONSTRAINT ax_instance_routing_valid CHECK (routing IN ('LEAST_LOADED', 'ROUND_ROBIN', 'RANDOM', 'BROADCAST', 'HASH')),
    CONSTRAINT ax_instance_retry_on_valid CHECK (retry_on IN ('OTHER', 'SAME', 'ANY')),
    CONSTRAINT ax_instance_waiting_is_parent CHECK (status <> 'WAITING' OR (session_id IS NULL AND attempt = 0)),
    CONSTRAINT ax_instance_shard_in_range CHECK (shard_index IS NULL OR (shard_total IS NOT NULL AND shard_index >= 0 AND shard_index < shard_total)),
    CONSTRAINT ax_instance_held_has_session CHECK (status NOT IN ('DISPATCHED', 'RUNNING') OR (session_id IS NOT NULL AND worker_id IS NOT NULL AND lease_expires_at IS NOT NULL AND attempt > 0)),
    CONSTRAINT ax_instance_running_has_start CHECK (status <> 'RUNNING' OR started_at IS NOT NULL),
    CONSTRAINT ax_instance_finalized_or_finished_at_null CHECK ((status IN ('PENDING', 'DISPATCHED', 'RUNNING', 'WAITING') AND finished_at IS NULL) OR (status NOT IN ('PENDING', 'DISPATCHED', 'RUNNING', 'WAITING') AND finished_at IS NOT NULL)),
    CONSTRAINT ax_instance_counts_not_negative CHECK (attempt >= 0 AND failures >= 0 AND max_retries >= 0 AND progress_percent BETWEEN 0 AND 100)
);

INSERT INTO ax_instance_new (id, task_id, task_name, app, handler, params, idempotency_key, source, fire_at, available_at, status, attempt, max_retries, failures, timeout_us, backoff, routing, worker_id, session_id, scheduler_id, lease_expires_at, deadline_at, started_at, finished_at, message, output, progress_percent, progress_message, log_count, log_dropped, created_at, updated_at, trace_parent, priority, ready_at, selector, retry_on, hash_key, parent_id, shard_index, shard_total, target_worker) SELECT id, task_id, task_name, app, handler, params, idempotency_key, source, fire_at, available_at, status, attempt, max_retries, failures, timeout_us, backoff, routing, worker_id, session_id, scheduler_id, lease_expires_at, deadline_at, started_at, finished_at, message, output, progress_percent, progress_message, log_count, log_dropped, created_at, updated_at, trace_parent, priority, ready_at, selector, retry_on, hash_key, parent_id, shard_index, shard_total, target_worker FROM ax_instance;
DELETE FROM sqlite_sequence WHERE name = 'ax_instance_new';
INSERT INTO sqlite_sequence (name, seq) SELECT 'ax_instance_new', seq FROM sqlite_sequence WHERE name = 'ax_instance';
DROP TABLE ax_instance;
ALTER TABLE ax_instance_new RENAME TO ax_instance;

CREATE INDEX ax_instance_ready ON ax_instance (app, available_at) WHERE status = 'PENDING';
CREATE INDEX ax_instance_lease ON ax_instance (lease_expires_at) WHERE status IN ('DISPATCHED', 'RUNNING');
CREATE INDEX ax_instance_deadline ON ax_instance (deadline_at) WHERE status = 'RUNNING';
CREATE INDEX ax_instance_session ON ax_instance (session_id) WHERE status IN ('DISPATCHED', 'RUNNING');
CREATE INDEX ax_instance_task_active ON ax_instance (task_id) WHERE status IN ('PENDING', 'DISPATCHED', 'RUNNING');
CREATE INDEX ax_instance_ready_order ON ax_instance (app, ready_at) WHERE status = 'PENDING';
CREATE INDEX ax_instance_parent ON ax_instance (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX ax_instance_pinned ON ax_instance (available_at) WHERE status = 'PENDING' AND target_worker IS NOT NULL;

-- A run's instances (`axctl run get`, a DAG's join); instances outside chains and DAGs are not in it.
CREATE INDEX ax_instance_run ON ax_instance (run_id) WHERE run_id IS NOT NULL;

-- Tasks with a BUFFER_ONE or BUFFER_ALL overlap policy run their instances one at a time, in
-- creation order: their limit row (max_running 1) says so, and the claim, holding it, takes only
-- the task's oldest unfinished instance.
ALTER TABLE ax_task_limit ADD COLUMN in_order BOOLEAN NOT NULL DEFAULT FALSE;

-- Named calendars of dates (YYYY-MM-DD, comma-separated) that tasks exclude (`--calendar`).
CREATE TABLE ax_calendar (
    name VARCHAR(128) NOT NULL PRIMARY KEY,
    description TEXT NOT NULL,
    dates TEXT NOT NULL,
    created_by VARCHAR(255) NOT NULL,
    created_at BIGINT NOT NULL,
    updated_by VARCHAR(255) NOT NULL,
    updated_at BIGINT NOT NULL
);

-- The edges of the task graph, derived from ax_task.on_success / on_failure / after_all and written
-- with the task: the lookup of "what follows a task" when its instance ends, without reading the
-- task row.
CREATE TABLE ax_task_edge (
    from_task_id BIGINT NOT NULL,
    kind VARCHAR(16) NOT NULL,
    to_task_id BIGINT NOT NULL,
    PRIMARY KEY (from_task_id, kind, to_task_id),
    CONSTRAINT ax_task_edge_kind_valid CHECK (kind IN ('SUCCESS', 'FAILURE', 'AFTER'))
);

CREATE INDEX ax_task_edge_to ON ax_task_edge (to_task_id);

-- Named locks that serialize rare changes: 'task_graph' is held by every change of task edges, so
-- that two changes cannot close a cycle together.
CREATE TABLE ax_lock (
    name VARCHAR(64) NOT NULL PRIMARY KEY
);

INSERT INTO ax_lock (name) VALUES ('task_graph');

-- Which instance's final state created which instance (chains, DAG joins): insert-only.
CREATE TABLE ax_instance_link (
    from_id BIGINT NOT NULL,
    to_id BIGINT NOT NULL,
    kind VARCHAR(16) NOT NULL,
    PRIMARY KEY (from_id, to_id),
    CONSTRAINT ax_instance_link_kind_valid CHECK (kind IN ('SUCCESS', 'FAILURE', 'AFTER'))
);

CREATE INDEX ax_instance_link_to ON ax_instance_link (to_id);

-- One row per (run, DAG task) once an upstream of that task ended in the run: the transactions that
-- end the upstreams of one join lock it in turn, so the last of them sees every other one's result.
CREATE TABLE ax_run_join (
    run_id BIGINT NOT NULL,
    task_id BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (run_id, task_id)
);

-- Instances applications create inside their own transactions (README "Delayed enqueue"): a row
-- committed here becomes one instance (one per idempotency key), and is then deleted; a row axd
-- cannot accept keeps its reason in `error`. run_at_us, or created_at + delay_us, is when it runs
-- (now when both are NULL).
CREATE TABLE ax_intake (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    task_name VARCHAR(128) NOT NULL,
    params TEXT NULL,
    idempotency_key VARCHAR(200) NULL,
    run_at_us BIGINT NULL,
    delay_us BIGINT NULL,
    created_at BIGINT NOT NULL DEFAULT (CAST((julianday('now') - 2440587.5) * 86400000000.0 AS INTEGER)),
    error TEXT NULL
);

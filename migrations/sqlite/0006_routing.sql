-- Routing and limits (README "Routing and limits"): label selectors, retry targets, broadcast and
-- sharded fires (a WAITING parent instance with children), consistent hashing, priorities with
-- aging, per-task limits of running and pending instances, per-app rate limits and worker cooldowns.
--
-- SQLite cannot change a CHECK constraint in place: ax_task and ax_instance are rebuilt (new
-- table, copy, drop, rename, indexes again), keeping each table's AUTOINCREMENT sequence so that no
-- id is ever handed out twice. NULL cooldown columns take axd's defaults (--cooldown-after,
-- --cooldown); ready_at = available_at - priority x 10 s is the claim's order.

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
    CONSTRAINT ax_task_name_key UNIQUE (name),
    CONSTRAINT ax_task_schedule_kind_valid CHECK (schedule_kind IN ('CRON', 'FIXED_RATE', 'FIXED_DELAY', 'ONE_TIME', 'MANUAL')),
    CONSTRAINT ax_task_cron_has_expression CHECK (schedule_kind <> 'CRON' OR (cron_expr IS NOT NULL AND cron_dialect IN ('UNIX', 'QUARTZ'))),
    CONSTRAINT ax_task_interval_positive CHECK (schedule_kind NOT IN ('FIXED_RATE', 'FIXED_DELAY') OR (interval_us > 0 AND start_at IS NOT NULL)),
    CONSTRAINT ax_task_one_time_has_time CHECK (schedule_kind <> 'ONE_TIME' OR start_at IS NOT NULL),
    CONSTRAINT ax_task_manual_never_fires CHECK (schedule_kind <> 'MANUAL' OR next_fire_at IS NULL),
    CONSTRAINT ax_task_misfire_policy_valid CHECK (misfire_policy IN ('FIRE_ONCE', 'FIRE_ALL', 'SKIP')),
    CONSTRAINT ax_task_misfire_bounds CHECK (misfire_threshold_us > 0 AND max_catch_up > 0),
    CONSTRAINT ax_task_concurrency_policy_valid CHECK (concurrency_policy IN ('ALLOW', 'FORBID')),
    CONSTRAINT ax_task_routing_valid CHECK (routing IN ('LEAST_LOADED', 'ROUND_ROBIN', 'RANDOM', 'BROADCAST', 'HASH')),
    CONSTRAINT ax_task_retry_on_valid CHECK (retry_on IN ('OTHER', 'SAME', 'ANY')),
    CONSTRAINT ax_task_shards_bounds CHECK (shards IS NULL OR (shards BETWEEN 1 AND 10000 AND routing <> 'BROADCAST')),
    CONSTRAINT ax_task_hash_key_needs_hash CHECK (hash_key IS NULL OR routing = 'HASH'),
    CONSTRAINT ax_task_priority_bounds CHECK (priority BETWEEN 0 AND 9),
    CONSTRAINT ax_task_limits_positive CHECK ((max_running IS NULL OR max_running > 0) AND max_pending > 0),
    CONSTRAINT ax_task_cooldown_not_negative CHECK ((cooldown_after IS NULL OR cooldown_after >= 0) AND (cooldown_us IS NULL OR cooldown_us >= 0)),
    CONSTRAINT ax_task_retries_not_negative CHECK (max_retries >= 0),
    CONSTRAINT ax_task_disabled_never_fires CHECK (enabled OR next_fire_at IS NULL)
);

INSERT INTO ax_task_new (id, name, app, handler, description, schedule_kind, cron_expr, cron_dialect, time_zone, interval_us, start_at, params, enabled, next_fire_at, misfire_policy, misfire_threshold_us, max_catch_up, concurrency_policy, routing, timeout_us, max_retries, backoff, labels, version, created_at, updated_at) SELECT id, name, app, handler, description, schedule_kind, cron_expr, cron_dialect, time_zone, interval_us, start_at, params, enabled, next_fire_at, misfire_policy, misfire_threshold_us, max_catch_up, concurrency_policy, routing, timeout_us, max_retries, backoff, labels, version, created_at, updated_at FROM ax_task;
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
    CONSTRAINT ax_instance_status_valid CHECK (status IN ('PENDING', 'DISPATCHED', 'RUNNING', 'SUCCESS', 'FAILED', 'TIMEOUT', 'CANCELED', 'SKIPPED', 'WAITING')),
    CONSTRAINT ax_instance_source_valid CHECK (source IN ('SCHEDULE', 'CATCH_UP', 'MANUAL')),
    CONSTRAINT ax_instance_routing_valid CHECK (routing IN ('LEAST_LOADED', 'ROUND_ROBIN', 'RANDOM', 'BROADCAST', 'HASH')),
    CONSTRAINT ax_instance_retry_on_valid CHECK (retry_on IN ('OTHER', 'SAME', 'ANY')),
    CONSTRAINT ax_instance_waiting_is_parent CHECK (status <> 'WAITING' OR (session_id IS NULL AND attempt = 0)),
    CONSTRAINT ax_instance_shard_in_range CHECK (shard_index IS NULL OR (shard_total IS NOT NULL AND shard_index >= 0 AND shard_index < shard_total)),
    CONSTRAINT ax_instance_held_has_session CHECK (status NOT IN ('DISPATCHED', 'RUNNING') OR (session_id IS NOT NULL AND worker_id IS NOT NULL AND lease_expires_at IS NOT NULL AND attempt > 0)),
    CONSTRAINT ax_instance_running_has_start CHECK (status <> 'RUNNING' OR started_at IS NOT NULL),
    CONSTRAINT ax_instance_finalized_or_finished_at_null CHECK ((status IN ('PENDING', 'DISPATCHED', 'RUNNING', 'WAITING') AND finished_at IS NULL) OR (status NOT IN ('PENDING', 'DISPATCHED', 'RUNNING', 'WAITING') AND finished_at IS NOT NULL)),
    CONSTRAINT ax_instance_counts_not_negative CHECK (attempt >= 0 AND failures >= 0 AND max_retries >= 0 AND progress_percent BETWEEN 0 AND 100)
);

INSERT INTO ax_instance_new (id, task_id, task_name, app, handler, params, idempotency_key, source, fire_at, available_at, status, attempt, max_retries, failures, timeout_us, backoff, routing, worker_id, session_id, scheduler_id, lease_expires_at, deadline_at, started_at, finished_at, message, output, progress_percent, progress_message, log_count, log_dropped, created_at, updated_at, trace_parent) SELECT id, task_id, task_name, app, handler, params, idempotency_key, source, fire_at, available_at, status, attempt, max_retries, failures, timeout_us, backoff, routing, worker_id, session_id, scheduler_id, lease_expires_at, deadline_at, started_at, finished_at, message, output, progress_percent, progress_message, log_count, log_dropped, created_at, updated_at, trace_parent FROM ax_instance;
DELETE FROM sqlite_sequence WHERE name = 'ax_instance_new';
INSERT INTO sqlite_sequence (name, seq) SELECT 'ax_instance_new', seq FROM sqlite_sequence WHERE name = 'ax_instance';
DROP TABLE ax_instance;
ALTER TABLE ax_instance_new RENAME TO ax_instance;
UPDATE ax_instance SET ready_at = available_at WHERE status = 'PENDING';

CREATE INDEX ax_instance_ready ON ax_instance (app, available_at) WHERE status = 'PENDING';
CREATE INDEX ax_instance_lease ON ax_instance (lease_expires_at) WHERE status IN ('DISPATCHED', 'RUNNING');
CREATE INDEX ax_instance_deadline ON ax_instance (deadline_at) WHERE status = 'RUNNING';
CREATE INDEX ax_instance_session ON ax_instance (session_id) WHERE status IN ('DISPATCHED', 'RUNNING');
CREATE INDEX ax_instance_task_active ON ax_instance (task_id) WHERE status IN ('PENDING', 'DISPATCHED', 'RUNNING');

-- The claim: ready instances of an app in priority-aged order (ax_instance_ready stays for "when is
-- the next one due"); only a row that becomes PENDING writes to either.
CREATE INDEX ax_instance_ready_order ON ax_instance (app, ready_at) WHERE status = 'PENDING';

-- A parent's children (counted when one of them ends). Partial: ordinary instances never touch it.
CREATE INDEX ax_instance_parent ON ax_instance (parent_id) WHERE parent_id IS NOT NULL;

-- Broadcast children pinned to a worker: the sweeper fails those whose worker has gone.
CREATE INDEX ax_instance_pinned ON ax_instance (available_at) WHERE status = 'PENDING' AND target_worker IS NOT NULL;

-- One row per task with --max-running: the claim locks it (FOR UPDATE) before counting the task's
-- DISPATCHED and RUNNING instances, so that claims on several axd cannot exceed the limit together.
-- Written with the task (create, update, delete).
CREATE TABLE ax_task_limit (
    task_id BIGINT NOT NULL PRIMARY KEY,
    max_running INTEGER NOT NULL,
    CONSTRAINT ax_task_limit_positive CHECK (max_running > 0)
);

-- Per-app rate limits of instance starts: a token bucket shared by every axd (the claim locks the
-- app's row, refills it from the database clock and takes a token per assignment).
CREATE TABLE ax_app_limit (
    app VARCHAR(64) NOT NULL PRIMARY KEY,
    per_second DOUBLE PRECISION NOT NULL,
    burst INTEGER NOT NULL,
    tokens DOUBLE PRECISION NOT NULL,
    refilled_at BIGINT NOT NULL,
    updated_by VARCHAR(255) NOT NULL,
    updated_at BIGINT NOT NULL,
    CONSTRAINT ax_app_limit_positive CHECK (per_second > 0 AND burst > 0 AND tokens >= 0)
);

-- Consecutive failures of one worker for one handler, and its cooldown. Written in the transaction
-- that records an attempt's end, by whichever axd records it (results arrive at the axd holding the
-- stream, timeouts and lost workers are decided by any axd's sweeper); a success deletes the row.
CREATE TABLE ax_worker_streak (
    app VARCHAR(64) NOT NULL,
    worker_id VARCHAR(128) NOT NULL,
    handler VARCHAR(128) NOT NULL,
    failures INTEGER NOT NULL,
    cooldown_until BIGINT NULL,
    cooldown_us BIGINT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (app, worker_id, handler)
);

-- Labels of each session's Hello, for selectors in `axctl task explain` of the past.
ALTER TABLE ax_session_log ADD COLUMN labels TEXT NULL;

-- ax schema, version 1 (sqlite).
-- Times are microseconds since the Unix epoch (UTC) in BIGINT columns, identical on every backend.
-- Configuration (ax_task) and run state (ax_instance, events, logs) are separate tables:
-- purging history never touches configuration.

CREATE TABLE ax_task (
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
    CONSTRAINT ax_task_name_key UNIQUE (name),
    CONSTRAINT ax_task_schedule_kind_valid CHECK (schedule_kind IN ('CRON', 'FIXED_RATE', 'FIXED_DELAY', 'ONE_TIME', 'MANUAL')),
    CONSTRAINT ax_task_cron_has_expression CHECK (schedule_kind <> 'CRON' OR (cron_expr IS NOT NULL AND cron_dialect IN ('UNIX', 'QUARTZ'))),
    CONSTRAINT ax_task_interval_positive CHECK (schedule_kind NOT IN ('FIXED_RATE', 'FIXED_DELAY') OR (interval_us > 0 AND start_at IS NOT NULL)),
    CONSTRAINT ax_task_one_time_has_time CHECK (schedule_kind <> 'ONE_TIME' OR start_at IS NOT NULL),
    CONSTRAINT ax_task_manual_never_fires CHECK (schedule_kind <> 'MANUAL' OR next_fire_at IS NULL),
    CONSTRAINT ax_task_misfire_policy_valid CHECK (misfire_policy IN ('FIRE_ONCE', 'FIRE_ALL', 'SKIP')),
    CONSTRAINT ax_task_misfire_bounds CHECK (misfire_threshold_us > 0 AND max_catch_up > 0),
    CONSTRAINT ax_task_concurrency_policy_valid CHECK (concurrency_policy IN ('ALLOW', 'FORBID')),
    CONSTRAINT ax_task_routing_valid CHECK (routing IN ('LEAST_LOADED', 'ROUND_ROBIN', 'RANDOM')),
    CONSTRAINT ax_task_retries_not_negative CHECK (max_retries >= 0),
    CONSTRAINT ax_task_disabled_never_fires CHECK (enabled OR next_fire_at IS NULL)
);

-- The trigger loop's claim: due tasks in fire order.
CREATE INDEX ax_task_due ON ax_task (next_fire_at) WHERE next_fire_at IS NOT NULL;

-- Wake-up time of the trigger loop, per concurrency policy.
CREATE INDEX ax_task_wake ON ax_task (concurrency_policy, next_fire_at) WHERE next_fire_at IS NOT NULL;

CREATE INDEX ax_task_app ON ax_task (app, name);

CREATE TABLE ax_task_event (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id BIGINT NOT NULL,
    task_name VARCHAR(128) NOT NULL,
    at BIGINT NOT NULL,
    kind VARCHAR(32) NOT NULL,
    actor VARCHAR(255) NOT NULL,
    message TEXT NOT NULL
);

CREATE INDEX ax_task_event_task ON ax_task_event (task_id, id);

CREATE TABLE ax_instance (
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
    CONSTRAINT ax_instance_status_valid CHECK (status IN ('PENDING', 'DISPATCHED', 'RUNNING', 'SUCCESS', 'FAILED', 'TIMEOUT', 'CANCELED', 'SKIPPED')),
    CONSTRAINT ax_instance_source_valid CHECK (source IN ('SCHEDULE', 'CATCH_UP', 'MANUAL')),
    CONSTRAINT ax_instance_routing_valid CHECK (routing IN ('LEAST_LOADED', 'ROUND_ROBIN', 'RANDOM')),
    CONSTRAINT ax_instance_held_has_session CHECK (status NOT IN ('DISPATCHED', 'RUNNING') OR (session_id IS NOT NULL AND worker_id IS NOT NULL AND lease_expires_at IS NOT NULL AND attempt > 0)),
    CONSTRAINT ax_instance_running_has_start CHECK (status <> 'RUNNING' OR started_at IS NOT NULL),
    CONSTRAINT ax_instance_finalized_or_finished_at_null CHECK ((status IN ('PENDING', 'DISPATCHED', 'RUNNING') AND finished_at IS NULL) OR (status NOT IN ('PENDING', 'DISPATCHED', 'RUNNING') AND finished_at IS NOT NULL)),
    CONSTRAINT ax_instance_counts_not_negative CHECK (attempt >= 0 AND failures >= 0 AND max_retries >= 0 AND progress_percent BETWEEN 0 AND 100)
);

-- Dispatch: ready instances of an app in due order. Partial, so claimed and finished rows do not
-- slow the claim down as they pile up.
CREATE INDEX ax_instance_ready ON ax_instance (app, available_at) WHERE status = 'PENDING';

-- Sweeper: held attempts by lease, running attempts by deadline.
CREATE INDEX ax_instance_lease ON ax_instance (lease_expires_at) WHERE status IN ('DISPATCHED', 'RUNNING');

CREATE INDEX ax_instance_deadline ON ax_instance (deadline_at) WHERE status = 'RUNNING';

-- Sessions: re-adoption and lease renewal.
CREATE INDEX ax_instance_session ON ax_instance (session_id) WHERE status IN ('DISPATCHED', 'RUNNING');

-- The concurrency policy's "is one active?".
CREATE INDEX ax_instance_task_active ON ax_instance (task_id) WHERE status IN ('PENDING', 'DISPATCHED', 'RUNNING');

-- Retention purges in id order (the primary key) and listing by status alone scans recent ids:
-- every index on ax_instance costs a write on each of an instance's transitions (a status change
-- is never a heap-only update), so there are no others.

-- Idempotency keys: one row per instance, written once when it is created and never updated, so
-- the uniqueness check and listing by task stay off the rows that change on every transition.
-- UNIQUE(task_id, idempotency_key) of an instance is this table's primary key.
CREATE TABLE ax_instance_key (
    task_id BIGINT NOT NULL,
    idempotency_key VARCHAR(200) NOT NULL,
    task_name VARCHAR(128) NOT NULL,
    instance_id BIGINT NOT NULL,
    PRIMARY KEY (task_id, idempotency_key)
);

-- Listing a task's instances, newest first.
CREATE INDEX ax_instance_key_task_name ON ax_instance_key (task_name, instance_id);

CREATE TABLE ax_instance_event (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    instance_id BIGINT NOT NULL,
    at BIGINT NOT NULL,
    from_status VARCHAR(16),
    to_status VARCHAR(16) NOT NULL,
    attempt INTEGER NOT NULL,
    scheduler_id VARCHAR(128) NOT NULL,
    worker_id VARCHAR(128) NOT NULL,
    reason TEXT NOT NULL
);

CREATE INDEX ax_instance_event_instance ON ax_instance_event (instance_id, id);

CREATE TABLE ax_instance_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    instance_id BIGINT NOT NULL,
    attempt INTEGER NOT NULL,
    level VARCHAR(8) NOT NULL,
    at BIGINT NOT NULL,
    message TEXT NOT NULL
);

CREATE INDEX ax_instance_log_instance ON ax_instance_log (instance_id, id);

CREATE TABLE ax_worker (
    session_id VARCHAR(64) NOT NULL PRIMARY KEY,
    worker_id VARCHAR(128) NOT NULL,
    app VARCHAR(64) NOT NULL,
    handlers TEXT NOT NULL,
    capacity INTEGER NOT NULL,
    credits INTEGER NOT NULL,
    in_flight INTEGER NOT NULL,
    labels TEXT NOT NULL,
    scheduler_id VARCHAR(128) NOT NULL,
    client VARCHAR(128) NOT NULL,
    connected_at BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL
);

CREATE INDEX ax_worker_scheduler ON ax_worker (scheduler_id);

CREATE INDEX ax_worker_app ON ax_worker (app, worker_id);

CREATE TABLE ax_scheduler (
    scheduler_id VARCHAR(128) NOT NULL PRIMARY KEY,
    host VARCHAR(255) NOT NULL,
    address VARCHAR(255) NOT NULL,
    version VARCHAR(64) NOT NULL,
    started_at BIGINT NOT NULL,
    heartbeat_at BIGINT NOT NULL
);

-- Commands for the axd holding a worker's stream (e.g. Cancel), delivered and then deleted.

CREATE TABLE ax_command (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    scheduler_id VARCHAR(128) NOT NULL,
    session_id VARCHAR(64) NOT NULL,
    instance_id BIGINT NOT NULL,
    attempt INTEGER NOT NULL,
    kind VARCHAR(16) NOT NULL,
    reason TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    CONSTRAINT ax_command_kind_valid CHECK (kind IN ('CANCEL'))
);

CREATE INDEX ax_command_target ON ax_command (scheduler_id, id);

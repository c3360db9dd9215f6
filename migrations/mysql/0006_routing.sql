-- Routing and limits (README "Routing and limits"): label selectors, retry targets, broadcast and
-- sharded fires (a WAITING parent instance with children), consistent hashing, priorities with
-- aging, per-task limits of running and pending instances, per-app rate limits and worker cooldowns.

-- Task settings. NULL cooldown columns take axd's defaults (--cooldown-after, --cooldown).
ALTER TABLE ax_task
    ADD COLUMN selector VARCHAR(1024) NOT NULL DEFAULT '',
    ADD COLUMN retry_on VARCHAR(8) NOT NULL DEFAULT 'OTHER',
    ADD COLUMN shards INTEGER NULL,
    ADD COLUMN hash_key VARCHAR(128) NULL,
    ADD COLUMN priority INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN max_running INTEGER NULL,
    ADD COLUMN max_pending INTEGER NOT NULL DEFAULT 100,
    ADD COLUMN cooldown_after INTEGER NULL,
    ADD COLUMN cooldown_us BIGINT NULL,
    -- Fires not run since coalesced_since because max_pending instances were PENDING.
    ADD COLUMN coalesced_since BIGINT NULL,
    ADD COLUMN coalesced_count BIGINT NOT NULL DEFAULT 0;

ALTER TABLE ax_task DROP CONSTRAINT ax_task_routing_valid;
ALTER TABLE ax_task
    ADD CONSTRAINT ax_task_routing_valid CHECK (routing IN ('LEAST_LOADED', 'ROUND_ROBIN', 'RANDOM', 'BROADCAST', 'HASH')),
    ADD CONSTRAINT ax_task_retry_on_valid CHECK (retry_on IN ('OTHER', 'SAME', 'ANY')),
    ADD CONSTRAINT ax_task_shards_bounds CHECK (shards IS NULL OR (shards BETWEEN 1 AND 10000 AND routing <> 'BROADCAST')),
    ADD CONSTRAINT ax_task_hash_key_needs_hash CHECK (hash_key IS NULL OR routing = 'HASH'),
    ADD CONSTRAINT ax_task_priority_bounds CHECK (priority BETWEEN 0 AND 9),
    ADD CONSTRAINT ax_task_limits_positive CHECK ((max_running IS NULL OR max_running > 0) AND max_pending > 0),
    ADD CONSTRAINT ax_task_cooldown_not_negative CHECK ((cooldown_after IS NULL OR cooldown_after >= 0) AND (cooldown_us IS NULL OR cooldown_us >= 0));

-- Instance copies of the routing inputs. ready_at = available_at - priority x 10 s is the claim's
-- order (priorities with aging); it is written with available_at on every change. A child of a
-- broadcast or sharded fire has parent_id, shard_index and shard_total; its parent has shard_total
-- (its number of children) and no shard_index.
ALTER TABLE ax_instance
    ADD COLUMN priority INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN ready_at BIGINT NOT NULL DEFAULT 0,
    ADD COLUMN selector VARCHAR(1024) NOT NULL DEFAULT '',
    ADD COLUMN retry_on VARCHAR(8) NOT NULL DEFAULT 'OTHER',
    ADD COLUMN hash_key VARCHAR(255) NULL,
    ADD COLUMN parent_id BIGINT NULL,
    ADD COLUMN shard_index INTEGER NULL,
    ADD COLUMN shard_total INTEGER NULL,
    ADD COLUMN target_worker VARCHAR(128) NULL;

UPDATE ax_instance SET ready_at = available_at WHERE status = 'PENDING';

ALTER TABLE ax_instance DROP CONSTRAINT ax_instance_status_valid;
ALTER TABLE ax_instance DROP CONSTRAINT ax_instance_routing_valid;
ALTER TABLE ax_instance DROP CONSTRAINT ax_instance_finalized_or_finished_at_null;
ALTER TABLE ax_instance
    ADD CONSTRAINT ax_instance_status_valid CHECK (status IN ('PENDING', 'DISPATCHED', 'RUNNING', 'SUCCESS', 'FAILED', 'TIMEOUT', 'CANCELED', 'SKIPPED', 'WAITING')),
    ADD CONSTRAINT ax_instance_routing_valid CHECK (routing IN ('LEAST_LOADED', 'ROUND_ROBIN', 'RANDOM', 'BROADCAST', 'HASH')),
    ADD CONSTRAINT ax_instance_finalized_or_finished_at_null CHECK ((status IN ('PENDING', 'DISPATCHED', 'RUNNING', 'WAITING') AND finished_at IS NULL) OR (status NOT IN ('PENDING', 'DISPATCHED', 'RUNNING', 'WAITING') AND finished_at IS NOT NULL)),
    ADD CONSTRAINT ax_instance_retry_on_valid CHECK (retry_on IN ('OTHER', 'SAME', 'ANY')),
    ADD CONSTRAINT ax_instance_waiting_is_parent CHECK (status <> 'WAITING' OR (session_id IS NULL AND attempt = 0)),
    ADD CONSTRAINT ax_instance_shard_in_range CHECK (shard_index IS NULL OR (shard_total IS NOT NULL AND shard_index >= 0 AND shard_index < shard_total));

-- The claim: ready instances of an app in priority-aged order (ax_instance_ready stays for "when is
-- the next one due").
CREATE INDEX ax_instance_ready_order ON ax_instance (status, app, ready_at);

-- A parent's children (counted when one of them ends). parent_id never changes, so InnoDB leaves
-- this index alone when a row's status does.
CREATE INDEX ax_instance_parent ON ax_instance (parent_id);

-- Broadcast children pinned to a worker: the sweeper fails those whose worker has gone. target_worker
-- never changes, so InnoDB leaves this index alone when a row's status does.
CREATE INDEX ax_instance_pinned ON ax_instance (target_worker);

-- One row per task with --max-running: the claim locks it (FOR UPDATE) before counting the task's
-- DISPATCHED and RUNNING instances, so that claims on several axd cannot exceed the limit together.
-- Written with the task (create, update, delete).
CREATE TABLE ax_task_limit (
    task_id BIGINT NOT NULL PRIMARY KEY,
    max_running INTEGER NOT NULL,
    CONSTRAINT ax_task_limit_positive CHECK (max_running > 0)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Per-app rate limits of instance starts: a token bucket shared by every axd (the claim locks the
-- app's row, refills it from the database clock and takes a token per assignment).
CREATE TABLE ax_app_limit (
    app VARCHAR(64) NOT NULL PRIMARY KEY,
    per_second DOUBLE NOT NULL,
    burst INTEGER NOT NULL,
    tokens DOUBLE NOT NULL,
    refilled_at BIGINT NOT NULL,
    updated_by VARCHAR(255) NOT NULL,
    updated_at BIGINT NOT NULL,
    CONSTRAINT ax_app_limit_positive CHECK (per_second > 0 AND burst > 0 AND tokens >= 0)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

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
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Labels of each session's Hello, for selectors in `axctl task explain` of the past.
ALTER TABLE ax_session_log ADD COLUMN labels TEXT NULL;

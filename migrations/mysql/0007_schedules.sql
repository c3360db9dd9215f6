-- Schedules and chains (README "Schedules and chains"): overlap policies, pauses with a note, active
-- windows, excluded dates and shared calendars, jitter, chains and small DAGs with run ids, and the
-- intake table applications insert into inside their own transactions.

-- Task settings. NULL means "none": no window bound, no excluded date, no calendar, no jitter, no
-- chain. Lists (dates, task names) are comma-separated. The pause columns are state, not
-- configuration: an update of the task leaves them alone.
ALTER TABLE ax_task
    ADD COLUMN active_from BIGINT NULL,
    ADD COLUMN active_until BIGINT NULL,
    ADD COLUMN exclude_dates TEXT NULL,
    ADD COLUMN calendar VARCHAR(128) NULL,
    ADD COLUMN jitter_us BIGINT NULL,
    ADD COLUMN on_success TEXT NULL,
    ADD COLUMN on_failure TEXT NULL,
    ADD COLUMN after_all TEXT NULL,
    ADD COLUMN paused_at BIGINT NULL,
    ADD COLUMN paused_by VARCHAR(255) NULL,
    ADD COLUMN pause_note TEXT NULL,
    ADD COLUMN paused_until BIGINT NULL;

ALTER TABLE ax_task DROP CONSTRAINT ax_task_concurrency_policy_valid;
ALTER TABLE ax_task
    ADD CONSTRAINT ax_task_concurrency_policy_valid CHECK (concurrency_policy IN ('ALLOW', 'FORBID', 'BUFFER_ONE', 'BUFFER_ALL', 'CANCEL_OTHER')),
    ADD CONSTRAINT ax_task_window_ordered CHECK (active_from IS NULL OR active_until IS NULL OR active_from <= active_until),
    ADD CONSTRAINT ax_task_jitter_positive CHECK (jitter_us IS NULL OR jitter_us > 0),
    ADD CONSTRAINT ax_task_paused_has_actor CHECK (paused_at IS NULL OR paused_by IS NOT NULL);

-- The workflow run an instance belongs to (the id of the run's first instance; NULL for an instance
-- no chain or DAG edge created: it is the first of its own run) and the instance whose final state
-- created it. Both are written once, at creation.
ALTER TABLE ax_instance
    ADD COLUMN run_id BIGINT NULL,
    ADD COLUMN chained_from BIGINT NULL;

ALTER TABLE ax_instance DROP CONSTRAINT ax_instance_source_valid;
ALTER TABLE ax_instance
    ADD CONSTRAINT ax_instance_source_valid CHECK (source IN ('SCHEDULE', 'CATCH_UP', 'MANUAL', 'BACKFILL', 'CHAIN', 'DAG', 'INTAKE'));

-- A run's instances (`axctl run get`, a DAG's join). run_id never changes, so InnoDB leaves this
-- index alone when a row's status does.
CREATE INDEX ax_instance_run ON ax_instance (run_id);

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
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- The edges of the task graph, derived from ax_task.on_success / on_failure / after_all and written
-- with the task: the lookup of "what follows a task" when its instance ends, without reading the
-- task row.
CREATE TABLE ax_task_edge (
    from_task_id BIGINT NOT NULL,
    kind VARCHAR(16) NOT NULL,
    to_task_id BIGINT NOT NULL,
    PRIMARY KEY (from_task_id, kind, to_task_id),
    CONSTRAINT ax_task_edge_kind_valid CHECK (kind IN ('SUCCESS', 'FAILURE', 'AFTER'))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE INDEX ax_task_edge_to ON ax_task_edge (to_task_id);

-- Named locks that serialize rare changes: 'task_graph' is held by every change of task edges, so
-- that two changes cannot close a cycle together.
CREATE TABLE ax_lock (
    name VARCHAR(64) NOT NULL PRIMARY KEY
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

INSERT INTO ax_lock (name) VALUES ('task_graph');

-- Which instance's final state created which instance (chains, DAG joins): insert-only.
CREATE TABLE ax_instance_link (
    from_id BIGINT NOT NULL,
    to_id BIGINT NOT NULL,
    kind VARCHAR(16) NOT NULL,
    PRIMARY KEY (from_id, to_id),
    CONSTRAINT ax_instance_link_kind_valid CHECK (kind IN ('SUCCESS', 'FAILURE', 'AFTER'))
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE INDEX ax_instance_link_to ON ax_instance_link (to_id);

-- One row per (run, DAG task) once an upstream of that task ended in the run: the transactions that
-- end the upstreams of one join lock it in turn, so the last of them sees every other one's result.
CREATE TABLE ax_run_join (
    run_id BIGINT NOT NULL,
    task_id BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (run_id, task_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Instances applications create inside their own transactions (README "Delayed enqueue"): a row
-- committed here becomes one instance (one per idempotency key), and is then deleted; a row axd
-- cannot accept keeps its reason in `error`. run_at_us, or created_at + delay_us, is when it runs
-- (now when both are NULL). created_at is the database clock when the row was inserted.
CREATE TABLE ax_intake (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    task_name VARCHAR(128) NOT NULL,
    params TEXT NULL,
    idempotency_key VARCHAR(200) NULL,
    run_at_us BIGINT NULL,
    delay_us BIGINT NULL,
    created_at BIGINT NOT NULL DEFAULT (CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED)),
    error TEXT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

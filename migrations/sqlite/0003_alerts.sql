-- Failure alerts: rules (what to watch, which webhook, its secret), the delivery outbox (rows
-- written in the same transaction as the state change that caused them, sent at least once by any
-- axd, each with a stable id), and the state of condition rules (no worker / backlog) whose
-- episode counter makes each episode alert once however many axd evaluate it. Times are
-- microseconds since the epoch on the database clock.
CREATE TABLE ax_alert_rule (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name VARCHAR(128) NOT NULL,
    app VARCHAR(64) NOT NULL,
    task_name VARCHAR(255),
    events VARCHAR(255) NOT NULL,
    url TEXT NOT NULL,
    secret VARCHAR(255) NOT NULL,
    no_worker_for_us BIGINT,
    backlog_over BIGINT,
    created_by VARCHAR(255) NOT NULL,
    created_at BIGINT NOT NULL,
    CONSTRAINT ax_alert_rule_name UNIQUE (name)
);

CREATE INDEX ax_alert_rule_app ON ax_alert_rule (app);

CREATE TABLE ax_alert_delivery (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    rule_id BIGINT NOT NULL,
    rule_name VARCHAR(128) NOT NULL,
    app VARCHAR(64) NOT NULL,
    task_name VARCHAR(255),
    event VARCHAR(32) NOT NULL,
    dedupe_key VARCHAR(255) NOT NULL,
    url TEXT NOT NULL,
    body TEXT NOT NULL,
    status VARCHAR(16) NOT NULL,
    attempts INT NOT NULL,
    next_attempt_at BIGINT NOT NULL,
    last_error TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    finished_at BIGINT,
    CONSTRAINT ax_alert_delivery_key UNIQUE (dedupe_key),
    CONSTRAINT ax_alert_delivery_status CHECK (status IN ('pending', 'delivered', 'failed')),
    CONSTRAINT ax_alert_delivery_finished_or_pending CHECK ((status = 'pending') = (finished_at IS NULL))
);

CREATE INDEX ax_alert_delivery_due ON ax_alert_delivery (status, next_attempt_at);
CREATE INDEX ax_alert_delivery_rule ON ax_alert_delivery (rule_id, id);

CREATE TABLE ax_alert_condition (
    rule_id BIGINT NOT NULL PRIMARY KEY,
    since_at BIGINT,
    firing BOOLEAN NOT NULL,
    episode BIGINT NOT NULL
);

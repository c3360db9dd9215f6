-- Worker sessions as history: one row per session, from when it connected to when it ended (NULL
-- while it lasts). `ax_worker` holds only live sessions; this table lets `axctl task explain`
-- answer "was a worker of the app connected when the instance was due?" for the past. Two writes
-- per session (open, close), none per instance. Purged with finished instances (--retention).
CREATE TABLE ax_session_log (
    session_id VARCHAR(64) NOT NULL PRIMARY KEY,
    worker_id VARCHAR(128) NOT NULL,
    app VARCHAR(64) NOT NULL,
    handlers TEXT NOT NULL,
    capacity INTEGER NOT NULL,
    scheduler_id VARCHAR(128) NOT NULL,
    connected_at BIGINT NOT NULL,
    closed_at BIGINT,
    close_reason TEXT NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE INDEX ax_session_log_app ON ax_session_log (app, connected_at);

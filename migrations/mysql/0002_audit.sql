-- Audit trail of AdminService calls that change something (and of their denials): who, which
-- RPC, on what, when (microseconds since the epoch, database clock), the outcome, and for updates
-- the task before and after as JSON. Purged by --audit-retention.
CREATE TABLE ax_audit (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    at BIGINT NOT NULL,
    actor VARCHAR(255) NOT NULL,
    rpc VARCHAR(64) NOT NULL,
    target VARCHAR(255) NOT NULL,
    app VARCHAR(64) NOT NULL,
    outcome VARCHAR(32) NOT NULL,
    detail TEXT NOT NULL,
    before_json TEXT,
    after_json TEXT
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

CREATE INDEX ax_audit_at ON ax_audit (at);
CREATE INDEX ax_audit_actor ON ax_audit (actor, id);
CREATE INDEX ax_audit_target ON ax_audit (target, id);

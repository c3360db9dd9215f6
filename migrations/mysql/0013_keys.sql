-- Concurrency keys and uniqueness windows (issue 35; README "Concurrency keys and unique triggers").
--
-- ax_task: the params paths of the keys ("params.customer_id"), the limit per concurrency key value
-- and the uniqueness window. ax_instance.concurrency_value: the value of its task's concurrency key
-- in its params, copied at creation. ax_task_limit.key_limit: the limit per value, read under the
-- task's limit row by the claim. ax_unique: per (task, value of its uniqueness key), the instance a
-- trigger created and until when it holds the value.
ALTER TABLE ax_task
    ADD COLUMN concurrency_key VARCHAR(600) NULL,
    ADD COLUMN concurrency_limit INTEGER NULL,
    ADD COLUMN unique_key VARCHAR(600) NULL,
    ADD COLUMN unique_for_us BIGINT NULL,
    ADD CONSTRAINT ax_task_keys_paired CHECK ((concurrency_key IS NULL) = (concurrency_limit IS NULL) AND (unique_key IS NULL) = (unique_for_us IS NULL)),
    ADD CONSTRAINT ax_task_keys_positive CHECK ((concurrency_limit IS NULL OR concurrency_limit > 0) AND (unique_for_us IS NULL OR unique_for_us > 0));

-- The claim counts per key value through ax_instance_task_active (task_id, status): MariaDB has no
-- partial index, and that one already reaches only the task's dispatched and running rows.
ALTER TABLE ax_instance ADD COLUMN concurrency_value VARCHAR(255) NULL;

ALTER TABLE ax_task_limit ADD COLUMN key_limit INTEGER NULL;

CREATE TABLE ax_unique (
    task_id BIGINT NOT NULL,
    key_value VARCHAR(255) NOT NULL,
    -- NULL while the transaction that took the value has not created its instance yet.
    instance_id BIGINT NULL,
    until_at BIGINT NOT NULL,
    PRIMARY KEY (task_id, key_value),
    INDEX ax_unique_until (until_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

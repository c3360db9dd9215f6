-- Concurrency keys and uniqueness windows (issue 35; README "Concurrency keys and unique triggers").
--
-- ax_task: the params paths of the keys ("params.customer_id"), the limit per concurrency key value
-- and the uniqueness window. ax_instance.concurrency_value: the value of its task's concurrency key
-- in its params, copied at creation. ax_task_limit.key_limit: the limit per value, read under the
-- task's limit row by the claim. ax_unique: per (task, value of its uniqueness key), the instance a
-- trigger created and until when it holds the value.
ALTER TABLE ax_task ADD COLUMN concurrency_key VARCHAR(600) NULL;
ALTER TABLE ax_task ADD COLUMN concurrency_limit INTEGER NULL CHECK (concurrency_limit IS NULL OR concurrency_limit > 0);
ALTER TABLE ax_task ADD COLUMN unique_key VARCHAR(600) NULL;
ALTER TABLE ax_task ADD COLUMN unique_for_us BIGINT NULL CHECK (unique_for_us IS NULL OR unique_for_us > 0);

ALTER TABLE ax_instance ADD COLUMN concurrency_value VARCHAR(255) NULL;

ALTER TABLE ax_task_limit ADD COLUMN key_limit INTEGER NULL;

-- The claim's count per key value: only keyed instances while dispatched or running have an entry.
CREATE INDEX ax_instance_key_active ON ax_instance (task_id, concurrency_value)
    WHERE concurrency_value IS NOT NULL AND status IN ('DISPATCHED', 'RUNNING');

CREATE TABLE ax_unique (
    task_id BIGINT NOT NULL,
    key_value VARCHAR(255) NOT NULL,
    -- NULL while the transaction that took the value has not created its instance yet.
    instance_id BIGINT NULL,
    until_at BIGINT NOT NULL,
    PRIMARY KEY (task_id, key_value)
);
CREATE INDEX ax_unique_until ON ax_unique (until_at);

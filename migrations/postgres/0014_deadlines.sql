-- Deadlines (issue 35; README "Deadlines"): each fire of a task with must_finish_within must have an
-- instance that ended SUCCESS within it, else a "deadline_missed" alert and explain finding.
ALTER TABLE ax_task
    ADD COLUMN must_finish_within_us BIGINT NULL,
    ADD CONSTRAINT ax_task_deadline_positive CHECK (must_finish_within_us IS NULL OR must_finish_within_us > 0);

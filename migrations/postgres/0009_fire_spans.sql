-- The fires a misfire decision is about (issue 32): the first, the last and how many, as columns of
-- its task event, so that the API, `task get`, `task explain` and the console show them as fields.
-- NULL on every other event.
ALTER TABLE ax_task_event
    ADD COLUMN first_fire_at BIGINT NULL,
    ADD COLUMN last_fire_at BIGINT NULL,
    ADD COLUMN fire_count BIGINT NULL;

-- The happy path's trail held in the instance row (issue 31): the current attempt's DISPATCHED,
-- RUNNING and SUCCESS events are not written to ax_instance_event when the row can say them
-- exactly; `trail` says which (1 DISPATCHED, 2 RUNNING, 4 SUCCESS), `dispatched_at` when the
-- attempt was dispatched. The trail a reader gets is the stored events followed by these; a change
-- that the row cannot hold writes them as event rows first and clears `trail`.
ALTER TABLE ax_instance
    ADD COLUMN trail INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN dispatched_at BIGINT NULL;

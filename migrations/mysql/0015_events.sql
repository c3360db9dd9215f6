-- Events (issue 35; README "Events"): the event name a task subscribes to and the conditions its
-- payload must meet; PublishEvent reads the subscribed tasks of an app by name.
ALTER TABLE ax_task
    ADD COLUMN on_event VARCHAR(128) NULL,
    ADD COLUMN event_filter VARCHAR(1024) NULL;
CREATE INDEX ax_task_on_event ON ax_task (on_event, app);

-- An event through the intake table: event_name set, task_name empty, params the payload,
-- idempotency_key the event id (README "Events").
ALTER TABLE ax_intake ADD COLUMN event_name VARCHAR(128) NULL;

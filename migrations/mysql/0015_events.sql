-- Events (issue 35; README "Events"): the event name a task subscribes to and the conditions its
-- payload must meet; PublishEvent reads the subscribed tasks of an app by name.
ALTER TABLE ax_task
    ADD COLUMN on_event VARCHAR(128) NULL,
    ADD COLUMN event_filter VARCHAR(1024) NULL;
CREATE INDEX ax_task_on_event ON ax_task (on_event, app);

-- One index of ready instances instead of two (issue 31). `ax_instance_ready (app, available_at)`
-- served only the dispatcher's "when is the next one due" and the backlog count; the claim reads
-- `ax_instance_ready_order (app, ready_at)`, and every PENDING instance entered both. The next due
-- time is now read through the claim's index (store/ready.rs, `next_available`: `ready_at` is
-- `available_at` less at most MAX_PRIORITY x PRIORITY_STEP, so the earliest `available_at` is
-- among the rows ordered before the first row's `available_at`). One index entry less per
-- instance created or made PENDING again.
DROP INDEX IF EXISTS ax_instance_ready;

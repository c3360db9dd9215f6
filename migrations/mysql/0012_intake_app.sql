-- Intake rows are bound to an app (issue 33, item 4; README "Delayed enqueue from code",
-- SECURITY.md "Who is trusted"). app: the app the row's task must belong to (axd refuses the row
-- otherwise). inserted_by: the account that inserted it (USER(): the client's account, also
-- through a view), which axd audits instances created from intake under.
--
-- MariaDB and MySQL have no row-level security: an application's account gets INSERT on a view
-- per app, never on the table (README shows the statements):
--   CREATE VIEW ax_intake_billing AS SELECT id, task_name, params, idempotency_key, run_at_us,
--     delay_us, app, error FROM ax_intake WHERE app = 'billing' WITH CHECK OPTION;
-- so every row it inserts names that app, and it cannot set inserted_by.
ALTER TABLE ax_intake
    ADD COLUMN app VARCHAR(64) NULL,
    ADD COLUMN inserted_by VARCHAR(255) NOT NULL DEFAULT (USER());

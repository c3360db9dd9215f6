-- Intake rows are bound to an app, and PostgreSQL enforces the binding per role (issue 33,
-- item 4; README "Delayed enqueue from code", SECURITY.md "Who is trusted").
--
-- app: the app the row's task must belong to (axd refuses the row otherwise). inserted_by: the
-- role that inserted it, filled by the database; axd audits instances created from intake under
-- it. A role axd's tables do not belong to (an application's own role) is held by row-level
-- security: it may insert only rows naming an app granted to it in ax_intake_grant, with
-- inserted_by its own name, and read or delete only its own rows. The owner of the tables (the
-- role axd runs as) and superusers are not held: they are trusted, and their rows may name no
-- app (the task's own app is then taken).
ALTER TABLE ax_intake ADD COLUMN app VARCHAR(64) NULL;
ALTER TABLE ax_intake ADD COLUMN inserted_by VARCHAR(128) NOT NULL DEFAULT CURRENT_USER;

-- Which role may insert intake rows for which app: INSERT INTO ax_intake_grant VALUES ('billing_app', 'billing').
CREATE TABLE ax_intake_grant (
    role_name VARCHAR(128) NOT NULL,
    app VARCHAR(64) NOT NULL,
    PRIMARY KEY (role_name, app)
);

-- The policy's check, run with the owner's rights so that application roles need no right on
-- ax_intake_grant; the search path is the one this migration ran with.
CREATE FUNCTION ax_intake_may(who TEXT, want TEXT) RETURNS BOOLEAN
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT
    AS $$ SELECT EXISTS (SELECT 1 FROM ax_intake_grant g WHERE g.role_name = who AND g.app = want) $$;

ALTER TABLE ax_intake ENABLE ROW LEVEL SECURITY;
CREATE POLICY ax_intake_insert ON ax_intake FOR INSERT
    WITH CHECK (app IS NOT NULL AND inserted_by = CURRENT_USER::text AND ax_intake_may(CURRENT_USER::text, app));
CREATE POLICY ax_intake_read ON ax_intake FOR SELECT USING (inserted_by = CURRENT_USER::text);
CREATE POLICY ax_intake_delete ON ax_intake FOR DELETE USING (inserted_by = CURRENT_USER::text);

-- Intake rows may name the app their task must belong to (issue 33, item 4): axd refuses a row
-- whose task is in another app. SQLite has no users: whoever can write the file is trusted, and
-- inserted_by stays empty unless the application fills it.
ALTER TABLE ax_intake ADD COLUMN app TEXT NULL;
ALTER TABLE ax_intake ADD COLUMN inserted_by TEXT NOT NULL DEFAULT '';

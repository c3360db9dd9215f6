-- Room on each page of ax_task for its rows' next versions (issue 31), as 0019 gave ax_instance.
-- Every fire writes a new version of its task's row (the trigger locks it, then sets its next
-- fire); on a full page the version goes to another page, and PostgreSQL then also logs a lock of
-- the old version and the whole new tuple. Kept on the same page, the update logs no lock and only
-- the bytes that changed. Full lifecycle of 20,000 on PostgreSQL 15: row locks 4.0 -> 2.1 and WAL
-- ~3,110 -> ~2,700 bytes per instance (fillfactor 70: 2.9 and ~2,865). Pages filled from now on
-- keep half their space for updates (a registry takes up to twice the pages of a packed one);
-- existing pages keep what they have.
ALTER TABLE ax_task SET (fillfactor = 50);

-- Room on each page of ax_instance for its rows' next versions (issue 31). A claim and a result
-- each write a new version of the instance row; on a full page it goes to another page, and
-- PostgreSQL then also logs a lock of the old version (Heap/LOCK) and the whole new tuple. Kept on
-- the same page, the update logs no lock and only the bytes that changed. Burn-down of 50,000 on
-- PostgreSQL 15: row locks 2.94 -> 1.24 and WAL 1,166 -> ~900 bytes per instance (fillfactor 70:
-- 1.95 and ~1,000). Pages filled from now on keep half their space for updates (the table takes up
-- to twice the pages of a packed one; retention bounds it); existing pages keep what they have.
ALTER TABLE ax_instance SET (fillfactor = 50);

-- PostgreSQL leaves room on each page of ax_task for its rows' next versions (fillfactor).
-- This backend has no per-table equivalent; the migration keeps the versions the same on every
-- backend.
SELECT 1;

-- MySQL and MariaDB lead the claim's index with a generated flag instead of the status (their
-- migration 24); here the index is partial already (`WHERE status = 'PENDING'`), and a status
-- change after the claim does not touch it. The migration keeps the versions the same on every
-- backend.
SELECT 1;

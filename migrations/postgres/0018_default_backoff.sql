-- The default retry backoff (exponential from 10 s, doubling up to 300 s, jitter 0.1) is stored as
-- '' instead of its 94 bytes of JSON (issue 31): an instance row copies its task's backoff, and
-- every version of the row carries it. Any other backoff stays JSON. Tasks are rewritten here;
-- instance rows keep the form they were written in (both read the same), so the history is not
-- rewritten. An axd older than this migration does not start on this schema.
UPDATE ax_task SET backoff = ''
WHERE backoff = '{"exponential":{"initial_us":10000000,"multiplier":2.0,"max_us":300000000,"jitter":0.1}}';

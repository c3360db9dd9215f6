-- Held instances are no longer indexed by session (issue 31): every claim wrote an entry for it,
-- and only a session's end looks instances up by session, which the held instances' lease index
-- serves as well (there are only as many held instances as the workers' capacity).
DROP INDEX ax_instance_session ON ax_instance;

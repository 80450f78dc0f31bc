-- The publisher reads the events of the revisions it has not published yet, to re-read only the flags
-- they name.
CREATE INDEX events_revision ON events (revision);

-- A flag's latest event (the admin UI's "Last changed", and the flag search's `sortBy=updatedAt`): one index
-- step per flag instead of reading all its events. It serves every read by flag that the old index served.
-- Portable SQL (SQLite and Postgres).
CREATE INDEX events_feature_id ON events (feature_name, id);
DROP INDEX events_feature;

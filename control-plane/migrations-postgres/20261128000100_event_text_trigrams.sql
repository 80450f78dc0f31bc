-- Postgres only (control-plane/migrations holds what both databases run): the admin event search's text
-- filter (`q`, `LOWER(data) LIKE '%…%'` or the same in pre_data) read from trigram indexes instead of a scan
-- of every event. pg_trgm ships with Postgres and is a trusted extension: a database owner may create it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX events_data_trigrams ON events USING gin (LOWER(data) gin_trgm_ops);
CREATE INDEX events_pre_data_trigrams ON events USING gin (LOWER(pre_data) gin_trgm_ops);

-- A project's overview (`…/projects/:p/overview`, `…/status`, `…/insights` and the UI's overview page): its events
-- counted per 30-day window and per day from the index alone, instead of reading every event of the project.
-- Portable SQL (SQLite and Postgres).
CREATE INDEX events_project_created_at ON events (project, created_at);

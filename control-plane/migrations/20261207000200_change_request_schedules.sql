-- Scheduled change requests: when an Approved request is to be applied, by whom, and how it went.
-- Portable SQL (SQLite and Postgres).
-- status: pending (waiting for scheduled_at), failed or suspended (with reason; the request stays Scheduled),
-- applied (kept for the request's page). scheduled_at: RFC 3339 UTC text with milliseconds, so its text order
-- is its time order. scheduled_by / scheduled_by_user_id: who scheduled it (an API token: -1337 and its name);
-- the scheduler applies it as them.
CREATE TABLE change_request_schedules (
    change_request_id BIGINT PRIMARY KEY REFERENCES change_requests (id) ON DELETE CASCADE,
    scheduled_at TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT,
    scheduled_by TEXT NOT NULL,
    scheduled_by_user_id BIGINT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX change_request_schedules_due ON change_request_schedules (status, scheduled_at);

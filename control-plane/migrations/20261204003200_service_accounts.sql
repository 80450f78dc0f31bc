-- Service accounts (`/api/admin/service-account`): rows of `users` with `is_service` 1, as in Unleash. They have
-- a username, a name and a root role, never a password, e-mail or session; their tokens are rows of
-- `personal_access_tokens` (hashed, expiring), which go with the account. Every read of people leaves them out.
-- Portable SQL (SQLite and Postgres).
ALTER TABLE users ADD COLUMN is_service BIGINT NOT NULL DEFAULT 0;

-- Invite links (`/api/admin/invite-link/tokens`, Unleash's public sign-up tokens) and password reset links
-- (`/auth/reset/*`, also the welcome link of a user created without a password). Portable SQL (SQLite and
-- Postgres).
--
-- Both secrets are split tokens `<selector>.<verifier>`: the row is found by its random selector, then the
-- SHA-256 of the verifier is compared with `verifier_hash` in constant time; neither the verifier nor a
-- password is stored. Each link works once (`used_at`) and until `expires_at`.

INSERT INTO vexil_counters (name, value) VALUES ('invite_link', 0);

-- root_role: 1 Admin, 2 Editor, 3 Viewer, given to the user who signs up; enabled: BIGINT 0/1.
CREATE TABLE invite_links (
    id BIGINT PRIMARY KEY,
    selector TEXT NOT NULL UNIQUE,
    verifier_hash TEXT NOT NULL,
    name TEXT NOT NULL,
    root_role BIGINT NOT NULL,
    enabled BIGINT NOT NULL,
    expires_at TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_by TEXT,
    used_by BIGINT REFERENCES users (id) ON DELETE SET NULL,
    used_at TEXT
);

CREATE TABLE password_reset_tokens (
    selector TEXT PRIMARY KEY,
    verifier_hash TEXT NOT NULL,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at TEXT
);
CREATE INDEX password_reset_tokens_user ON password_reset_tokens (user_id);

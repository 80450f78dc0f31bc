-- Users, their sessions and personal access tokens, groups. Portable SQL (SQLite and Postgres), as the core.
-- Secrets (session ids, PATs) are stored as SHA-256 hashes only; passwords as argon2 PHC strings.

-- Ids of users, groups and PATs come from counters, as event ids do.
INSERT INTO vexil_counters (name, value) VALUES ('user', 0);
INSERT INTO vexil_counters (name, value) VALUES ('group', 0);
INSERT INTO vexil_counters (name, value) VALUES ('pat', 0);

-- root_role: 1 Admin, 2 Editor, 3 Viewer.
CREATE TABLE users (
    id BIGINT PRIMARY KEY,
    name TEXT,
    email TEXT UNIQUE,
    username TEXT UNIQUE,
    password_hash TEXT,
    root_role BIGINT NOT NULL,
    created_at TEXT NOT NULL,
    seen_at TEXT
);

CREATE TABLE user_sessions (
    session_hash TEXT PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);

CREATE TABLE personal_access_tokens (
    id BIGINT PRIMARY KEY,
    secret_hash TEXT NOT NULL UNIQUE,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    description TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX personal_access_tokens_user ON personal_access_tokens (user_id);

-- mappings_sso: JSON array of strings; root_role: NULL or 1..3, given to every member.
CREATE TABLE user_groups (
    id BIGINT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    description TEXT,
    mappings_sso TEXT NOT NULL,
    root_role BIGINT,
    created_by TEXT,
    created_at TEXT NOT NULL
);

CREATE TABLE user_group_members (
    group_id BIGINT NOT NULL REFERENCES user_groups (id) ON DELETE CASCADE,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    joined_at TEXT NOT NULL,
    created_by TEXT,
    PRIMARY KEY (group_id, user_id)
);
CREATE INDEX user_group_members_user ON user_group_members (user_id);

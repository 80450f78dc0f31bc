-- Vexil control-plane core schema. Portable SQL: the same file runs on SQLite and on Postgres.
-- Booleans are BIGINT 0/1, timestamps TEXT in RFC 3339 UTC with milliseconds, nested values TEXT holding JSON.

-- Global counters: 'revision' (bumped once per committed configuration write; its row lock serialises
-- writers on Postgres) and 'event' (audit event ids).
CREATE TABLE vexil_counters (
    name TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);
INSERT INTO vexil_counters (name, value) VALUES ('revision', 0);
INSERT INTO vexil_counters (name, value) VALUES ('event', 0);

CREATE TABLE projects (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    description TEXT,
    mode TEXT NOT NULL,
    default_stickiness TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT
);

CREATE TABLE environments (
    name TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    enabled BIGINT NOT NULL,
    protected BIGINT NOT NULL,
    sort_order BIGINT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE project_environments (
    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    environment TEXT NOT NULL REFERENCES environments (name) ON DELETE CASCADE,
    PRIMARY KEY (project_id, environment)
);

CREATE TABLE features (
    name TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES projects (id),
    type TEXT NOT NULL,
    description TEXT,
    stale BIGINT NOT NULL,
    impression_data BIGINT NOT NULL,
    created_at TEXT NOT NULL,
    archived_at TEXT
);
CREATE INDEX features_project ON features (project_id);

-- Per flag and environment: the on/off switch. A missing row reads as off.
CREATE TABLE feature_environments (
    feature_name TEXT NOT NULL REFERENCES features (name) ON DELETE CASCADE,
    environment TEXT NOT NULL REFERENCES environments (name) ON DELETE CASCADE,
    enabled BIGINT NOT NULL,
    PRIMARY KEY (feature_name, environment)
);

CREATE TABLE feature_strategies (
    id TEXT PRIMARY KEY,
    feature_name TEXT NOT NULL REFERENCES features (name) ON DELETE CASCADE,
    environment TEXT NOT NULL REFERENCES environments (name) ON DELETE CASCADE,
    name TEXT NOT NULL,
    title TEXT,
    disabled BIGINT NOT NULL,
    sort_order BIGINT NOT NULL,
    constraints TEXT NOT NULL,
    parameters TEXT NOT NULL,
    variants TEXT NOT NULL,
    segments TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX feature_strategies_flag_env ON feature_strategies (feature_name, environment);

-- Audit trail. No foreign keys: events outlive what they describe.
CREATE TABLE events (
    id BIGINT PRIMARY KEY,
    type TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_by_user_id BIGINT NOT NULL,
    project TEXT,
    environment TEXT,
    feature_name TEXT,
    data TEXT,
    pre_data TEXT,
    revision BIGINT NOT NULL
);
CREATE INDEX events_feature ON events (feature_name);
CREATE INDEX events_project ON events (project);

-- API tokens: only the SHA-256 of the secret is kept. kind: admin | client | frontend.
-- projects: JSON array of project ids or ["*"]; environment: a name or '*'.
CREATE TABLE api_tokens (
    secret_hash TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    projects TEXT NOT NULL,
    environment TEXT NOT NULL,
    expires_at TEXT,
    created_at TEXT NOT NULL
);

-- The default project and environments are created at the first start (domain::first_start), with their
-- audit events.

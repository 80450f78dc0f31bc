-- Signal endpoints, their tokens, the signals they received, action sets and their executions.
-- Portable SQL (SQLite and Postgres). Booleans are BIGINT 0/1, timestamps RFC 3339 UTC text, JSON as text.
INSERT INTO vexil_counters (name, value) VALUES ('signal_endpoint', 0);
INSERT INTO vexil_counters (name, value) VALUES ('signal_endpoint_token', 0);
INSERT INTO vexil_counters (name, value) VALUES ('signal', 0);
INSERT INTO vexil_counters (name, value) VALUES ('action_set', 0);
INSERT INTO vexil_counters (name, value) VALUES ('action', 0);
INSERT INTO vexil_counters (name, value) VALUES ('action_set_event', 0);

CREATE TABLE signal_endpoints (
    id BIGINT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    enabled BIGINT NOT NULL,
    created_at TEXT NOT NULL,
    created_by_user_id BIGINT NOT NULL
);

-- token_hash: the SHA-256 (hex) of the secret, which is shown once.
CREATE TABLE signal_endpoint_tokens (
    id BIGINT PRIMARY KEY,
    signal_endpoint_id BIGINT NOT NULL REFERENCES signal_endpoints (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    token_hash TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_by_user_id BIGINT NOT NULL
);
CREATE INDEX signal_endpoint_tokens_of_endpoint ON signal_endpoint_tokens (signal_endpoint_id);

-- A received signal. processed: 0 until the action processor has run every action set it matched.
CREATE TABLE signals (
    id BIGINT PRIMARY KEY,
    source TEXT NOT NULL,
    source_id BIGINT NOT NULL REFERENCES signal_endpoints (id) ON DELETE CASCADE,
    token_id BIGINT,
    token_name TEXT,
    payload TEXT NOT NULL,
    created_at TEXT NOT NULL,
    processed BIGINT NOT NULL
);
CREATE INDEX signals_pending ON signals (processed, id);
CREATE INDEX signals_of_source ON signals (source_id, id);

-- An action set of a project: its filters (payload, a JSON object by dotted path) and its actions (a JSON
-- array of {id, action, sortOrder, executionParams, createdAt, createdByUserId}).
CREATE TABLE action_sets (
    id BIGINT PRIMARY KEY,
    project TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    description TEXT,
    enabled BIGINT NOT NULL,
    actor_id BIGINT NOT NULL,
    source TEXT NOT NULL,
    source_id BIGINT NOT NULL,
    payload TEXT NOT NULL,
    actions TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_by_user_id BIGINT NOT NULL
);
CREATE INDEX action_sets_of_project ON action_sets (project, id);
CREATE INDEX action_sets_of_source ON action_sets (source, source_id);

-- One execution of an action set for a signal (at most one per pair): its state (success or failed), the
-- error, and the signal and the action set as they were, each action with its outcome (JSON).
CREATE TABLE action_set_events (
    id BIGINT PRIMARY KEY,
    action_set_id BIGINT NOT NULL REFERENCES action_sets (id) ON DELETE CASCADE,
    signal_id BIGINT NOT NULL,
    state TEXT NOT NULL,
    details TEXT,
    signal TEXT NOT NULL,
    action_set TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (signal_id, action_set_id)
);
CREATE INDEX action_set_events_of_set ON action_set_events (action_set_id, id);

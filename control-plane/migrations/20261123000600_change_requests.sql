-- Change requests per project and environment, and instance settings. Portable SQL (SQLite and Postgres).

-- Ids of change requests, their changes and comments come from counters, as event ids do.
INSERT INTO vexil_counters (name, value) VALUES ('change_request', 0);
INSERT INTO vexil_counters (name, value) VALUES ('change_request_change', 0);
INSERT INTO vexil_counters (name, value) VALUES ('change_request_comment', 0);

-- An environment of a project without a row has change requests off and requires 1 approval.
CREATE TABLE change_request_settings (
    project_id TEXT NOT NULL,
    environment TEXT NOT NULL,
    enabled BIGINT NOT NULL,
    required_approvals BIGINT NOT NULL,
    PRIMARY KEY (project_id, environment)
);

-- state: Draft, In review, Approved, Applied, Cancelled, Rejected; state_timestamps: JSON object state → time.
CREATE TABLE change_requests (
    id BIGINT PRIMARY KEY,
    project_id TEXT NOT NULL,
    environment TEXT NOT NULL,
    title TEXT NOT NULL,
    state TEXT NOT NULL,
    min_approvals BIGINT NOT NULL,
    created_by TEXT NOT NULL,
    created_by_user_id BIGINT NOT NULL,
    created_at TEXT NOT NULL,
    state_timestamps TEXT NOT NULL
);
CREATE INDEX change_requests_project ON change_requests (project_id, id);

-- payload: the change's JSON payload, as validated.
CREATE TABLE change_request_changes (
    id BIGINT PRIMARY KEY,
    change_request_id BIGINT NOT NULL REFERENCES change_requests (id) ON DELETE CASCADE,
    feature TEXT NOT NULL,
    action TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_by_user_id BIGINT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX change_request_changes_request ON change_request_changes (change_request_id, id);

-- kind: approval or rejection; principal: who decided (one approval per principal and request).
CREATE TABLE change_request_reviews (
    change_request_id BIGINT NOT NULL REFERENCES change_requests (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    principal TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_by_user_id BIGINT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (change_request_id, kind, principal)
);

CREATE TABLE change_request_comments (
    id BIGINT PRIMARY KEY,
    change_request_id BIGINT NOT NULL REFERENCES change_requests (id) ON DELETE CASCADE,
    text TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_by_user_id BIGINT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX change_request_comments_request ON change_request_comments (change_request_id, id);

-- Instance-wide settings: name → JSON value. instance_id is added at the first start.
CREATE TABLE settings (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
INSERT INTO settings (name, value) VALUES ('frontend_api_origins', '["*"]');

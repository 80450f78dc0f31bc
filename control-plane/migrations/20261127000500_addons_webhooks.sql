-- Addons (Unleash's integrations; provider `webhook` only) and their outbox of deliveries.
-- Addon ids come from a counter, as event ids do; so do the ids of finished deliveries (the integration
-- events of `GET /api/admin/addons/:id/events`), given when a delivery succeeds or fails for good.
INSERT INTO vexil_counters (name, value) VALUES ('addon', 0);
INSERT INTO vexil_counters (name, value) VALUES ('addon_delivery', 0);

-- `parameters` is JSON text with the secrets in clear (they are sent with every delivery); the API only
-- ever shows them masked. `events`, `projects`, `environments` are JSON arrays as given; `addon_filters`
-- holds the same values one per row, so the write that records an event selects the matching addons in SQL.
CREATE TABLE addons (
    id BIGINT PRIMARY KEY,
    provider TEXT NOT NULL,
    description TEXT,
    enabled BIGINT NOT NULL,
    parameters TEXT NOT NULL,
    events TEXT NOT NULL,
    projects TEXT NOT NULL,
    environments TEXT NOT NULL,
    created_at TEXT NOT NULL
);

-- kind: 'event', 'project' or 'environment'. No project (environment) row: every project (environment).
CREATE TABLE addon_filters (
    addon_id BIGINT NOT NULL REFERENCES addons (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (addon_id, kind, value)
);
CREATE INDEX addon_filters_by_value ON addon_filters (kind, value);

-- The outbox: one row per (audit event, enabled addon it matches), written in the event's own transaction.
-- state: 'pending', then 'success' or 'failed'. Times are Unix ms. A sender claims a due row by setting
-- `lease_until`; `log_id` is given when the row is finished.
CREATE TABLE addon_deliveries (
    event_id BIGINT NOT NULL,
    addon_id BIGINT NOT NULL REFERENCES addons (id) ON DELETE CASCADE,
    state TEXT NOT NULL,
    attempts BIGINT NOT NULL,
    next_attempt_ms BIGINT NOT NULL,
    lease_until_ms BIGINT NOT NULL,
    state_details TEXT NOT NULL,
    details TEXT NOT NULL,
    log_id BIGINT,
    finished_ms BIGINT,
    PRIMARY KEY (event_id, addon_id)
);
CREATE INDEX addon_deliveries_due ON addon_deliveries (state, next_attempt_ms);
CREATE INDEX addon_deliveries_log ON addon_deliveries (addon_id, log_id);
CREATE INDEX addon_deliveries_finished ON addon_deliveries (finished_ms);

-- When an edge last served each flag to a frontend or OFREP client, per environment: what the flag list's
-- "last seen" reads beside the SDKs' own reports (client_seen_toggles). The edges' per-minute counts
-- (edge_evaluation_minutes) go after 48 hours; this stays until the roll-up's client retention.
CREATE TABLE flags_served_by_edges (
    feature_name TEXT NOT NULL,
    environment TEXT NOT NULL,
    last_served_ms BIGINT NOT NULL,
    PRIMARY KEY (feature_name, environment)
);
CREATE INDEX flags_served_by_edges_by_last_served ON flags_served_by_edges (last_served_ms);

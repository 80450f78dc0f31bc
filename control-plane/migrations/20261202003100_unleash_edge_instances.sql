-- Unleash Edge instances in front of this control plane: the latest report of each (POST
-- /api/client/metrics/edge), and of the Edges that report through it (`via`: the one that relayed it).
-- An instance's identifier is new at each start of the process. Portable SQL (SQLite and Postgres).
CREATE TABLE unleash_edge_instances (
    identifier TEXT PRIMARY KEY,
    app_name TEXT NOT NULL,
    edge_version TEXT NOT NULL,
    region TEXT,
    hosting TEXT,
    -- The environment of the token the report came with (`*`: every environment).
    environment TEXT NOT NULL,
    via TEXT,
    started_ms BIGINT NOT NULL,
    last_report_ms BIGINT NOT NULL,
    connected_streaming_clients BIGINT NOT NULL,
    -- JSON: the rest of the report as kept (requests since the previous report, traffic, upstream latency,
    -- process metrics, revisions per environment).
    details TEXT NOT NULL
);
CREATE INDEX unleash_edge_instances_by_report ON unleash_edge_instances (last_report_ms);

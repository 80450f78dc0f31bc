-- Usage metrics: what the SDKs report (applications, instances, yes/no/variant counts) and what the edges
-- report about themselves. Portable SQL (SQLite and Postgres). Times here are BIGINT Unix milliseconds, so
-- that windows are plain comparisons; the API renders them as RFC 3339.

-- One row per appName: first sighting, latest registration's strategies (JSON array), metadata.
CREATE TABLE client_applications (
    app_name TEXT PRIMARY KEY,
    description TEXT,
    url TEXT,
    color TEXT,
    icon TEXT,
    strategies TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    updated_at_ms BIGINT NOT NULL,
    last_seen_ms BIGINT NOT NULL
);

-- Every distinct strategy list an application registered with (JSON array).
CREATE TABLE client_application_registrations (
    app_name TEXT NOT NULL,
    strategies TEXT NOT NULL,
    PRIMARY KEY (app_name, strategies)
);

CREATE TABLE client_instances (
    app_name TEXT NOT NULL,
    instance_id TEXT NOT NULL,
    client_ip TEXT,
    sdk_version TEXT,
    environment TEXT,
    created_at_ms BIGINT NOT NULL,
    last_seen_ms BIGINT NOT NULL,
    PRIMARY KEY (app_name, instance_id)
);

-- Every flag name an application ever reported (kept past the buckets' retention).
CREATE TABLE client_seen_toggles (
    app_name TEXT NOT NULL,
    feature_name TEXT NOT NULL,
    PRIMARY KEY (app_name, feature_name)
);

-- Yes/no counts per flag, application, environment and minute received; counts add up.
CREATE TABLE client_usage_minutes (
    feature_name TEXT NOT NULL,
    app_name TEXT NOT NULL,
    environment TEXT NOT NULL,
    minute_ms BIGINT NOT NULL,
    yes_count BIGINT NOT NULL,
    no_count BIGINT NOT NULL,
    PRIMARY KEY (feature_name, app_name, environment, minute_ms)
);
CREATE INDEX client_usage_minutes_by_minute ON client_usage_minutes (minute_ms);

CREATE TABLE client_usage_minute_variants (
    feature_name TEXT NOT NULL,
    app_name TEXT NOT NULL,
    environment TEXT NOT NULL,
    minute_ms BIGINT NOT NULL,
    variant TEXT NOT NULL,
    count BIGINT NOT NULL,
    PRIMARY KEY (feature_name, app_name, environment, minute_ms, variant)
);
CREATE INDEX client_usage_minute_variants_by_minute ON client_usage_minute_variants (minute_ms);

-- Minute buckets older than 48 h, rolled up per hour.
CREATE TABLE client_usage_hours (
    feature_name TEXT NOT NULL,
    app_name TEXT NOT NULL,
    environment TEXT NOT NULL,
    hour_ms BIGINT NOT NULL,
    yes_count BIGINT NOT NULL,
    no_count BIGINT NOT NULL,
    PRIMARY KEY (feature_name, app_name, environment, hour_ms)
);
CREATE INDEX client_usage_hours_by_hour ON client_usage_hours (hour_ms);

CREATE TABLE client_usage_hour_variants (
    feature_name TEXT NOT NULL,
    app_name TEXT NOT NULL,
    environment TEXT NOT NULL,
    hour_ms BIGINT NOT NULL,
    variant TEXT NOT NULL,
    count BIGINT NOT NULL,
    PRIMARY KEY (feature_name, app_name, environment, hour_ms, variant)
);

-- The edges' batches already counted: a retry of one is acknowledged as a duplicate and counted once.
CREATE TABLE usage_batches (
    edge_id TEXT NOT NULL,
    batch_id TEXT NOT NULL,
    received_at_ms BIGINT NOT NULL,
    PRIMARY KEY (edge_id, batch_id)
);
CREATE INDEX usage_batches_by_time ON usage_batches (received_at_ms);

-- Every edge that reported: its version, the revision it was serving, its last report.
CREATE TABLE edges (
    edge_id TEXT PRIMARY KEY,
    version TEXT NOT NULL,
    applied_revision BIGINT NOT NULL,
    last_report_ms BIGINT NOT NULL
);

-- The evaluations each edge served itself, per flag and minute (not the SDKs' counts).
CREATE TABLE edge_evaluation_minutes (
    edge_id TEXT NOT NULL,
    environment TEXT NOT NULL,
    feature_name TEXT NOT NULL,
    minute_ms BIGINT NOT NULL,
    enabled_count BIGINT NOT NULL,
    disabled_count BIGINT NOT NULL,
    PRIMARY KEY (edge_id, environment, feature_name, minute_ms)
);
CREATE INDEX edge_evaluation_minutes_by_minute ON edge_evaluation_minutes (minute_ms);

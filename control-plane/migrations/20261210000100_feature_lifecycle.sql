-- A flag's lifecycle (Unleash's feature lifecycle): the stages it entered, once each. `initial` is the
-- flag's created_at and `archived` its archived_at (features), so only the stages in between are rows:
-- pre-live (first seen by an SDK in a non-production environment), live (first seen in a production-type
-- one) and completed (marked by someone: status kept or discarded, with an optional status_value).
CREATE TABLE feature_lifecycles (
    feature_name TEXT NOT NULL REFERENCES features (name) ON DELETE CASCADE,
    stage TEXT NOT NULL,
    status TEXT,
    status_value TEXT,
    entered_at TEXT NOT NULL,
    PRIMARY KEY (feature_name, stage)
);
CREATE INDEX feature_lifecycles_by_stage ON feature_lifecycles (stage);

-- Each flag type's expected lifetime in days (PUT /api/admin/feature-types/:id/lifetime); NULL: never
-- potentially stale. Seeded with Unleash's defaults.
CREATE TABLE feature_type_lifetimes (
    feature_type TEXT PRIMARY KEY,
    lifetime_days BIGINT
);
INSERT INTO feature_type_lifetimes (feature_type, lifetime_days) VALUES
    ('release', 40), ('experiment', 40), ('operational', 7),
    ('kill-switch', NULL), ('permission', NULL), ('sunset', NULL);

-- Set once by the potentially-stale job (with its feature-potentially-stale-on event) when the flag
-- outlived its type's lifetime.
ALTER TABLE features ADD COLUMN potentially_stale BIGINT NOT NULL DEFAULT 0;

-- Tags (Unleash's tag types, tags and flag tags) and flag dependencies (a child flag's requirements on
-- parent flags of its project). `simple` is Unleash's built-in tag type: a row of the migration, like the
-- built-in strategy definitions (not audited).

CREATE TABLE tag_types (
    name TEXT PRIMARY KEY,
    description TEXT,
    icon TEXT,
    color TEXT,
    created_at TEXT NOT NULL
);
INSERT INTO tag_types (name, description, icon, color, created_at)
    VALUES ('simple', 'Used to simplify filtering of features', '#', '#FFFFFF', '2026-11-27T00:01:00.000Z');

CREATE TABLE tags (
    tag_type TEXT NOT NULL REFERENCES tag_types (name) ON DELETE CASCADE,
    tag_value TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (tag_type, tag_value)
);

-- One row per tag on a flag: easy to filter flags by (tag_type, tag_value).
CREATE TABLE feature_tags (
    feature_name TEXT NOT NULL REFERENCES features (name) ON DELETE CASCADE,
    tag_type TEXT NOT NULL,
    tag_value TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (feature_name, tag_type, tag_value),
    FOREIGN KEY (tag_type, tag_value) REFERENCES tags (tag_type, tag_value) ON DELETE CASCADE
);
CREATE INDEX feature_tags_by_tag ON feature_tags (tag_type, tag_value);

-- `variants` is a JSON list of variant names (empty: only `enabled` is checked).
CREATE TABLE feature_dependencies (
    child TEXT NOT NULL REFERENCES features (name) ON DELETE CASCADE,
    parent TEXT NOT NULL REFERENCES features (name) ON DELETE CASCADE,
    enabled BIGINT NOT NULL,
    variants TEXT NOT NULL,
    PRIMARY KEY (child, parent)
);
CREATE INDEX feature_dependencies_by_parent ON feature_dependencies (parent);

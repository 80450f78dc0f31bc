-- Segments, strategy definitions, context fields and flag-level variants. Portable SQL (SQLite and Postgres).

-- Segment ids come from this counter (portable: no SERIAL / AUTOINCREMENT).
INSERT INTO vexil_counters (name, value) VALUES ('segment', 0);

-- constraints: JSON array of constraints. project_id NULL: a global segment, usable by every project.
CREATE TABLE segments (
    id BIGINT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    description TEXT,
    project_id TEXT REFERENCES projects (id),
    constraints TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL
);

-- Strategy definitions: the built-ins (built_in = 1, not editable) and custom ones.
-- parameters: JSON array of {name, type, description, required}.
CREATE TABLE strategy_definitions (
    name TEXT PRIMARY KEY,
    title TEXT,
    description TEXT,
    parameters TEXT NOT NULL,
    built_in BIGINT NOT NULL,
    deprecated BIGINT NOT NULL,
    created_at TEXT NOT NULL
);
INSERT INTO strategy_definitions (name, title, description, parameters, built_in, deprecated, created_at) VALUES
('default', 'Standard', 'The standard strategy is strictly on / off for your entire userbase.', '[]', 1, 0, '2026-11-22T00:00:00.000Z'),
('flexibleRollout', 'Gradual rollout', 'Roll out to a percentage of your userbase, and ensure that the experience is the same for the user on each visit.', '[{"name":"rollout","type":"percentage","description":"","required":false},{"name":"stickiness","type":"string","description":"Used to define stickiness. Possible values: default, userId, sessionId, random","required":true},{"name":"groupId","type":"string","description":"Used to define a activation groups, which allows you to correlate across feature toggles.","required":true}]', 1, 0, '2026-11-22T00:00:00.000Z'),
('userWithId', 'UserIDs', 'Enable the feature for a specific set of userIds.', '[{"name":"userIds","type":"list","description":"","required":false}]', 1, 0, '2026-11-22T00:00:00.000Z'),
('gradualRolloutUserId', 'Gradual rollout by user id', 'Roll out to a percentage of users, by user id.', '[{"name":"percentage","type":"percentage","description":"","required":false},{"name":"groupId","type":"string","description":"Used to define a activation groups, which allows you to correlate across feature toggles.","required":true}]', 1, 1, '2026-11-22T00:00:00.000Z'),
('gradualRolloutSessionId', 'Gradual rollout by session id', 'Roll out to a percentage of sessions, by session id.', '[{"name":"percentage","type":"percentage","description":"","required":false},{"name":"groupId","type":"string","description":"Used to define a activation groups, which allows you to correlate across feature toggles.","required":true}]', 1, 1, '2026-11-22T00:00:00.000Z'),
('gradualRolloutRandom', 'Randomized rollout', 'Randomly activate the feature toggle. No stickiness.', '[{"name":"percentage","type":"percentage","description":"","required":false}]', 1, 1, '2026-11-22T00:00:00.000Z'),
('remoteAddress', 'IPs', 'Enable the feature for a specific set of IP addresses.', '[{"name":"IPs","type":"list","description":"","required":true}]', 1, 0, '2026-11-22T00:00:00.000Z'),
('applicationHostname', 'Hosts', 'Enable the feature for a specific set of hostnames.', '[{"name":"hostNames","type":"list","description":"","required":false}]', 1, 0, '2026-11-22T00:00:00.000Z');

-- Context fields. legal_values: JSON array of {value, description}.
CREATE TABLE context_fields (
    name TEXT PRIMARY KEY,
    description TEXT,
    stickiness BIGINT NOT NULL,
    sort_order BIGINT NOT NULL,
    legal_values TEXT NOT NULL,
    built_in BIGINT NOT NULL,
    created_at TEXT NOT NULL
);
INSERT INTO context_fields (name, description, stickiness, sort_order, legal_values, built_in, created_at) VALUES
('environment', 'Allows you to constrain on application environment', 0, 0, '[]', 1, '2026-11-22T00:00:00.000Z'),
('userId', 'Allows you to constrain on userId', 1, 1, '[]', 1, '2026-11-22T00:00:00.000Z'),
('appName', 'Allows you to constrain on application name', 0, 2, '[]', 1, '2026-11-22T00:00:00.000Z'),
('currentTime', 'Allows you to constrain on date values', 0, 3, '[]', 1, '2026-11-22T00:00:00.000Z'),
('sessionId', 'Allows you to constrain on sessionId', 1, 4, '[]', 1, '2026-11-22T00:00:00.000Z'),
('remoteAddress', 'Allows you to constrain on remote address', 0, 5, '[]', 1, '2026-11-22T00:00:00.000Z');

-- Flag-level variants of a flag in an environment: JSON array of variants (weights normalised on write).
CREATE TABLE feature_environment_variants (
    feature_name TEXT NOT NULL REFERENCES features (name) ON DELETE CASCADE,
    environment TEXT NOT NULL REFERENCES environments (name) ON DELETE CASCADE,
    variants TEXT NOT NULL,
    PRIMARY KEY (feature_name, environment)
);

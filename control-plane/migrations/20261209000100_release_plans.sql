-- Release templates and release plans, as Unleash keeps them: one table of definitions told apart by
-- `discriminator` ('template' or 'plan'), and their ordered milestones. Portable SQL (SQLite and Postgres).
-- A plan is a copy of a template's milestones for one flag in one environment (feature_name, environment,
-- template_id set); starting a milestone replaces the flag's strategies there with the milestone's.
-- Timestamps: RFC 3339 UTC text with milliseconds, so their text order is their time order.
-- progression_due_at: when the active milestone's transition condition starts the next milestone (NULL: no
-- automatic progression pending, or paused); the scheduler claims due plans in a write of their own.
CREATE TABLE release_plan_definitions (
    id TEXT PRIMARY KEY,
    discriminator TEXT NOT NULL,
    name TEXT NOT NULL,
    created_by_user_id BIGINT NOT NULL,
    created_at TEXT NOT NULL,
    archived_at TEXT,
    feature_name TEXT REFERENCES features (name) ON DELETE CASCADE,
    environment TEXT REFERENCES environments (name) ON DELETE CASCADE,
    template_id TEXT,
    active_milestone_id TEXT,
    progression_due_at TEXT
);
CREATE INDEX release_plans_by_flag ON release_plan_definitions (feature_name, environment);
CREATE INDEX release_plans_due ON release_plan_definitions (progression_due_at);

-- strategies: a JSON array of the milestone's strategies (each with its id, sortOrder, strategyName, title,
-- parameters, constraints, variants, segments). interval_minutes: the transition condition to the next
-- milestone (NULL: none). paused_at: when its progression was paused.
CREATE TABLE release_plan_milestones (
    id TEXT PRIMARY KEY,
    definition_id TEXT NOT NULL REFERENCES release_plan_definitions (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    sort_order BIGINT NOT NULL,
    interval_minutes BIGINT,
    started_at TEXT,
    progression_executed_at TEXT,
    paused_at TEXT,
    strategies TEXT NOT NULL
);
CREATE INDEX release_plan_milestones_by_definition ON release_plan_milestones (definition_id, sort_order);

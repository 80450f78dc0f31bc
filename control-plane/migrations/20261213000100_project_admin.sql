-- A project environment's default strategy (Unleash's createFeatureStrategySchema as JSON, parameters as
-- strings): what a flag without strategies there gets when it is switched on; null: flexibleRollout 100 %.
ALTER TABLE project_environments ADD COLUMN default_strategy TEXT;
-- When the project was archived (Unleash's project archive); null while it is active.
ALTER TABLE projects ADD COLUMN archived_at TEXT;

-- Project-scoped context fields (Unleash's `project` on a context field): null for the instance's fields,
-- else the one project whose flags (and segments) may test it. Names stay unique across both kinds.
ALTER TABLE context_fields ADD COLUMN project TEXT REFERENCES projects (id);
CREATE INDEX context_fields_by_project ON context_fields (project);

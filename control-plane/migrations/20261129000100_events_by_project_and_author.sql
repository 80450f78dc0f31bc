-- The event log page (`/history`) and `/api/admin/search/events`: events of a project, or of an author (in a
-- project), newest first, read and counted from an index instead of sorting every event of the project.
CREATE INDEX events_project_id ON events (project, id);
CREATE INDEX events_author_project_id ON events (created_by_user_id, project, id);

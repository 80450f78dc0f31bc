-- The admin search routes (`/api/admin/search/events`): events of a type, newest first, and events in a
-- range of creation times, each read and counted from an index.
CREATE INDEX events_type_id ON events (type, id);
CREATE INDEX events_created_at ON events (created_at);

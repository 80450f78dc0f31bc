-- When an API token or a personal access token was last used (on the control plane's HTTP API, its gRPC
-- channel, or an edge, which reports the hashes it saw): written once per interval per process, only ever
-- forwards. NULL: never seen.
ALTER TABLE api_tokens ADD COLUMN seen_at TEXT;
ALTER TABLE personal_access_tokens ADD COLUMN seen_at TEXT;

-- The authors of a change request: its creator and whoever added, edited or discarded one of its changes.
-- principal as in change_request_reviews (user:<id>, or token:<name> for an API token): no author may approve.
-- Portable SQL (SQLite and Postgres).
CREATE TABLE change_request_authors (
    change_request_id BIGINT NOT NULL REFERENCES change_requests (id) ON DELETE CASCADE,
    principal TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_by_user_id BIGINT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (change_request_id, principal)
);

-- Existing requests: their creators and the authors of their changes.
INSERT INTO change_request_authors (change_request_id, principal, created_by, created_by_user_id, created_at)
SELECT change_request_id, principal, MIN(created_by), MIN(created_by_user_id), MIN(created_at) FROM (
    SELECT id AS change_request_id, created_by, created_by_user_id, created_at,
        CASE WHEN created_by_user_id = -1337 THEN 'token:' || created_by
             ELSE 'user:' || CAST(created_by_user_id AS TEXT) END AS principal
    FROM change_requests
    UNION ALL
    SELECT change_request_id, created_by, created_by_user_id, created_at,
        CASE WHEN created_by_user_id = -1337 THEN 'token:' || created_by
             ELSE 'user:' || CAST(created_by_user_id AS TEXT) END AS principal
    FROM change_request_changes
) AS authors
GROUP BY change_request_id, principal;

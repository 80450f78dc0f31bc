-- A flag's links (Unleash's feature links: a ticket, a dashboard, the code that reads it), gone with the flag.
CREATE TABLE feature_links (
    id TEXT PRIMARY KEY,
    feature_name TEXT NOT NULL REFERENCES features (name) ON DELETE CASCADE,
    url TEXT NOT NULL,
    title TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX feature_links_by_feature ON feature_links (feature_name, created_at);

-- Each user's favourite flags and projects (Unleash's favorites): listed first for that user, and gone with
-- the user, the flag or the project.
CREATE TABLE favorite_features (
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    feature_name TEXT NOT NULL REFERENCES features (name) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    PRIMARY KEY (user_id, feature_name)
);
CREATE INDEX favorite_features_by_feature ON favorite_features (feature_name);

CREATE TABLE favorite_projects (
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    PRIMARY KEY (user_id, project_id)
);
CREATE INDEX favorite_projects_by_project ON favorite_projects (project_id);

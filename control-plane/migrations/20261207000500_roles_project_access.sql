-- Roles and access per project. The predefined roles (1 Admin, 2 Editor, 3 Viewer: root; 4 Owner, 5 Member:
-- project) are rows too, so every role has one id space, as in Unleash; their permissions are fixed in code
-- (`domain::permissions`), a custom role's are rows of role_permissions.
-- role_type: root, project, root-custom (a custom root role) or custom (a custom project role).
INSERT INTO vexil_counters (name, value) VALUES ('role', 5);

CREATE TABLE roles (
    id BIGINT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL,
    role_type TEXT NOT NULL,
    created_at TEXT NOT NULL
);

INSERT INTO roles (id, name, description, role_type, created_at) VALUES
    (1, 'Admin', 'Users with the root admin role have superuser access to Vexil.', 'root', '2026-12-07T00:00:00.000Z'),
    (2, 'Editor', 'Users with the root editor role may change flags, strategies, segments and context fields in every project.', 'root', '2026-12-07T00:00:00.000Z'),
    (3, 'Viewer', 'Users with the root viewer role can only read root resources.', 'root', '2026-12-07T00:00:00.000Z'),
    (4, 'Owner', 'Everything in the project: its flags, settings, access and change-request configuration.', 'project', '2026-12-07T00:00:00.000Z'),
    (5, 'Member', 'Work on the project''s flags in every environment.', 'project', '2026-12-07T00:00:00.000Z');

-- environment: '' for a root or project permission, the environment's name for an environment one.
CREATE TABLE role_permissions (
    role_id BIGINT NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    permission TEXT NOT NULL,
    environment TEXT NOT NULL,
    PRIMARY KEY (role_id, permission, environment)
);

-- Who has which role in which project: people and groups (a group's members have its roles there).
CREATE TABLE project_user_roles (
    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role_id BIGINT NOT NULL REFERENCES roles (id),
    created_at TEXT NOT NULL,
    PRIMARY KEY (project_id, user_id, role_id)
);
CREATE INDEX project_user_roles_by_user ON project_user_roles (user_id);
CREATE INDEX project_user_roles_by_role ON project_user_roles (role_id);

CREATE TABLE project_group_roles (
    project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    group_id BIGINT NOT NULL REFERENCES user_groups (id) ON DELETE CASCADE,
    role_id BIGINT NOT NULL REFERENCES roles (id),
    created_at TEXT NOT NULL,
    PRIMARY KEY (project_id, group_id, role_id)
);
CREATE INDEX project_group_roles_by_group ON project_group_roles (group_id);
CREATE INDEX project_group_roles_by_role ON project_group_roles (role_id);

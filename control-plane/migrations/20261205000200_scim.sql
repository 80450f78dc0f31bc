-- SCIM 2.0 provisioning (`/scim/v2`): users and groups an identity provider creates carry a `scim_id` (the SCIM
-- resource id, a UUID); a provisioned user keeps the SCIM attributes it was given (`scim_data`, JSON text:
-- userName, name, displayName, emails, externalId) and can be deactivated (`active` 0) by the provider, which ends
-- their sessions and tokens. A provisioned group keeps its `externalId`. NULL `scim_id`: not managed by SCIM.
-- Portable SQL (SQLite and Postgres); both databases allow many NULLs in a unique index.
ALTER TABLE users ADD COLUMN scim_id TEXT;
ALTER TABLE users ADD COLUMN scim_data TEXT;
ALTER TABLE users ADD COLUMN active BIGINT NOT NULL DEFAULT 1;
CREATE UNIQUE INDEX users_scim_id ON users (scim_id);
ALTER TABLE user_groups ADD COLUMN scim_id TEXT;
ALTER TABLE user_groups ADD COLUMN scim_external_id TEXT;
CREATE UNIQUE INDEX user_groups_scim_id ON user_groups (scim_id);

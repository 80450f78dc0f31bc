-- Single sign-on sign-ins in flight (OpenID Connect and SAML 2.0), kept in the database so that the identity
-- provider's answer may reach any control plane on it (no sticky sessions behind a load balancer): one row per
-- sign-in, keyed by the SHA-256 of its state (the value of the browser's state cookie and of the provider's
-- round trip), its protocol's flow as JSON, taken (deleted) once, forgotten after 10 minutes.
-- Portable SQL (SQLite and Postgres).
CREATE TABLE sso_sign_ins (
    state_hash TEXT PRIMARY KEY,
    protocol TEXT NOT NULL,
    flow TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL
);
CREATE INDEX sso_sign_ins_by_age ON sso_sign_ins (created_at_ms);

-- Single sign-out: what signing out at the identity provider needs of a single sign-on, kept with its session
-- (server side only, never in a cookie) and deleted with it: for OpenID Connect the ID token of the sign-in
-- (the id_token_hint) and the provider's end_session_endpoint, for SAML 2.0 the NameID and SessionIndex of the
-- assertion. JSON; NULL for a password sign-in. Portable SQL (SQLite and Postgres).
ALTER TABLE user_sessions ADD COLUMN sign_out TEXT;

-- Banners (Unleash Enterprise's): a message every signed-in user sees on every admin UI page while enabled;
-- `enabled` and `sticky` are 0 or 1.
INSERT INTO vexil_counters (name, value) VALUES ('banner', 0);

CREATE TABLE banners (
    id BIGINT PRIMARY KEY,
    message TEXT NOT NULL,
    enabled BIGINT NOT NULL,
    variant TEXT NOT NULL,
    sticky BIGINT NOT NULL,
    icon TEXT,
    link TEXT,
    link_text TEXT,
    dialog_title TEXT,
    dialog TEXT,
    created_at TEXT NOT NULL
);

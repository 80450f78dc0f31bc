-- What Unleash's own web UI records per user: the feedback questionnaires answered or declined
-- (POST/PUT /api/admin/feedback) and the splash screens seen (POST /api/admin/splash/:id). Gone with the user.
CREATE TABLE user_feedback (
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    feedback_id TEXT NOT NULL,
    given TEXT,
    never_show BIGINT NOT NULL,
    PRIMARY KEY (user_id, feedback_id)
);

CREATE TABLE user_splash (
    user_id BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    splash_id TEXT NOT NULL,
    PRIMARY KEY (user_id, splash_id)
);

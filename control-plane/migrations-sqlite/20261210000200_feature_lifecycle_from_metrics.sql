-- The lifecycle stages of the flags that existed before it was recorded, as well as the stored usage tells:
-- pre-live / live entered at the first minute (or hour) an SDK reported the flag in such an environment.
INSERT INTO feature_lifecycles (feature_name, stage, entered_at)
SELECT feature_name, stage, strftime('%Y-%m-%dT%H:%M:%fZ', MIN(ms) / 1000.0, 'unixepoch')
FROM (
    SELECT u.feature_name,
           CASE WHEN e.type = 'production' THEN 'live' ELSE 'pre-live' END AS stage,
           u.ms
    FROM (
        SELECT feature_name, environment, minute_ms AS ms FROM client_usage_minutes
        UNION ALL
        SELECT feature_name, environment, hour_ms AS ms FROM client_usage_hours
    ) u
    JOIN features f ON f.name = u.feature_name
    JOIN environments e ON e.name = u.environment
) seen
GROUP BY feature_name, stage;

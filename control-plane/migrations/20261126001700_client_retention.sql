-- Names chosen by clients do not stay forever: applications, instances, the flag names an application
-- reported and its registered strategy lists each carry when they were last seen, and the roll-up drops
-- those not seen within `--client-retention-days`. Rows from before take their application's last sighting.

ALTER TABLE client_seen_toggles ADD COLUMN last_seen_ms BIGINT NOT NULL DEFAULT 0;
UPDATE client_seen_toggles SET last_seen_ms = COALESCE((SELECT a.last_seen_ms FROM client_applications a
    WHERE a.app_name = client_seen_toggles.app_name), 0);

ALTER TABLE client_application_registrations ADD COLUMN last_seen_ms BIGINT NOT NULL DEFAULT 0;
UPDATE client_application_registrations SET last_seen_ms = COALESCE((SELECT a.last_seen_ms
    FROM client_applications a WHERE a.app_name = client_application_registrations.app_name), 0);

CREATE INDEX client_applications_by_last_seen ON client_applications (last_seen_ms);
CREATE INDEX client_instances_by_last_seen ON client_instances (last_seen_ms);
CREATE INDEX client_seen_toggles_by_last_seen ON client_seen_toggles (last_seen_ms);
CREATE INDEX client_application_registrations_by_last_seen ON client_application_registrations (last_seen_ms);

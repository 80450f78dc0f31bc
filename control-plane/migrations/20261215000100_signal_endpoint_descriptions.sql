-- A signal endpoint's description (Unleash's createSignalEndpointSchema has one).
ALTER TABLE signal_endpoints ADD COLUMN description TEXT;

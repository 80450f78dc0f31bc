-- SQLite only (control-plane/migrations holds what both databases run): the admin event search's text
-- filter (`q`: data or pre_data contains the term, ignoring case) read from an FTS5 trigram index over the
-- events table instead of a scan of every event. The index holds no copy of the text (content='events');
-- the triggers keep it in step with every insert, update and delete of an event.
CREATE VIRTUAL TABLE events_text USING fts5(
    data, pre_data, content = 'events', content_rowid = 'id', tokenize = 'trigram'
);
INSERT INTO events_text (events_text) VALUES ('rebuild');
CREATE TRIGGER events_text_insert AFTER INSERT ON events BEGIN
    INSERT INTO events_text (rowid, data, pre_data) VALUES (new.id, new.data, new.pre_data);
END;
CREATE TRIGGER events_text_delete AFTER DELETE ON events BEGIN
    INSERT INTO events_text (events_text, rowid, data, pre_data)
    VALUES ('delete', old.id, old.data, old.pre_data);
END;
CREATE TRIGGER events_text_update AFTER UPDATE OF data, pre_data ON events BEGIN
    INSERT INTO events_text (events_text, rowid, data, pre_data)
    VALUES ('delete', old.id, old.data, old.pre_data);
    INSERT INTO events_text (rowid, data, pre_data) VALUES (new.id, new.data, new.pre_data);
END;

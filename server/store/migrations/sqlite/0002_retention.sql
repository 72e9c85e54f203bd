-- Version 2 (SQLite): indexes retention and reprocessing need.
-- Retention deletes events by received time in batches; Complete and
-- retention find an event's missing modules by its row.
CREATE INDEX events_received ON events (received_at);
CREATE INDEX event_missing_row ON event_missing (event_row);

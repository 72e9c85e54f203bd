-- Version 2 (PostgreSQL): indexes retention and reprocessing need.
-- Complete and retention find an event's missing modules by its row.
-- (SQLite also indexes events by received time here; on PostgreSQL
-- retention drops whole partitions instead.)
CREATE INDEX event_missing_row ON event_missing (event_row);

-- backtrail schema, version 1 (SQLite). Times are Unix milliseconds.
-- The PostgreSQL migrations mirror this file table for table.

CREATE TABLE projects (
	id         INTEGER PRIMARY KEY,
	name       TEXT    NOT NULL UNIQUE,
	key        TEXT    NOT NULL UNIQUE,
	created_at INTEGER NOT NULL
);

-- One row per accepted event. state: 0 queued, 1 leased for processing,
-- 2 processed, 3 failed. raw is the payload as received (zstd), data the
-- normalized, symbolicated report (zstd JSON).
CREATE TABLE events (
	id          INTEGER PRIMARY KEY,
	project_id  INTEGER NOT NULL REFERENCES projects (id),
	event_id    TEXT    NOT NULL,
	issue_id    INTEGER,
	kind        TEXT    NOT NULL DEFAULT '',
	format      TEXT    NOT NULL,
	state       INTEGER NOT NULL DEFAULT 0,
	lease_owner TEXT,
	lease_until INTEGER,
	attempts    INTEGER NOT NULL DEFAULT 0,
	received_at INTEGER NOT NULL,
	timestamp   INTEGER NOT NULL,
	release     TEXT    NOT NULL DEFAULT '',
	title       TEXT    NOT NULL DEFAULT '',
	error       TEXT    NOT NULL DEFAULT '',
	raw         BLOB    NOT NULL,
	data        BLOB,
	UNIQUE (project_id, event_id)
);
CREATE INDEX events_queue ON events (state, id) WHERE state < 2;
CREATE INDEX events_issue ON events (issue_id, received_at);

CREATE TABLE issues (
	id               INTEGER PRIMARY KEY,
	project_id       INTEGER NOT NULL REFERENCES projects (id),
	fingerprint      TEXT    NOT NULL,
	kind             TEXT    NOT NULL,
	title            TEXT    NOT NULL,
	culprit          TEXT    NOT NULL,
	status           TEXT    NOT NULL DEFAULT 'unresolved',
	count            INTEGER NOT NULL DEFAULT 0,
	first_seen       INTEGER NOT NULL,
	last_seen        INTEGER NOT NULL,
	first_release    TEXT    NOT NULL DEFAULT '',
	last_release     TEXT    NOT NULL DEFAULT '',
	resolved_release TEXT    NOT NULL DEFAULT '',
	regressed_at     INTEGER,
	grouping_version INTEGER NOT NULL,
	UNIQUE (project_id, fingerprint)
);
CREATE INDEX issues_list ON issues (project_id, last_seen);

-- Rollups, so issue pages never scan events.
CREATE TABLE issue_counts (
	issue_id INTEGER NOT NULL,
	hour     INTEGER NOT NULL,
	count    INTEGER NOT NULL,
	PRIMARY KEY (issue_id, hour)
);
CREATE TABLE issue_releases (
	issue_id   INTEGER NOT NULL,
	release    TEXT    NOT NULL,
	count      INTEGER NOT NULL,
	first_seen INTEGER NOT NULL,
	last_seen  INTEGER NOT NULL,
	PRIMARY KEY (issue_id, release)
);
CREATE INDEX issue_releases_release ON issue_releases (release, issue_id);

CREATE TABLE debug_files (
	id          INTEGER PRIMARY KEY,
	project_id  INTEGER NOT NULL REFERENCES projects (id),
	debug_id    TEXT    NOT NULL,
	code_id     TEXT    NOT NULL DEFAULT '',
	arch        TEXT    NOT NULL,
	format      TEXT    NOT NULL,
	kind        TEXT    NOT NULL,
	name        TEXT    NOT NULL,
	size        INTEGER NOT NULL,
	blob        TEXT    NOT NULL,
	features    TEXT    NOT NULL,
	uploaded_at INTEGER NOT NULL,
	UNIQUE (project_id, debug_id, arch, blob)
);
CREATE INDEX debug_files_debug_id ON debug_files (debug_id);
CREATE INDEX debug_files_code_id ON debug_files (code_id);

CREATE TABLE missing_symbols (
	project_id INTEGER NOT NULL,
	debug_id   TEXT    NOT NULL,
	code_id    TEXT    NOT NULL,
	name       TEXT    NOT NULL,
	arch       TEXT    NOT NULL,
	events     INTEGER NOT NULL,
	first_seen INTEGER NOT NULL,
	last_seen  INTEGER NOT NULL,
	PRIMARY KEY (project_id, debug_id)
);
CREATE TABLE event_missing (
	project_id INTEGER NOT NULL,
	debug_id   TEXT    NOT NULL,
	event_row  INTEGER NOT NULL,
	PRIMARY KEY (project_id, debug_id, event_row)
);

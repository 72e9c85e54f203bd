-- backtrail schema, version 1 (PostgreSQL). Times are Unix milliseconds.
-- Table for table the SQLite schema (migrations/sqlite/0001_init.sql), with
-- three differences that let several server replicas share the database:
--
--   events     is partitioned by received_at into daily RANGE partitions
--              (events_pYYYYMMDD, created ahead by the server), so that
--              retention drops whole partitions. A unique index of a
--              partitioned table must contain the partition key, so
--              idempotency lives in event_ids.
--   event_ids  one row per stored event: (project_id, event_id) is unique
--              across partitions, and the row locates the event (id,
--              received_at). Row ids come from events_id_seq.
--   queue      the processing queue: one row per event waiting for, or
--              leased for, processing (events.state stays 0 until the event
--              is processed or fails). Claim takes rows with FOR UPDATE SKIP
--              LOCKED; a lease is (lease_owner, attempts) until lease_until.

CREATE TABLE projects (
	id         BIGSERIAL PRIMARY KEY,
	name       TEXT   NOT NULL UNIQUE,
	key        TEXT   NOT NULL UNIQUE,
	created_at BIGINT NOT NULL
);

CREATE SEQUENCE events_id_seq;

-- state: 0 queued or leased, 2 processed, 3 failed. raw is the payload as
-- received (zstd), data the normalized, symbolicated report (zstd JSON).
CREATE TABLE events (
	id          BIGINT  NOT NULL,
	project_id  BIGINT  NOT NULL,
	event_id    TEXT    NOT NULL,
	issue_id    BIGINT,
	kind        TEXT    NOT NULL DEFAULT '',
	format      TEXT    NOT NULL,
	state       INTEGER NOT NULL DEFAULT 0,
	received_at BIGINT  NOT NULL,
	timestamp   BIGINT  NOT NULL,
	release     TEXT    NOT NULL DEFAULT '',
	title       TEXT    NOT NULL DEFAULT '',
	error       TEXT    NOT NULL DEFAULT '',
	raw         BYTEA   NOT NULL,
	data        BYTEA,
	PRIMARY KEY (id, received_at)
) PARTITION BY RANGE (received_at);
CREATE INDEX events_issue ON events (issue_id, received_at);

CREATE TABLE event_ids (
	project_id  BIGINT NOT NULL,
	event_id    TEXT   NOT NULL,
	id          BIGINT NOT NULL DEFAULT nextval('events_id_seq'),
	received_at BIGINT NOT NULL,
	PRIMARY KEY (project_id, event_id)
);

CREATE TABLE queue (
	id          BIGINT  PRIMARY KEY,
	received_at BIGINT  NOT NULL,
	lease_owner TEXT    NOT NULL DEFAULT '',
	lease_until BIGINT  NOT NULL DEFAULT 0,
	attempts    INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE issues (
	id               BIGSERIAL PRIMARY KEY,
	project_id       BIGINT  NOT NULL REFERENCES projects (id),
	fingerprint      TEXT    NOT NULL,
	kind             TEXT    NOT NULL,
	title            TEXT    NOT NULL,
	culprit          TEXT    NOT NULL,
	status           TEXT    NOT NULL DEFAULT 'unresolved',
	count            BIGINT  NOT NULL DEFAULT 0,
	first_seen       BIGINT  NOT NULL,
	last_seen        BIGINT  NOT NULL,
	first_release    TEXT    NOT NULL DEFAULT '',
	last_release     TEXT    NOT NULL DEFAULT '',
	resolved_release TEXT    NOT NULL DEFAULT '',
	regressed_at     BIGINT,
	grouping_version INTEGER NOT NULL,
	UNIQUE (project_id, fingerprint)
);
CREATE INDEX issues_list ON issues (project_id, last_seen);

-- Rollups, so issue pages never scan events.
CREATE TABLE issue_counts (
	issue_id BIGINT NOT NULL,
	hour     BIGINT NOT NULL,
	count    BIGINT NOT NULL,
	PRIMARY KEY (issue_id, hour)
);
CREATE TABLE issue_releases (
	issue_id   BIGINT NOT NULL,
	release    TEXT   NOT NULL,
	count      BIGINT NOT NULL,
	first_seen BIGINT NOT NULL,
	last_seen  BIGINT NOT NULL,
	PRIMARY KEY (issue_id, release)
);
CREATE INDEX issue_releases_release ON issue_releases (release, issue_id);

CREATE TABLE debug_files (
	id          BIGSERIAL PRIMARY KEY,
	project_id  BIGINT NOT NULL REFERENCES projects (id),
	debug_id    TEXT   NOT NULL,
	code_id     TEXT   NOT NULL DEFAULT '',
	arch        TEXT   NOT NULL,
	format      TEXT   NOT NULL,
	kind        TEXT   NOT NULL,
	name        TEXT   NOT NULL,
	size        BIGINT NOT NULL,
	blob        TEXT   NOT NULL,
	features    TEXT   NOT NULL,
	uploaded_at BIGINT NOT NULL,
	UNIQUE (project_id, debug_id, arch, blob)
);
CREATE INDEX debug_files_debug_id ON debug_files (debug_id);
CREATE INDEX debug_files_code_id ON debug_files (code_id);

CREATE TABLE missing_symbols (
	project_id BIGINT NOT NULL,
	debug_id   TEXT   NOT NULL,
	code_id    TEXT   NOT NULL,
	name       TEXT   NOT NULL,
	arch       TEXT   NOT NULL,
	events     BIGINT NOT NULL,
	first_seen BIGINT NOT NULL,
	last_seen  BIGINT NOT NULL,
	PRIMARY KEY (project_id, debug_id)
);
CREATE TABLE event_missing (
	project_id BIGINT NOT NULL,
	debug_id   TEXT   NOT NULL,
	event_row  BIGINT NOT NULL,
	PRIMARY KEY (project_id, debug_id, event_row)
);

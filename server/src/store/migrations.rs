//! The schema's migrations, once per dialect, version by version: migration `i` of
//! [`SQLITE`] and of [`POSTGRES`] make the same tables. SQLite records the version in
//! `PRAGMA user_version`, PostgreSQL in the table `grantmatch_schema`; both apply the
//! missing migrations in one transaction when the store opens (and by
//! `grantmatch db migrate`).
//!
//! PostgreSQL differences: BYTEA for blobs, DOUBLE PRECISION for reals, identity
//! columns for SQLite's integer keys, a `rowid` identity column where statements order
//! by insertion (`ORDER BY rowid` then reads the same in both), and one trigger
//! function for migration 8's generation triggers.

/// How many migrations there are: the schema version of a current database.
pub const VERSIONS: usize = 10;

pub const SQLITE: [&str; VERSIONS] = [
    r#"
CREATE TABLE partners (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    tier TEXT NOT NULL,
    contact_email TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE partner_regions (
    partner_id TEXT NOT NULL REFERENCES partners(id),
    region_id TEXT NOT NULL,
    PRIMARY KEY (partner_id, region_id)
);
CREATE TABLE partner_grant_areas (
    partner_id TEXT NOT NULL REFERENCES partners(id),
    grant_area_id TEXT NOT NULL,
    PRIMARY KEY (partner_id, grant_area_id)
);
CREATE TABLE tokens (
    id TEXT PRIMARY KEY,
    partner_id TEXT NOT NULL REFERENCES partners(id),
    hash BLOB NOT NULL UNIQUE,
    scopes TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
"#,
    r#"
CREATE TABLE matching_requests (
    id TEXT PRIMARY KEY,
    partner_id TEXT NOT NULL REFERENCES partners(id),
    token_id TEXT NOT NULL,
    organization_id TEXT NOT NULL,
    request_json TEXT NOT NULL,
    status TEXT NOT NULL,
    results_json TEXT,
    results_count INTEGER,
    error TEXT,
    created_at TEXT NOT NULL,
    completed_at TEXT
);
CREATE INDEX matching_requests_partner ON matching_requests (partner_id, created_at);
CREATE INDEX matching_requests_status ON matching_requests (status);
"#,
    r#"
CREATE TABLE usage_ledger (
    id INTEGER PRIMARY KEY,
    partner_id TEXT,
    token_id TEXT,
    method TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    status INTEGER NOT NULL,
    latency_ms REAL NOT NULL,
    organization_id TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX usage_ledger_partner ON usage_ledger (partner_id, created_at);
CREATE TABLE email_outbox (
    id INTEGER PRIMARY KEY,
    partner_id TEXT NOT NULL,
    quarter TEXT NOT NULL,
    kind TEXT NOT NULL,
    recipient TEXT,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    sent_at TEXT,
    last_error TEXT,
    UNIQUE (partner_id, quarter, kind)
);
"#,
    // Per-partner qualification prompt, custom categories and per-grant results
    // (server/src/qualification.rs).
    r#"
CREATE TABLE partner_assessment (
    partner_id TEXT PRIMARY KEY REFERENCES partners(id),
    prompt TEXT,
    prompt_updated_at TEXT,
    version INTEGER NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE partner_categories (
    id TEXT PRIMARY KEY,
    partner_id TEXT NOT NULL REFERENCES partners(id),
    name TEXT NOT NULL,
    name_en TEXT NOT NULL,
    description TEXT,
    keywords TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX partner_categories_partner ON partner_categories (partner_id);
CREATE TABLE partner_grant_results (
    partner_id TEXT NOT NULL REFERENCES partners(id),
    grant_id TEXT NOT NULL,
    ai_qualified INTEGER,
    reasoning TEXT,
    qualification_key TEXT,
    category_ids TEXT,
    categories_key TEXT,
    assessed_for_version INTEGER NOT NULL,
    assessed_at TEXT NOT NULL,
    PRIMARY KEY (partner_id, grant_id)
);
"#,
    // Matchings per partner, quarter and organisation, kept in step with
    // matching_requests: the quota reads a partner's quarter from here in O(organisations)
    // on every matching request instead of counting its rows. Filled from the existing
    // requests (created_at is RFC 3339 in UTC: year and month are its first characters).
    r#"
CREATE TABLE matching_quota_usage (
    partner_id TEXT NOT NULL,
    quarter TEXT NOT NULL,
    organization_id TEXT NOT NULL,
    matchings INTEGER NOT NULL,
    PRIMARY KEY (partner_id, quarter, organization_id)
);
INSERT INTO matching_quota_usage (partner_id, quarter, organization_id, matchings)
SELECT partner_id,
       substr(created_at, 1, 4) || '-Q' || ((CAST(substr(created_at, 6, 2) AS INTEGER) + 2) / 3),
       organization_id,
       COUNT(*)
FROM matching_requests
GROUP BY 1, 2, 3;
"#,
    // The partner's corrections to how its prompt was read (JSON of
    // `grantmatch_engine::qualify::QualificationRules`), NULL when none.
    r#"
ALTER TABLE partner_assessment ADD COLUMN rules TEXT;
"#,
    // Partner dashboard (server/src/dashboard/): users with argon2id password hashes,
    // one-time invites and sessions stored as SHA-256 hashes, failed sign-ins.
    r#"
CREATE TABLE partner_users (
    id TEXT PRIMARY KEY,
    partner_id TEXT NOT NULL REFERENCES partners(id),
    email TEXT NOT NULL UNIQUE,
    password_hash TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE partner_user_invites (
    hash BLOB PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES partner_users(id) ON DELETE CASCADE,
    expires_at TEXT NOT NULL,
    used_at TEXT
);
CREATE TABLE dashboard_sessions (
    hash BLOB PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES partner_users(id) ON DELETE CASCADE,
    csrf TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE TABLE dashboard_sign_in_failures (
    email TEXT NOT NULL,
    at TEXT NOT NULL
);
CREATE INDEX dashboard_sign_in_failures_email ON dashboard_sign_in_failures (email, at);
"#,
    // A per-partner generation of what the grant views show of the partner (its results,
    // categories and whether it is configured), bumped by triggers in the same
    // transaction as every change of those rows — by any process, the CLI included.
    // Authentication reads it with the token, so the server can keep the partner's
    // annotations in memory and know, on every request, whether they are still the
    // database's (README: the store).
    r#"
CREATE TABLE partner_annotations_generation (
    partner_id TEXT PRIMARY KEY,
    generation INTEGER NOT NULL
);
CREATE TRIGGER partner_grant_results_insert_generation AFTER INSERT ON partner_grant_results BEGIN
    INSERT INTO partner_annotations_generation (partner_id, generation) VALUES (NEW.partner_id, 1)
    ON CONFLICT (partner_id) DO UPDATE SET generation = generation + 1;
END;
CREATE TRIGGER partner_grant_results_update_generation AFTER UPDATE ON partner_grant_results BEGIN
    INSERT INTO partner_annotations_generation (partner_id, generation) VALUES (NEW.partner_id, 1)
    ON CONFLICT (partner_id) DO UPDATE SET generation = generation + 1;
    INSERT INTO partner_annotations_generation (partner_id, generation) VALUES (OLD.partner_id, 1)
    ON CONFLICT (partner_id) DO UPDATE SET generation = generation + 1;
END;
CREATE TRIGGER partner_grant_results_delete_generation AFTER DELETE ON partner_grant_results BEGIN
    INSERT INTO partner_annotations_generation (partner_id, generation) VALUES (OLD.partner_id, 1)
    ON CONFLICT (partner_id) DO UPDATE SET generation = generation + 1;
END;
CREATE TRIGGER partner_categories_insert_generation AFTER INSERT ON partner_categories BEGIN
    INSERT INTO partner_annotations_generation (partner_id, generation) VALUES (NEW.partner_id, 1)
    ON CONFLICT (partner_id) DO UPDATE SET generation = generation + 1;
END;
CREATE TRIGGER partner_categories_update_generation AFTER UPDATE ON partner_categories BEGIN
    INSERT INTO partner_annotations_generation (partner_id, generation) VALUES (NEW.partner_id, 1)
    ON CONFLICT (partner_id) DO UPDATE SET generation = generation + 1;
    INSERT INTO partner_annotations_generation (partner_id, generation) VALUES (OLD.partner_id, 1)
    ON CONFLICT (partner_id) DO UPDATE SET generation = generation + 1;
END;
CREATE TRIGGER partner_categories_delete_generation AFTER DELETE ON partner_categories BEGIN
    INSERT INTO partner_annotations_generation (partner_id, generation) VALUES (OLD.partner_id, 1)
    ON CONFLICT (partner_id) DO UPDATE SET generation = generation + 1;
END;
CREATE TRIGGER partner_assessment_insert_generation AFTER INSERT ON partner_assessment BEGIN
    INSERT INTO partner_annotations_generation (partner_id, generation) VALUES (NEW.partner_id, 1)
    ON CONFLICT (partner_id) DO UPDATE SET generation = generation + 1;
END;
CREATE TRIGGER partner_assessment_delete_generation AFTER DELETE ON partner_assessment BEGIN
    INSERT INTO partner_annotations_generation (partner_id, generation) VALUES (OLD.partner_id, 1)
    ON CONFLICT (partner_id) DO UPDATE SET generation = generation + 1;
END;
"#,
    // Who sends an outbox e-mail: a replica claims it before sending, so that several
    // replicas on one database send each e-mail once (store/usage.rs, `claim_mail`).
    r#"
ALTER TABLE email_outbox ADD COLUMN claimed_at TEXT;
"#,
    r#"
CREATE TABLE catalogue_snapshot_files (
    fingerprint TEXT NOT NULL,
    name TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (fingerprint, name)
);
CREATE TABLE catalogue_current (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    fingerprint TEXT NOT NULL,
    recorded_at TEXT NOT NULL
);
"#,
];

pub const POSTGRES: [&str; VERSIONS] = [
    r#"
CREATE TABLE partners (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    tier TEXT NOT NULL,
    contact_email TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE partner_regions (
    rowid BIGINT GENERATED ALWAYS AS IDENTITY,
    partner_id TEXT NOT NULL REFERENCES partners(id),
    region_id TEXT NOT NULL,
    PRIMARY KEY (partner_id, region_id)
);
CREATE TABLE partner_grant_areas (
    rowid BIGINT GENERATED ALWAYS AS IDENTITY,
    partner_id TEXT NOT NULL REFERENCES partners(id),
    grant_area_id TEXT NOT NULL,
    PRIMARY KEY (partner_id, grant_area_id)
);
CREATE TABLE tokens (
    id TEXT PRIMARY KEY,
    partner_id TEXT NOT NULL REFERENCES partners(id),
    hash BYTEA NOT NULL UNIQUE,
    scopes TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
"#,
    r#"
CREATE TABLE matching_requests (
    rowid BIGINT GENERATED ALWAYS AS IDENTITY,
    id TEXT PRIMARY KEY,
    partner_id TEXT NOT NULL REFERENCES partners(id),
    token_id TEXT NOT NULL,
    organization_id TEXT NOT NULL,
    request_json TEXT NOT NULL,
    status TEXT NOT NULL,
    results_json TEXT,
    results_count BIGINT,
    error TEXT,
    created_at TEXT NOT NULL,
    completed_at TEXT
);
CREATE INDEX matching_requests_partner ON matching_requests (partner_id, created_at);
CREATE INDEX matching_requests_status ON matching_requests (status);
"#,
    r#"
CREATE TABLE usage_ledger (
    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    partner_id TEXT,
    token_id TEXT,
    method TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    status INTEGER NOT NULL,
    latency_ms DOUBLE PRECISION NOT NULL,
    organization_id TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX usage_ledger_partner ON usage_ledger (partner_id, created_at);
CREATE TABLE email_outbox (
    id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    partner_id TEXT NOT NULL,
    quarter TEXT NOT NULL,
    kind TEXT NOT NULL,
    recipient TEXT,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    sent_at TEXT,
    last_error TEXT,
    UNIQUE (partner_id, quarter, kind)
);
"#,
    r#"
CREATE TABLE partner_assessment (
    partner_id TEXT PRIMARY KEY REFERENCES partners(id),
    prompt TEXT,
    prompt_updated_at TEXT,
    version BIGINT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE partner_categories (
    rowid BIGINT GENERATED ALWAYS AS IDENTITY,
    id TEXT PRIMARY KEY,
    partner_id TEXT NOT NULL REFERENCES partners(id),
    name TEXT NOT NULL,
    name_en TEXT NOT NULL,
    description TEXT,
    keywords TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX partner_categories_partner ON partner_categories (partner_id);
CREATE TABLE partner_grant_results (
    partner_id TEXT NOT NULL REFERENCES partners(id),
    grant_id TEXT NOT NULL,
    ai_qualified INTEGER,
    reasoning TEXT,
    qualification_key TEXT,
    category_ids TEXT,
    categories_key TEXT,
    assessed_for_version BIGINT NOT NULL,
    assessed_at TEXT NOT NULL,
    PRIMARY KEY (partner_id, grant_id)
);
"#,
    r#"
CREATE TABLE matching_quota_usage (
    partner_id TEXT NOT NULL,
    quarter TEXT NOT NULL,
    organization_id TEXT NOT NULL,
    matchings INTEGER NOT NULL,
    PRIMARY KEY (partner_id, quarter, organization_id)
);
INSERT INTO matching_quota_usage (partner_id, quarter, organization_id, matchings)
SELECT partner_id,
       substr(created_at, 1, 4) || '-Q' || ((CAST(substr(created_at, 6, 2) AS INTEGER) + 2) / 3),
       organization_id,
       COUNT(*)
FROM matching_requests
GROUP BY 1, 2, 3;
"#,
    r#"
ALTER TABLE partner_assessment ADD COLUMN rules TEXT;
"#,
    r#"
CREATE TABLE partner_users (
    id TEXT PRIMARY KEY,
    partner_id TEXT NOT NULL REFERENCES partners(id),
    email TEXT NOT NULL UNIQUE,
    password_hash TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE partner_user_invites (
    hash BYTEA PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES partner_users(id) ON DELETE CASCADE,
    expires_at TEXT NOT NULL,
    used_at TEXT
);
CREATE TABLE dashboard_sessions (
    hash BYTEA PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES partner_users(id) ON DELETE CASCADE,
    csrf TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE TABLE dashboard_sign_in_failures (
    email TEXT NOT NULL,
    at TEXT NOT NULL
);
CREATE INDEX dashboard_sign_in_failures_email ON dashboard_sign_in_failures (email, at);
"#,
    // The same generation as SQLite's triggers: one function, one trigger per table
    // (partner_assessment: inserts and deletes only, as in SQLite).
    r#"
CREATE TABLE partner_annotations_generation (
    partner_id TEXT PRIMARY KEY,
    generation BIGINT NOT NULL
);
CREATE FUNCTION bump_annotations_generation() RETURNS trigger AS $$
BEGIN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO partner_annotations_generation (partner_id, generation) VALUES (NEW.partner_id, 1)
        ON CONFLICT (partner_id) DO UPDATE SET generation = partner_annotations_generation.generation + 1;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        INSERT INTO partner_annotations_generation (partner_id, generation) VALUES (OLD.partner_id, 1)
        ON CONFLICT (partner_id) DO UPDATE SET generation = partner_annotations_generation.generation + 1;
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER partner_grant_results_generation AFTER INSERT OR UPDATE OR DELETE ON partner_grant_results
    FOR EACH ROW EXECUTE FUNCTION bump_annotations_generation();
CREATE TRIGGER partner_categories_generation AFTER INSERT OR UPDATE OR DELETE ON partner_categories
    FOR EACH ROW EXECUTE FUNCTION bump_annotations_generation();
CREATE TRIGGER partner_assessment_generation AFTER INSERT OR DELETE ON partner_assessment
    FOR EACH ROW EXECUTE FUNCTION bump_annotations_generation();
"#,
    r#"
ALTER TABLE email_outbox ADD COLUMN claimed_at TEXT;
"#,
    r#"
CREATE TABLE catalogue_snapshot_files (
    fingerprint TEXT NOT NULL,
    name TEXT NOT NULL,
    data BYTEA NOT NULL,
    PRIMARY KEY (fingerprint, name)
);
CREATE TABLE catalogue_current (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    fingerprint TEXT NOT NULL,
    recorded_at TEXT NOT NULL
);
"#,
];

//! Catalogue pickup without a restart (issue #14): the data directory's current
//! snapshot replaces the one served; a snapshot that cannot be loaded leaves the old one
//! served and is not tried again. (End to end with the binary, polling and SIGHUP:
//! `cli/tests/e2e_store.rs`, `replicas_pick_up_a_new_catalogue_without_a_restart`.)

use std::path::{Path, PathBuf};
use std::sync::Arc;

use grantmatch_engine::store::SnapshotStore;
use grantmatch_engine::Engine;
use grantmatch_server::catalogue::{reload, Reload};
use grantmatch_server::db::{Db, NewPartner};
use grantmatch_server::ratelimit::RateLimits;
use grantmatch_server::AppState;
use serde_json::Value;

use crate::common::{off_runtime, send_with, tiny_dir, Resp};

/// The tiny catalogue with one grant more (a copy of its first one) in `dir`.
fn with_extra_grant(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    for e in std::fs::read_dir(tiny_dir()).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    let grants = std::fs::read_to_string(dir.join("grants.jsonl")).unwrap();
    let mut extra: Value = serde_json::from_str(grants.lines().next().unwrap()).unwrap();
    extra["id"] = "7d3c1a52-1b9e-4c55-9a57-2f1e0c6b7a01".into();
    extra["slug"] = "testprogramm-neu".into();
    extra["title"] = "Testprogramm Neu".into();
    std::fs::write(dir.join("grants.jsonl"), format!("{grants}{extra}\n")).unwrap();
    dir.to_path_buf()
}

async fn get(state: &Arc<AppState>, auth: &str, uri: &str) -> Resp {
    send_with(state, "GET", uri, &[("authorization", auth)], vec![]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_snapshot_is_served_after_a_reload_and_a_broken_one_is_not() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let (db, auth) = off_runtime(|| {
        SnapshotStore::new(&data)
            .import(&tiny_dir(), |_, _| Ok(()))
            .unwrap();
        let db = Db::for_tests_in(&data).unwrap();
        let p = db
            .create_partner(&NewPartner {
                name: "Reload".into(),
                tier: "starter".into(),
                ..Default::default()
            })
            .unwrap();
        let (_, token) = db.create_token(p.id, &["grants:read".into()]).unwrap();
        (db, format!("Bearer {token}"))
    });
    let engine = off_runtime(|| Engine::open(&data).unwrap());
    let state = Arc::new(
        AppState::new(Arc::new(engine), Arc::new(db)).with_rate_limits(RateLimits {
            enabled: false,
            ..Default::default()
        }),
    );
    let new_grant = "/api/v1/grants/testprogramm-neu";
    assert_eq!(get(&state, &auth, new_grant).await.status, 404);
    let health = || async { send_with(&state, "GET", "/health", &[], vec![]).await.json };
    let old_name = health().await["catalogue"]["snapshot"].clone();
    let old = state.engine();

    let mut failed = None;
    let st = state.clone();
    let (r, failed_) = off_runtime(|| {
        let r = reload(&st, &data, &mut failed, false).unwrap();
        (r, failed.clone())
    });
    assert_eq!((r, failed_), (Reload::Unchanged, None));

    // A new import is served after the reload; the old engine stays whole for requests
    // that still hold it.
    let changed = with_extra_grant(&tmp.path().join("changed"));
    let r = off_runtime(|| {
        SnapshotStore::new(&data)
            .import(&changed, |_, _| Ok(()))
            .unwrap();
        reload(&st, &data, &mut failed, false).unwrap()
    });
    let Reload::Replaced(name) = r else {
        panic!("not replaced: {r:?}")
    };
    assert_ne!(Value::from(name.clone()), old_name);
    assert_eq!(health().await["catalogue"]["snapshot"], name.as_str());
    assert_eq!(health().await["catalogue"]["grants"], 13);
    let v = get(&state, &auth, new_grant).await.ok();
    assert_eq!(v["grant"]["title"], "Testprogramm Neu");
    let list = get(&state, &auth, "/api/v1/grants?per_page=100").await.ok();
    assert_eq!(list["meta"]["total_count"], 13);
    assert_eq!(old.catalogue.grants.len(), 12);
    assert!(!Arc::ptr_eq(&old, &state.engine()));

    // A snapshot that cannot be loaded: the previous one stays served, and it is not
    // loaded again until asked (SIGHUP) or another snapshot is current.
    let root = data.join("catalogue");
    std::fs::create_dir_all(root.join("snap-broken")).unwrap();
    std::fs::write(root.join("snap-broken/grants.jsonl"), "not json\n").unwrap();
    std::fs::write(root.join("CURRENT"), "snap-broken\n").unwrap();
    let (first, second, retried) = off_runtime(|| {
        let first = reload(&st, &data, &mut failed, false);
        let second = reload(&st, &data, &mut failed, false);
        let retried = reload(&st, &data, &mut failed, true);
        (first, second, retried)
    });
    assert!(first.is_err(), "{first:?}");
    assert_eq!(second.unwrap(), Reload::Skipped(root.join("snap-broken")));
    assert!(retried.is_err(), "{retried:?}");
    assert_eq!(health().await["catalogue"]["snapshot"], name.as_str());
    assert_eq!(get(&state, &auth, new_grant).await.status, 200);
}

/// The catalogue recorded as current in the database (PostgreSQL replicas with data
/// directories of their own; the store's part runs on both backends): an import's
/// snapshot is published with its files once, a data directory without it installs it
/// and then is up to date, and a recorded snapshot that is not a valid catalogue is
/// reported as failed and not tried again.
#[test]
fn a_data_directory_follows_the_catalogue_recorded_in_the_database() {
    use grantmatch_engine::store::{snapshot_fingerprint, SnapshotFiles};
    use grantmatch_server::store::catalogue::{publish_data_dir, sync_data_dir, DataDirSync};

    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let db = Db::for_tests().unwrap();
    let now = chrono::Utc::now();
    assert_eq!(db.current_catalogue().unwrap(), None);
    assert_eq!(
        sync_data_dir(&db, b.path(), None).unwrap(),
        DataDirSync::NoRecord
    );
    assert_eq!(publish_data_dir(&db, a.path(), now).unwrap(), None);

    let imported = SnapshotStore::new(a.path())
        .import(&tiny_dir(), |_, _| Ok(()))
        .unwrap();
    let fp = imported.fingerprint.clone();
    assert_eq!(
        publish_data_dir(&db, a.path(), now).unwrap(),
        Some((fp.clone(), true))
    );
    assert_eq!(
        publish_data_dir(&db, a.path(), now).unwrap(),
        Some((fp.clone(), false)),
        "the same snapshot again changes nothing"
    );
    let record = db.current_catalogue().unwrap().unwrap();
    assert_eq!(record.fingerprint, fp);
    let files = db.catalogue_files(&fp).unwrap().unwrap();
    assert_eq!(files, SnapshotFiles::read(&imported.snapshot).unwrap());

    // An empty data directory installs the recorded snapshot; then it is up to date.
    assert_eq!(
        sync_data_dir(&db, b.path(), None).unwrap(),
        DataDirSync::Installed(fp.clone())
    );
    let installed = SnapshotStore::new(b.path()).current().unwrap().unwrap();
    assert_eq!(snapshot_fingerprint(&installed).unwrap(), fp);
    let engine = Engine::open(b.path()).unwrap();
    assert_eq!(engine.snapshot_fingerprint(), Some(fp.as_str()));
    assert_eq!(engine.catalogue.grants.len(), imported.grants);
    assert_eq!(
        sync_data_dir(&db, b.path(), None).unwrap(),
        DataDirSync::UpToDate
    );

    // A new import replaces the record and the old files; B installs the new one.
    let changed = with_extra_grant(&a.path().join("changed-source"));
    let second = SnapshotStore::new(a.path())
        .import(&changed, |_, _| Ok(()))
        .unwrap();
    assert_ne!(second.fingerprint, fp);
    publish_data_dir(&db, a.path(), now).unwrap();
    assert_eq!(db.catalogue_files(&fp).unwrap(), None);
    assert_eq!(
        sync_data_dir(&db, b.path(), None).unwrap(),
        DataDirSync::Installed(second.fingerprint.clone())
    );
    assert_eq!(
        Engine::open(b.path()).unwrap().catalogue.grants.len(),
        imported.grants + 1
    );

    // Recorded files that are no valid catalogue: failed, then skipped; B keeps its own.
    let mut broken = SnapshotFiles::read(&second.snapshot).unwrap();
    for (name, data) in &mut broken.files {
        if name == "grants.jsonl" {
            data.extend_from_slice(b"{\"id\": \"not a grant\"}\n");
        }
    }
    let broken = SnapshotFiles::from_files(broken.files);
    assert!(db.publish_catalogue(&broken, now).unwrap());
    match sync_data_dir(&db, b.path(), None).unwrap() {
        DataDirSync::Failed { fingerprint, .. } => assert_eq!(fingerprint, broken.fingerprint),
        other => panic!("expected a failed install, got {other:?}"),
    }
    assert_eq!(
        sync_data_dir(&db, b.path(), Some(&broken.fingerprint)).unwrap(),
        DataDirSync::Skipped(broken.fingerprint.clone())
    );
    let live = SnapshotStore::new(b.path()).current().unwrap().unwrap();
    assert_eq!(snapshot_fingerprint(&live).unwrap(), second.fingerprint);
}

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

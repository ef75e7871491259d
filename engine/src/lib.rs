//! # grantmatch-engine
//!
//! The pure library behind grantmatch, in folders by concern:
//! - [`catalogue`]: the catalogue of funding programmes and its vocabularies, with its
//!   record types ([`model`]), import format and validation ([`records`]), import
//!   ([`import`]) and atomic on-disk snapshots ([`store`]);
//! - [`text`]: German full-text analysis and search ([`search`]) and the English →
//!   German glossary ([`glossary`]);
//! - [`vectors`]: the embedding model ([`embed`]), the grants' vectors and labels
//!   derived from neighbours ([`classify`]);
//! - [`facts`]: what the engine knows of every programme (who may apply, what kind);
//! - a bounded cache of values computed from a text ([`cache`]: query vectors, the
//!   resolved profiles and lexical scores of matching);
//! - partner scopes ([`scope`]), listing with filters ([`query`]) and the typed views
//!   of records and matches that every front-end shows ([`views`]; with the `openapi`
//!   feature they and the enums inside derive `utoipa::ToSchema`, for the server's
//!   OpenAPI document);
//! - matching ([`matching`], [`profile`]), qualification and custom categories
//!   ([`qualify`]); the evaluation of matching on judged profiles
//!   ([`Engine::evaluate_profile`], [`metrics`]), which the CLI's `eval` and Python's
//!   `evaluate` share; with the `synthetic` feature, a synthetic catalogue generator
//!   for load tests and benchmarks (`synthetic`, used by the CLI and the benches).
//!
//! The modules inside folders are also re-exported at their short paths
//! (`grantmatch_engine::records`, `::embed`, …).
//!
//! No I/O framework lives here: plain data in, plain data out. Front-ends (server,
//! CLI, Python) hold an [`Engine`] and call it.

pub mod cache;
pub mod catalogue;
pub mod error;
pub mod facts;
pub mod matching;
pub mod metrics;
pub mod profile;
pub mod qualify;
pub mod query;
pub mod scope;
#[cfg(feature = "synthetic")]
pub mod synthetic;
pub mod text;
pub mod vectors;
pub mod views;

// The modules inside the folders, also at their short paths (`records`, `embed`, …),
// which the front-ends use.
pub use catalogue::{import, model, records, store};
pub use text::{glossary, search};
pub use vectors::{classify, embed};

use std::path::{Path, PathBuf};

pub use catalogue::{Catalogue, Idx};
pub use error::{Error, Result};
pub use matching::{Match, MatchOptions, MatchWeights};
pub use profile::{MatchInput, ResolvedProfile};
pub use query::{FilterError, GrantFilter, Page, PageRequest};
pub use scope::{ResolvedScope, Scope};
pub use vectors::GrantVectors;

use search::SearchIndex;
use store::SnapshotStore;

/// A loaded catalogue with its search index, ready to answer queries. Immutable but for
/// bounded caches of matching's resolved profiles and lexical queries (behind locks), and
/// shareable across threads (`Arc<Engine>`).
pub struct Engine {
    pub catalogue: Catalogue,
    search: SearchIndex,
    /// Grants in title order (the default order of lists).
    title_order: Vec<Idx>,
    snapshot: Option<PathBuf>,
    /// The content fingerprint of that snapshot ([`store::SnapshotFiles`]).
    fingerprint: Option<String>,
    vectors: Option<GrantVectors>,
    /// Folded one-word region names (German and English), left out of lexical queries.
    region_words: std::collections::HashSet<String>,
    /// BM25 scores of recent lexical queries of matching (a repeated profile skips the
    /// search, as it skips the model through the embedder's query cache).
    lexical_cache: cache::TextCache<LexicalScores>,
    /// Recently resolved profiles by their request (a repeated profile skips reading
    /// its texts again: sectors, applicants, needs and glossary terms).
    profile_cache: cache::TextCache<ResolvedProfile>,
}

/// BM25 score of every grant a lexical query finds.
type LexicalScores = std::collections::HashMap<Idx, f32>;

/// Lexical queries of matching cached at most (fewer in a large catalogue: about two
/// million cached scores in all, at least 8 queries).
pub const LEXICAL_CACHE_MAX: usize = 256;

/// Resolved profiles cached at most.
pub const PROFILE_CACHE_MAX: usize = 1024;

fn lexical_cache_capacity(grants: usize) -> usize {
    (2_000_000 / grants.max(1)).clamp(8, LEXICAL_CACHE_MAX)
}

/// A folded word ([`text::fold_name`]) of legal form or non-profit status, left out of
/// the lexical query of matching.
fn is_status_word(folded: &str) -> bool {
    const FORMS: &[&str] = &[
        "e v",
        "ev",
        "ggmbh",
        "gmbh",
        "mbh",
        "ug",
        "ag",
        "kg",
        "ohg",
        "gbr",
        "eg",
        "co",
        "non profit",
        "nonprofit",
        "charitable",
    ];
    folded.starts_with("gemeinnutzig")
        || folded.starts_with("eingetragen")
        || FORMS.contains(&folded)
}

impl Engine {
    /// Opens the catalogue imported into `data_dir`.
    pub fn open(data_dir: &Path) -> Result<Self> {
        let (catalogue, search, dir) = SnapshotStore::new(data_dir).load()?;
        let vectors = GrantVectors::load(&dir)?;
        if vectors
            .as_ref()
            .is_some_and(|v| v.len() != catalogue.grants.len())
        {
            return Err(Error::Corrupt(format!(
                "{}: embeddings do not match the grants",
                dir.display()
            )));
        }
        let fingerprint = store::snapshot_fingerprint(&dir)?;
        let mut engine = Self::assemble(catalogue, search, Some(dir), vectors);
        engine.fingerprint = Some(fingerprint);
        Ok(engine)
    }

    /// Builds an engine in memory from validated records (tests, tools).
    pub fn from_records(records: records::CatalogueRecords) -> Result<Self> {
        let catalogue = Catalogue::new(records);
        let search = SearchIndex::build(&catalogue, None)?;
        Ok(Self::assemble(catalogue, search, None, None))
    }

    fn assemble(
        mut catalogue: Catalogue,
        search: SearchIndex,
        snapshot: Option<PathBuf>,
        vectors: Option<GrantVectors>,
    ) -> Self {
        if let Some(v) = &vectors {
            catalogue.set_facts(facts::derive(&catalogue, Some(v)));
            // Matching's lexical part splits compounds: built now (≈ 50 ms for 1,434
            // grants), not by the first matching request.
            catalogue.compounds();
        }
        let mut title_order: Vec<Idx> = (0..catalogue.grants.len() as Idx).collect();
        title_order.sort_by_cached_key(|&g| {
            let grant = &catalogue.grants[g as usize];
            (text::fold_name(&grant.title), grant.id)
        });
        let region_words = catalogue
            .regions
            .iter()
            .flat_map(|r| [text::fold_name(&r.name_de), text::fold_name(&r.name_en)])
            .filter(|n| !n.is_empty() && !n.contains(' '))
            .collect();
        let lexical_cache = cache::TextCache::new(lexical_cache_capacity(catalogue.grants.len()));
        Engine {
            catalogue,
            search,
            title_order,
            snapshot,
            fingerprint: None,
            vectors,
            region_words,
            lexical_cache,
            profile_cache: cache::TextCache::new(PROFILE_CACHE_MAX),
        }
    }

    /// Attaches grant vectors (one row per grant, catalogue order), e.g. computed in
    /// memory or pseudo-embeddings for benchmarks.
    pub fn with_vectors(mut self, vectors: GrantVectors) -> Result<Self> {
        if vectors.len() != self.catalogue.grants.len() {
            return Err(Error::InvalidInput(format!(
                "{} vectors for {} grants",
                vectors.len(),
                self.catalogue.grants.len()
            )));
        }
        self.catalogue
            .set_facts(facts::derive(&self.catalogue, Some(&vectors)));
        self.vectors = Some(vectors);
        Ok(self)
    }

    /// The grant vectors, when the catalogue was imported with embeddings.
    pub fn vectors(&self) -> Option<&GrantVectors> {
        self.vectors.as_ref()
    }

    /// Ranks grants for a resolved profile given its query vector: the best
    /// [`matching::MAX_RESULTS`], as the API returns them.
    pub fn rank(
        &self,
        scope: &ResolvedScope,
        profile: &ResolvedProfile,
        query: &[f32],
        options: &MatchOptions,
        today: chrono::NaiveDate,
    ) -> Result<Vec<Match>> {
        self.rank_up_to(scope, profile, query, options, today, matching::MAX_RESULTS)
    }

    /// [`Engine::rank`] returning the best `limit` of every programme that reached the
    /// rule stage (`usize::MAX`: all of them, for offline tuning; the API returns at most
    /// [`matching::MAX_RESULTS`]).
    pub fn rank_up_to(
        &self,
        scope: &ResolvedScope,
        profile: &ResolvedProfile,
        query: &[f32],
        options: &MatchOptions,
        today: chrono::NaiveDate,
        limit: usize,
    ) -> Result<Vec<Match>> {
        let vectors = self.vectors.as_ref().ok_or_else(|| {
            Error::Model(
                "the catalogue has no embeddings: import it with the model available".into(),
            )
        })?;
        if query.len() != vectors.dim {
            return Err(Error::InvalidInput(format!(
                "query vector has {} dimensions, expected {}",
                query.len(),
                vectors.dim
            )));
        }
        let q = vectors::normalized(query);
        let (lexical_text, prefix_text) = self.lexical_query(profile);
        let key = format!("{lexical_text}\u{1f}{prefix_text}");
        let lexical = self.lexical_cache.get_or_try_insert(&key, || {
            Ok::<_, Error>(std::sync::Arc::new(
                self.search_any(&lexical_text, &prefix_text)?
                    .into_iter()
                    .collect(),
            ))
        })?;
        let request = matching::RankRequest {
            cat: &self.catalogue,
            vectors,
            scope,
            profile,
            query: &q,
            lexical: &lexical,
            options,
            today,
        };
        Ok(matching::rank(&request, limit))
    }

    /// The lexical query of matching for `profile` ([`Engine::lexical_text`]) and the
    /// text whose rare words also find the compounds they start: the query itself for a
    /// German profile, only its German glossary terms for an English one (an English
    /// word at the start of a German compound is a coincidence: "art" in "Artenschutz").
    fn lexical_query(&self, profile: &ResolvedProfile) -> (String, String) {
        let text = self.lexical_text(profile);
        let prefix_text = match profile.text_language {
            profile::Locale::De => text.clone(),
            profile::Locale::En => profile.german_terms.join(" "),
        };
        (text, prefix_text)
    }

    /// The lexical query of matching for `profile`: its text, keywords, read topics and
    /// German terms. Region names are left out (the Länder also with their genitives and
    /// adjectives, [`text::places::land_words_at`]): location is the region component's
    /// job, and "Sachsen" in a profile must not make every Saxon programme a keyword
    /// match. So are words of legal form and non-profit status ("gemeinnütziger",
    /// "e.V.", "GmbH"): who may apply is the eligibility component's job, and
    /// "gemeinnützig" must not make "… mit gemeinnützigen Industrieforschungseinrichtungen"
    /// the best keyword match of a sports club.
    fn lexical_text(&self, profile: &ResolvedProfile) -> String {
        let tokens: Vec<&str> = std::iter::once(profile.query_text.as_str())
            .chain(profile.keywords.iter().map(String::as_str))
            .chain(profile.read_topics.iter().map(String::as_str))
            .chain(profile.german_terms.iter().map(String::as_str))
            .flat_map(|t| t.split_whitespace())
            .collect();
        let mut kept: Vec<&str> = Vec::with_capacity(tokens.len());
        let mut i = 0;
        while i < tokens.len() {
            // Names and adjectives of the Länder, also of several words or hyphenated
            // ("Rheinland-Pfalz", "bayerische") …
            let place = text::places::land_words_at(&tokens[i..])
                .max(text::places::landscape_words_at(&tokens[i..]));
            if place > 0 {
                i += place;
                continue;
            }
            // … and the catalogue's one-word region names.
            let folded = text::fold_name(tokens[i]);
            if !self.region_words.contains(&folded) && !is_status_word(&folded) {
                kept.push(tokens[i]);
            }
            i += 1;
        }
        kept.join(" ")
    }

    /// True when the BM25 scores of `profile`'s lexical query are cached (tests).
    pub fn is_lexically_cached(&self, profile: &ResolvedProfile) -> bool {
        let (text, prefix_text) = self.lexical_query(profile);
        self.lexical_cache
            .contains(&format!("{text}\u{1f}{prefix_text}"))
    }

    /// Embeds the profile (cached) and ranks: the whole matching in one call, the best
    /// [`matching::MAX_RESULTS`] as the API returns them.
    pub fn match_profile(
        &self,
        embedder: &embed::Embedder,
        scope: &ResolvedScope,
        input: &MatchInput,
        options: &MatchOptions,
        today: chrono::NaiveDate,
    ) -> Result<(ResolvedProfile, Vec<Match>)> {
        self.match_profile_up_to(
            embedder,
            scope,
            input,
            options,
            today,
            matching::MAX_RESULTS,
        )
    }

    /// [`Engine::match_profile`] returning the best `limit` of every programme that
    /// reached the rule stage (`usize::MAX`: all of them).
    pub fn match_profile_up_to(
        &self,
        embedder: &embed::Embedder,
        scope: &ResolvedScope,
        input: &MatchInput,
        options: &MatchOptions,
        today: chrono::NaiveDate,
        limit: usize,
    ) -> Result<(ResolvedProfile, Vec<Match>)> {
        let profile = self.resolve_profile(input)?;
        if self
            .vectors
            .as_ref()
            .is_some_and(|v| v.model_id != embedder.model_id())
        {
            return Err(Error::Model(format!(
                "the catalogue was embedded with {} but the loaded model is {}; re-import the catalogue",
                self.vectors.as_ref().map(|v| v.model_id.as_str()).unwrap_or(""),
                embedder.model_id()
            )));
        }
        // One batch of query texts: the whole profile, its topic words (explicit or read;
        // a short second query that sharpens the long text's direction), an English profile's
        // German glossary terms (see `glossary`; a German profile's related terms serve
        // only the lexical query) and each need.
        let german = profile.german_terms.join(", ");
        let topics = profile
            .keywords
            .iter()
            .chain(&profile.read_topics)
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(", ");
        let use_german = options.glossary_weight > 0.0
            && !german.is_empty()
            && profile.text_language == profile::Locale::En;
        let use_needs = options.need_weight > 0.0;
        let mut texts = vec![profile.query_text.as_str()];
        if !topics.is_empty() {
            texts.push(&topics);
        }
        if use_german {
            texts.push(&german);
        }
        let first_need = texts.len();
        if use_needs {
            texts.extend(profile.needs.iter().map(String::as_str));
        }
        let rows = embedder.embed_queries(&texts)?;
        // Summing normalised vectors averages their cosines.
        let mut query = rows[0].to_vec();
        let mut add = |row: &[f32], weight: f32| {
            for (q, x) in query.iter_mut().zip(row) {
                *q += weight * x;
            }
        };
        if !topics.is_empty() {
            add(&rows[1], 1.0);
        }
        if use_german {
            add(&rows[first_need - 1], options.glossary_weight);
        }
        let mut profile = profile;
        profile.need_vectors = rows[first_need..]
            .iter()
            .map(|v| vectors::normalized(v))
            .collect();
        let matches = self.rank_up_to(scope, &profile, &query, options, today, limit)?;
        Ok((profile, matches))
    }

    /// `input` resolved against the catalogue: cached by the request's JSON, as resolving
    /// reads the profile's texts (a good part of a repeated profile's time).
    pub fn resolve_profile(&self, input: &MatchInput) -> Result<ResolvedProfile> {
        let key = serde_json::to_string(input)
            .map_err(|e| Error::InvalidInput(format!("unserialisable profile: {e}")))?;
        let resolved = self.profile_cache.get_or_try_insert(&key, || {
            input.resolve(&self.catalogue).map(std::sync::Arc::new)
        })?;
        Ok(ResolvedProfile::clone(&resolved))
    }

    /// True when the resolution of `input` is cached (tests).
    pub fn is_profile_cached(&self, input: &MatchInput) -> bool {
        serde_json::to_string(input).is_ok_and(|key| self.profile_cache.contains(&key))
    }

    /// Matches one labelled profile and scores the ranking against its judgements
    /// (nDCG@`k`, Recall@25): the evaluation step of `grantmatch eval` and the Python
    /// `evaluate`.
    #[allow(clippy::too_many_arguments)]
    pub fn evaluate_profile(
        &self,
        embedder: &embed::Embedder,
        scope: &ResolvedScope,
        input: &MatchInput,
        judged: &metrics::Judged,
        options: &MatchOptions,
        today: chrono::NaiveDate,
        k: usize,
    ) -> Result<(ResolvedProfile, Vec<Match>, metrics::ProfileScore)> {
        let (profile, matches) = self.match_profile(embedder, scope, input, options, today)?;
        let ranked = matches
            .iter()
            .map(|m| self.catalogue.grants[m.grant as usize].slug.clone())
            .collect();
        let score = metrics::score_ranking(ranked, judged, k);
        Ok((profile, matches, score))
    }

    /// BM25 over titles and texts for the analysed terms of `text` and the parts of its
    /// compounds (any term may match): the lexical part of matching.
    ///
    /// A word of `prefix_text` that the catalogue uses in fewer than two texts but at
    /// the start of compounds also finds them ("Kino" → "Kinoförderung"; session 26):
    /// such a word is too rare to split the compound.
    fn search_any(&self, text: &str, prefix_text: &str) -> Result<Vec<(Idx, f32)>> {
        let compounds = self.catalogue.compounds();
        let terms = compounds.expand(&text::analyze(text));
        let prefixes: Vec<String> = text::analyze(prefix_text)
            .into_iter()
            .filter(|t| compounds.is_rare_part(t))
            .collect();
        self.search.search_any_with_prefixes(&terms, &prefixes)
    }

    /// BM25 ranking of the profile text over titles and descriptions (any term may
    /// match): the baseline of `grantmatch eval`.
    pub fn bm25_rank(&self, scope: &ResolvedScope, text: &str, limit: usize) -> Result<Vec<Idx>> {
        Ok(self
            .search
            .search_any(&text::analyze(text))?
            .into_iter()
            .map(|(g, _)| g)
            .filter(|&g| scope.is_visible(g))
            .take(limit)
            .collect())
    }

    /// Share of the catalogue's grants that contain an analysed term (exactly or as the
    /// start of a compound) in their title or texts.
    pub fn term_share(&self, term: &str) -> Result<f32> {
        self.search.doc_share(term)
    }

    /// Directory of the snapshot this engine was loaded from.
    pub fn snapshot_dir(&self) -> Option<&Path> {
        self.snapshot.as_deref()
    }

    /// Content fingerprint of the snapshot this engine was loaded from: equal
    /// fingerprints mean equal catalogues, whichever data directory holds them.
    pub fn snapshot_fingerprint(&self) -> Option<&str> {
        self.fingerprint.as_deref()
    }

    /// Resolves a partner scope against this catalogue.
    pub fn resolve_scope(&self, scope: &Scope) -> ResolvedScope {
        ResolvedScope::new(&self.catalogue, scope)
    }
}

//! Full-text search over grant titles and descriptions with tantivy (BM25).
//!
//! Texts are analysed by [`crate::text::analyze`] (German stemming, umlaut/ß folding)
//! before they reach tantivy, which then only splits on whitespace; the query goes
//! through the same analysis. Every query term must match (AND), either exactly or as
//! the prefix of a longer indexed term, which catches German compounds that start with
//! the term ("Digitalisierungsprämie" for "Digitalisierung"); exact hits and title hits
//! weigh more. The longer terms are read from the term dictionary as a range (terms of
//! four or more characters); a regex automaton per query term cost ~0.6 ms to build,
//! the range walk costs microseconds.

use std::path::Path;

use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, ConstScoreQuery, Occur, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST};
use tantivy::tokenizer::{TextAnalyzer, WhitespaceTokenizer};
use tantivy::{doc, Index, IndexReader, ReloadPolicy, Term};

use crate::catalogue::{Catalogue, Idx};
use crate::error::Result;
use crate::text::analyze;

const TOKENIZER: &str = "gm_pre_analyzed";
/// The analysis an index was built with, written beside it: an index of another (older)
/// analysis is rebuilt in memory when its snapshot loads ([`SearchIndex::is_current`]).
/// 2: compounds indexed with their parts.
const ANALYSIS: &str = "2";
const ANALYSIS_FILE: &str = "grantmatch-analysis";
const WRITER_MEMORY: usize = 64 * 1024 * 1024;
/// Weight of a rare word found at the start of a compound
/// ([`SearchIndex::search_any_with_prefixes`]) against an exact term's BM25 (session 26:
/// 0.5 / 1 / 2 / 3 / 4 / 6 measured on the tuning sets, 3–6 about equal).
pub const RARE_PREFIX_BOOST: f32 = 4.0;

/// A tantivy index over the grants of one catalogue.
pub struct SearchIndex {
    index: Index,
    reader: IndexReader,
    title: Field,
    body: Field,
}

fn schema() -> (Schema, Field, Field, Field) {
    let mut b = Schema::builder();
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(TOKENIZER)
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let idx = b.add_u64_field("idx", FAST);
    let title = b.add_text_field("title", text.clone());
    let body = b.add_text_field("body", text);
    (b.build(), idx, title, body)
}

fn register(index: &Index) {
    index.tokenizers().register(
        TOKENIZER,
        TextAnalyzer::builder(WhitespaceTokenizer::default()).build(),
    );
}

impl SearchIndex {
    /// Builds the index for `cat` in `dir` (which must exist and be empty), or in memory
    /// when `dir` is `None`.
    pub fn build(cat: &Catalogue, dir: Option<&Path>) -> Result<Self> {
        let (schema, idx, title, body) = schema();
        let index = match dir {
            Some(d) => Index::create_in_dir(d, schema)?,
            None => Index::create_in_ram(schema),
        };
        register(&index);
        let mut writer = index.writer_with_num_threads(1, WRITER_MEMORY)?;
        for (i, g) in cat.grants.iter().enumerate() {
            let mut text = String::new();
            for part in [&g.short_description, &g.description].into_iter().flatten() {
                text.push_str(part);
                text.push('\n');
            }
            let compounds = cat.compounds();
            writer.add_document(doc!(
                idx => i as u64,
                title => compounds.expand(&analyze(&g.title)).join(" "),
                body => compounds.expand(&analyze(&text)).join(" "),
            ))?;
        }
        writer.commit()?;
        writer.wait_merging_threads()?;
        if let Some(d) = dir {
            let file = d.join(ANALYSIS_FILE);
            std::fs::write(&file, ANALYSIS).map_err(|e| crate::Error::io(&file, e))?;
        }
        Self::from_index(index, title, body)
    }

    /// The index in `dir` was built with the current analysis.
    pub fn is_current(dir: &Path) -> bool {
        std::fs::read_to_string(dir.join(ANALYSIS_FILE)).is_ok_and(|v| v.trim() == ANALYSIS)
    }

    /// Opens an index built by [`SearchIndex::build`] in `dir`.
    pub fn open(dir: &Path) -> Result<Self> {
        let index = Index::open_in_dir(dir)?;
        register(&index);
        let schema = index.schema();
        let title = schema.get_field("title")?;
        let body = schema.get_field("body")?;
        Self::from_index(index, title, body)
    }

    fn from_index(index: Index, title: Field, body: Field) -> Result<Self> {
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(SearchIndex {
            index,
            reader,
            title,
            body,
        })
    }

    pub fn num_docs(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    fn term_query(&self, term: &str) -> Result<Box<dyn Query>> {
        let mut parts: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (field, boost) in [(self.title, 2.0), (self.body, 1.0)] {
            let exact = TermQuery::new(
                Term::from_field_text(field, term),
                IndexRecordOption::WithFreqs,
            );
            parts.push((
                Occur::Should,
                Box::new(BoostQuery::new(Box::new(exact), boost)),
            ));
            if term.chars().count() >= 4 {
                if let Some(prefix) = self.prefix_query(field, term, boost * 0.5)? {
                    parts.push((Occur::Should, prefix));
                }
            }
        }
        Ok(Box::new(BooleanQuery::new(parts)))
    }

    /// The longer terms of `field` that `prefix` starts, as one query of constant score
    /// `weight`, however many compounds match; `None` when there are none.
    fn prefix_query(
        &self,
        field: Field,
        prefix: &str,
        weight: f32,
    ) -> Result<Option<Box<dyn Query>>> {
        let longer = self.longer_terms(field, prefix)?;
        if longer.is_empty() {
            return Ok(None);
        }
        let any: Vec<(Occur, Box<dyn Query>)> = longer
            .into_iter()
            .map(|t| {
                let q: Box<dyn Query> = Box::new(TermQuery::new(t, IndexRecordOption::Basic));
                (Occur::Should, q)
            })
            .collect();
        let prefix = ConstScoreQuery::new(Box::new(BooleanQuery::new(any)), 1.0);
        Ok(Some(Box::new(BoostQuery::new(Box::new(prefix), weight))))
    }

    /// The indexed terms of `field` that start with `prefix` and are longer, read from
    /// the term dictionaries as a range (no automaton to build per query).
    fn longer_terms(&self, field: Field, prefix: &str) -> Result<Vec<Term>> {
        let searcher = self.reader.searcher();
        let mut out: Vec<Term> = Vec::new();
        for segment in searcher.segment_readers() {
            let index = segment.inverted_index(field)?;
            let mut stream = index
                .terms()
                .range()
                .gt(prefix.as_bytes())
                .into_stream()
                .map_err(tantivy::TantivyError::from)?;
            while stream.advance() {
                let key = stream.key();
                if !key.starts_with(prefix.as_bytes()) {
                    break;
                }
                if let Ok(text) = std::str::from_utf8(key) {
                    let t = Term::from_field_text(field, text);
                    if !out.contains(&t) {
                        out.push(t);
                    }
                }
            }
        }
        Ok(out)
    }

    /// All grants matching every term of `q`, with their BM25 score, best first (ties by
    /// catalogue order). An empty analysed query matches nothing.
    pub fn search(&self, q: &str) -> Result<Vec<(Idx, f32)>> {
        let mut terms = analyze(q);
        terms.sort();
        terms.dedup();
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let query = BooleanQuery::new(
            terms
                .iter()
                .map(|t| Ok((Occur::Must, self.term_query(t)?)))
                .collect::<Result<Vec<_>>>()?,
        );
        self.collect(&query)
    }

    fn collect(&self, query: &dyn Query) -> Result<Vec<(Idx, f32)>> {
        let searcher = self.reader.searcher();
        let limit = (searcher.num_docs() as usize).max(1);
        let top = searcher.search(query, &TopDocs::with_limit(limit))?;
        let columns = searcher
            .segment_readers()
            .iter()
            .map(|s| s.fast_fields().u64("idx"))
            .collect::<tantivy::Result<Vec<_>>>()?;
        let mut hits = Vec::with_capacity(top.len());
        for (score, addr) in top {
            if let Some(i) = columns[addr.segment_ord as usize].first(addr.doc_id) {
                hits.push((i as Idx, score));
            }
        }
        hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        Ok(hits)
    }

    /// Grants matching any of the analysed `terms` (exact terms only), best BM25 first.
    pub fn search_any(&self, terms: &[String]) -> Result<Vec<(Idx, f32)>> {
        self.search_any_with_prefixes(terms, &[])
    }

    /// [`SearchIndex::search_any`], where each term of `prefixes` also matches the
    /// longer terms it starts (one constant score, as in [`SearchIndex::search`]): a
    /// word the catalogue uses only inside compounds ("Kino" in "Kinoförderung").
    pub fn search_any_with_prefixes(
        &self,
        terms: &[String],
        prefixes: &[String],
    ) -> Result<Vec<(Idx, f32)>> {
        let mut terms = terms.to_vec();
        terms.sort();
        terms.dedup();
        let mut parts: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for t in &terms {
            for (field, boost) in [(self.title, 2.0), (self.body, 1.0)] {
                let q = TermQuery::new(
                    Term::from_field_text(field, t),
                    IndexRecordOption::WithFreqs,
                );
                parts.push((Occur::Should, Box::new(BoostQuery::new(Box::new(q), boost))));
            }
        }
        for t in prefixes {
            for (field, boost) in [(self.title, 2.0), (self.body, 1.0)] {
                if let Some(prefix) = self.prefix_query(field, t, boost * RARE_PREFIX_BOOST)? {
                    parts.push((Occur::Should, prefix));
                }
            }
        }
        if parts.is_empty() {
            return Ok(Vec::new());
        }
        self.collect(&BooleanQuery::new(parts))
    }

    /// Share of grants whose title or texts contain an analysed `term`, exactly or as
    /// the start of a longer term (a compound), as [`SearchIndex::search`] matches it.
    pub fn doc_share(&self, term: &str) -> Result<f32> {
        let searcher = self.reader.searcher();
        let n = searcher.num_docs().max(1) as f32;
        let count = searcher.search(&*self.term_query(term)?, &tantivy::collector::Count)?;
        Ok(count as f32 / n)
    }

    pub fn index(&self) -> &Index {
        &self.index
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::CatalogueRecords;
    use std::path::Path;

    fn real() -> (Catalogue, SearchIndex) {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/catalogue");
        let cat = Catalogue::new(CatalogueRecords::read_dir(&dir).expect("catalogue"));
        let index = SearchIndex::build(&cat, None).expect("index");
        (cat, index)
    }

    #[test]
    fn a_term_finds_the_compounds_it_starts() {
        let (cat, index) = real();
        let slugs: Vec<&str> = index
            .search("Breitband")
            .unwrap()
            .iter()
            .map(|&(g, _)| cat.grants[g as usize].slug.as_str())
            .collect();
        // Only compounds ("Breitbandausbau", "Breitbandnetzen") in these texts.
        for s in [
            "gigabitausbau-telekommunikationsnetze-2",
            "ausbaus-von-hochgeschwindigkeits-breitbandnetzen",
        ] {
            assert!(slugs.contains(&s), "{s} not in {slugs:?}");
        }
        // A compound-only hit counts once, however many compounds it holds, and an exact
        // title hit weighs more than prefix hits.
        let exact_and_prefix = index.search("Digitalisierung").unwrap();
        assert!(exact_and_prefix.windows(2).all(|w| w[0].1 >= w[1].1));
        assert!(index.doc_share("breitband").unwrap() > 0.0);
        assert!(index.search("Breitbandzzz").unwrap().is_empty());
    }

    #[test]
    fn a_part_finds_the_compounds_that_end_with_it() {
        let (cat, index) = real();
        let slugs = |terms: &[&str]| -> Vec<String> {
            let terms: Vec<String> = terms.iter().map(|t| t.to_string()).collect();
            index
                .search_any(&terms)
                .unwrap()
                .iter()
                .map(|&(g, _)| cat.grants[g as usize].slug.clone())
                .collect()
        };
        // Grants with "effizienz" only inside a compound ("Rohstoffeffizienz") are found.
        let found = slugs(&["effizienz"]);
        let on_its_own = cat
            .grants
            .iter()
            .filter(|g| {
                let text = format!(
                    "{} {} {}",
                    g.title,
                    g.short_description.as_deref().unwrap_or(""),
                    g.description.as_deref().unwrap_or("")
                );
                analyze(&text).contains(&"effizienz".to_string())
            })
            .count();
        assert!(found.len() > on_its_own, "{} <= {on_its_own}", found.len());
        assert!(slugs(&["effizienzzz"]).is_empty());
    }

    #[test]
    fn a_rare_word_finds_the_compounds_it_starts() {
        let (cat, index) = real();
        let kino = vec!["kino".to_string()];
        let slugs = |prefixes: &[String]| -> Vec<String> {
            index
                .search_any_with_prefixes(&kino, prefixes)
                .unwrap()
                .iter()
                .map(|&(g, _)| cat.grants[g as usize].slug.clone())
                .collect()
        };
        // "Kino" stands alone in one text only: too rare to split "Kinoförderung".
        assert!(cat.compounds().is_rare_part("kino"));
        assert!(!cat.compounds().is_rare_part("sport"));
        assert!(!slugs(&[]).contains(&"kinofoerderung".to_string()));
        let found = slugs(&kino);
        assert!(found.contains(&"kinofoerderung".to_string()), "{found:?}");
        assert!(
            found.contains(&"filmfoerderung-mfg-bw".to_string()),
            "{found:?}"
        );
    }

    #[test]
    fn an_index_of_an_older_analysis_is_not_current() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/catalogue");
        let cat = Catalogue::new(CatalogueRecords::read_dir(&dir).expect("catalogue"));
        let tmp = tempfile::tempdir().unwrap();
        SearchIndex::build(&cat, Some(tmp.path())).unwrap();
        assert!(SearchIndex::is_current(tmp.path()));
        std::fs::remove_file(tmp.path().join(ANALYSIS_FILE)).unwrap();
        assert!(!SearchIndex::is_current(tmp.path()));
    }
}

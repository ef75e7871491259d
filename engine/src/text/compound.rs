//! German compounds split into their parts, so that lexical matching meets a word inside
//! a compound: a profile's "Jugendsport" meets a programme's "Sport", "Gebäudesanierung"
//! meets "Sanierung", and a programme about "Rohstoffeffizienz" is one about "Effizienz".
//!
//! Works on analysed terms ([`crate::text::analyze`]: stemmed, folded). A term splits into
//! two or three known terms of the catalogue's texts (each at least [`MIN_PART`]
//! characters, a non-final one optionally followed by a linking element: "s", "es", "n",
//! "en", "e", "er" — what remains of a joint the stemmer does not see,
//! "gebaud|e|sanier", "tourismus|infrastruktur"), chosen as Koehn and Knight (2003) do: the
//! split whose parts have the highest geometric mean of document frequencies, and only
//! when that mean exceeds the whole term's own frequency. So a frequent word that happens
//! to contain two others stays whole ("Energieeffizienz"), and a rare compound of frequent
//! words splits.

use std::collections::HashMap;

/// Shortest part of a split (characters).
pub const MIN_PART: usize = 4;
/// Fewest documents a part must occur in.
const MIN_PART_DF: u32 = 2;
/// Most parts of one split.
const MAX_PARTS: usize = 3;
/// Linking elements between parts, as they remain after stemming.
const LINKS: &[&str] = &["", "s", "es", "n", "en", "e", "er"];

/// Splits compounds by the document frequencies of a text collection's terms.
#[derive(Debug, Default)]
pub struct Compounds {
    df: HashMap<String, u32>,
}

impl Compounds {
    /// From the analysed terms of each document (a document's terms may repeat).
    pub fn from_documents<I, D, S>(docs: I) -> Self
    where
        I: IntoIterator<Item = D>,
        D: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut df: HashMap<String, u32> = HashMap::new();
        let mut seen = std::collections::HashSet::new();
        for doc in docs {
            seen.clear();
            for t in doc {
                let t = t.as_ref();
                if seen.insert(t.to_string()) {
                    *df.entry(t.to_string()).or_default() += 1;
                }
            }
        }
        Compounds { df }
    }

    /// True when `term` is too rare in the catalogue's texts to be a part of a split
    /// (fewer than two documents) though long enough: such a word may still head the
    /// catalogue's compounds ("kino" in "kinoforder").
    pub fn is_rare_part(&self, term: &str) -> bool {
        term.chars().count() >= MIN_PART && self.df.get(term).copied().unwrap_or(0) < MIN_PART_DF
    }

    fn part_df(&self, s: &str) -> Option<u32> {
        if s.chars().count() < MIN_PART {
            return None;
        }
        self.df.get(s).copied().filter(|&n| n >= MIN_PART_DF)
    }

    /// The parts of `term` when it is a compound of known terms, else `None`.
    pub fn split(&self, term: &str) -> Option<Vec<String>> {
        let whole = self.df.get(term).copied().unwrap_or(0) as f64;
        let best = self.best_split(term, MAX_PARTS)?;
        let mean = best.1.exp();
        (best.0.len() >= 2 && mean > whole).then_some(best.0)
    }

    /// The best segmentation of `s` into at most `max` parts: the parts and the mean of
    /// their log frequencies.
    fn best_split(&self, s: &str, max: usize) -> Option<(Vec<String>, f64)> {
        if max == 0 {
            return None;
        }
        let mut best: Option<(Vec<String>, f64)> = None;
        if max < MAX_PARTS {
            if let Some(n) = self.part_df(s) {
                best = Some((vec![s.to_string()], f64::from(n).ln()));
            }
        }
        for (i, _) in s.char_indices().skip(MIN_PART) {
            let head = &s[..i];
            let Some(head_df) = self.part_df(head) else {
                continue;
            };
            for link in LINKS {
                let Some(rest) = s[i..].strip_prefix(link) else {
                    continue;
                };
                if rest.chars().count() < MIN_PART {
                    continue;
                }
                let Some((mut parts, mean)) = self.best_split(rest, max - 1) else {
                    continue;
                };
                let n = parts.len() as f64;
                let score = (f64::from(head_df).ln() + mean * n) / (n + 1.0);
                if best.as_ref().is_none_or(|b| score > b.1) {
                    parts.insert(0, head.to_string());
                    best = Some((parts, score));
                }
            }
        }
        best
    }

    /// `terms` with the parts of each compound after it.
    pub fn expand(&self, terms: &[String]) -> Vec<String> {
        let mut out = Vec::with_capacity(terms.len() * 2);
        for t in terms {
            out.push(t.clone());
            if let Some(parts) = self.split(t) {
                out.extend(parts);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::analyze;

    fn compounds(docs: &[&str]) -> Compounds {
        Compounds::from_documents(docs.iter().map(|d| analyze(d)))
    }

    #[test]
    fn a_rare_compound_of_known_words_splits() {
        let c = compounds(&[
            "Energie sparen",
            "Energie und Effizienz",
            "Effizienz im Betrieb",
            "Wärme und Pumpe",
            "Wärme Pumpe",
            "Ressourceneffizienz",
        ]);
        assert_eq!(
            c.split(&analyze("Energieeffizienz")[0]),
            Some(vec!["energi".to_string(), "effizienz".to_string()])
        );
        assert_eq!(
            c.split(&analyze("Wärmepumpe")[0]),
            Some(vec!["warm".to_string(), "pump".to_string()])
        );
    }

    #[test]
    fn unknown_parts_and_frequent_wholes_stay_whole() {
        let c = compounds(&[
            "Wärme Pumpe",
            "Wärme Pumpe",
            "Wärmepumpe",
            "Wärmepumpe",
            "Wärmepumpe",
            "Verein",
        ]);
        // More frequent as a whole than its parts' mean.
        assert_eq!(c.split(&analyze("Wärmepumpe")[0]), None);
        // "barung" is no known term; "verein" occurs once only.
        assert_eq!(c.split(&analyze("Vereinbarung")[0]), None);
        let terms = analyze("Pumpe Wärmepumpenprogramm");
        assert_eq!(c.expand(&terms), terms);
    }
}

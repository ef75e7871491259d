//! Where an organisation is, read from its own texts: the Länder (region codes such as
//! `DE-SN`) a profile places itself in when it names no `regions`.
//!
//! Two lists are data in this folder. `lands.tsv` holds the Länder's German and English
//! names with their genitives ("Sachsens") and the stems of their adjectives
//! ("bayerische", "Saxon"); a name counts wherever it stands. `de_towns.tsv` holds the
//! 3,076 German towns of at least 5,000 inhabitants with their Land (GeoNames, CC BY 4.0,
//! built by `scripts/places/build.py`); a town, its adjective ("Chemnitzer") or the first
//! part of a compound ("Berlin-Neukölln") counts only where a location word stands before
//! it ("in Leipzig", "aus Merseburg", "near Leisnig", "Stadt Kiel", "the city of Mainz",
//! "im Chemnitzer Norden"), so that a town named like a common word ("Essen", "Hof",
//! "Berg") is not read from an ordinary sentence or an organisation's name.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use super::fold_name;

const LANDS: &str = include_str!("lands.tsv");
const TOWNS: &str = include_str!("de_towns.tsv");
const AREAS: &str = include_str!("areas.tsv");

/// Words after which a town name places the organisation there (compared lower-cased).
const LOCATION_WORDS: &[&str] = &[
    "in",
    "im",
    "aus",
    "bei",
    "nahe",
    "nähe",
    "raum",
    "großraum",
    "region",
    "stadt",
    "hansestadt",
    "gemeinde",
    "landkreis",
    "kreis",
    "ortsteil",
    "near",
    "from",
    "around",
    "outside",
];

/// Words that, followed by "of", place the organisation in the town after it ("the city
/// of Mainz").
const OF_WORDS: &[&str] = &[
    "city",
    "town",
    "municipality",
    "district",
    "village",
    "county",
];

struct Places {
    /// Lower-cased Land name (words joined by one space) → code.
    land_names: HashMap<String, &'static str>,
    /// Folded adjective stems ([`fold_name`]) → code.
    land_stems: Vec<(String, &'static str)>,
    /// Town name (words joined by one space, case kept) → code.
    towns: HashMap<String, &'static str>,
    /// Folded town name → code; `None` for names that fold alike in several Länder.
    towns_folded: HashMap<String, Option<&'static str>>,
    /// First words of the names of several words (Land names lower-cased, towns as
    /// written): only there a phrase longer than one word is looked up.
    starts: HashSet<String>,
    /// Words in the longest name.
    longest: usize,
    /// Folded names of landscapes, districts, English town names and words for the
    /// country or the EU (`areas.tsv`) → region codes.
    areas: HashMap<String, Vec<&'static str>>,
    /// The names of `areas` that lie in Germany (not the words for the country or the
    /// EU), by [`landscape_key`]: left out where a text's topic is read.
    landscapes: HashSet<String>,
    /// Whitespace-separated words in the longest of `landscapes`.
    landscape_longest: usize,
}

fn places() -> &'static Places {
    static PLACES: OnceLock<Places> = OnceLock::new();
    PLACES.get_or_init(|| {
        let mut p = Places {
            land_names: HashMap::new(),
            land_stems: Vec::new(),
            towns: HashMap::new(),
            towns_folded: HashMap::new(),
            starts: HashSet::new(),
            longest: 1,
            areas: HashMap::new(),
            landscapes: HashSet::new(),
            landscape_longest: 1,
        };
        for line in data_lines(LANDS) {
            let cols: Vec<&str> = line.split('\t').collect();
            let [kind, name, code] = cols[..] else {
                panic!("lands.tsv lines are `name|stem<TAB>text<TAB>code`: {line}");
            };
            let key = words(name).join(" ").to_lowercase();
            match kind {
                "name" => {
                    let w = words(name);
                    p.longest = p.longest.max(w.len());
                    if w.len() > 1 {
                        p.starts.insert(w[0].to_lowercase());
                    }
                    p.land_names.insert(key, code);
                }
                "stem" => p.land_stems.push((fold_name(name), code)),
                _ => panic!("lands.tsv: unknown kind `{kind}`"),
            }
        }
        for line in data_lines(TOWNS) {
            let (name, code) = line
                .split_once('\t')
                .expect("de_towns.tsv lines are `town<TAB>code`");
            let key = words(name);
            p.longest = p.longest.max(key.len());
            if key.len() > 1 {
                p.starts.insert(key[0].to_string());
            }
            p.towns.insert(key.join(" "), code);
            p.towns_folded
                .entry(fold_name(name))
                .and_modify(|c| {
                    if *c != Some(code) {
                        *c = None;
                    }
                })
                .or_insert(Some(code));
        }
        for line in data_lines(AREAS) {
            let (name, codes) = line
                .split_once('\t')
                .expect("areas.tsv lines are `name<TAB>codes`");
            let codes: Vec<&'static str> = codes.split(',').map(str::trim).collect();
            if codes.iter().all(|c| c.starts_with("DE-")) {
                let key = landscape_key(&fold_name(name));
                p.landscape_longest = p.landscape_longest.max(name.split_whitespace().count());
                p.landscapes.insert(key);
            }
            p.areas.insert(fold_name(name), codes);
        }
        p
    })
}

/// The form by which a landscape is looked up: folded words, every word before the last
/// without its adjective ending ("Bayerischen Wald" and "Bayerischer Wald" are
/// "bayerisch wald").
fn landscape_key(folded: &str) -> String {
    let words: Vec<&str> = folded.split(' ').collect();
    let last = words.len().saturating_sub(1);
    words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let stem = ["en", "em", "er", "es", "e"]
                .iter()
                .find_map(|end| w.strip_suffix(end).filter(|s| s.len() >= 4));
            match stem {
                Some(s) if i < last => s,
                _ => w,
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Endings after a landscape's name in a compound that still names the place
/// ("Ostseeküste", "Harzregion"), folded.
const LANDSCAPE_COMPOUNDS: [&str; 3] = ["kuste", "region", "gebiet"];

/// How many of the leading `tokens` (whitespace-separated words; punctuation around a
/// word is ignored) name a landscape or district in Germany (`areas.tsv`: "Thüringer
/// Wald", "im Bayerischen Wald", "an der Ostseeküste", "the Black Forest"); 0 when they
/// name none. A place is no topic: "Wald" in "Thüringer Wald" does not make a glassworks
/// a forestry business, nor "Baltic" a fishery's business abroad.
pub fn landscape_words_at(tokens: &[&str]) -> usize {
    let p = places();
    let folded: Vec<String> = tokens
        .iter()
        .take(p.landscape_longest)
        .map(|t| fold_name(t.trim_matches(|c: char| !c.is_alphanumeric())))
        .take_while(|t| !t.is_empty())
        .collect();
    (1..=folded.len())
        .rev()
        .find(|&n| {
            let key = landscape_key(&folded[..n].join(" "));
            p.landscapes.contains(&key)
                || (n == 1
                    && LANDSCAPE_COMPOUNDS.iter().any(|end| {
                        key.strip_suffix(end)
                            .is_some_and(|head| p.landscapes.contains(head))
                    }))
        })
        .unwrap_or(0)
}

/// `text` without the landscapes and districts it names ([`landscape_words_at`]), its
/// other words joined by single spaces: the text a profile's topic is read from.
pub fn without_landscapes(text: &str) -> String {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let mut kept: Vec<&str> = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        match landscape_words_at(&tokens[i..]) {
            0 => {
                kept.push(tokens[i]);
                i += 1;
            }
            n => i += n,
        }
    }
    kept.join(" ")
}

fn data_lines(source: &'static str) -> impl Iterator<Item = &'static str> {
    source
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

/// Words: runs of letters and digits, with inner hyphens and apostrophes kept
/// ("Sachsen-Anhalt", "Baden-Württemberg").
fn words(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '\''))
        .map(|w| w.trim_matches(|c| c == '-' || c == '\''))
        .filter(|w| !w.is_empty())
        .collect()
}

/// The Länder (region codes, in order of first mention) that an organisation's texts
/// place it in; empty when they name none.
pub fn lands_in(text: &str) -> Vec<&'static str> {
    let p = places();
    let tokens = words(text);
    let lower: Vec<String> = tokens.iter().map(|t| t.to_lowercase()).collect();
    let located = |i: usize| {
        (i >= 1 && LOCATION_WORDS.contains(&lower[i - 1].as_str()))
            || (i >= 2 && lower[i - 1] == "of" && OF_WORDS.contains(&lower[i - 2].as_str()))
    };
    let mut found: Vec<&'static str> = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let (code, used) = match p.phrase_at(&tokens[i..], &lower[i..], located(i)) {
            Some((code, n)) => (Some(code), n),
            None => (p.word_at(tokens[i], &lower[i], located(i)), 1),
        };
        if let Some(code) = code.filter(|c| !found.contains(c)) {
            found.push(code);
        }
        i += used;
    }
    found
}

/// How many of the leading `tokens` (whitespace-separated words; punctuation around a
/// word is ignored) name a Land: its name or genitive, also of several words ("North
/// Rhine-Westphalia", "Sachsens"), a compound that starts with one ("Berlin-Neukölln"),
/// or its adjective ("bayerische", "rheinland-pfälzischen"); 0 when they name none.
/// Towns do not count. Matching leaves these words out of its lexical query: location
/// is the region component's job.
pub fn land_words_at(tokens: &[&str]) -> usize {
    let p = places();
    let trimmed: Vec<&str> = tokens
        .iter()
        .take(p.longest)
        .map(|t| t.trim_matches(|c: char| !c.is_alphanumeric()))
        .collect();
    if trimmed.first().is_none_or(|t| t.is_empty()) {
        return 0;
    }
    let lower: Vec<String> = trimmed.iter().map(|t| t.to_lowercase()).collect();
    if let Some((_, n)) = p.phrase_at(&trimmed, &lower, false) {
        return n;
    }
    usize::from(p.word_at(trimmed[0], &lower[0], false).is_some())
}

impl Places {
    /// The longest Land name, or town name when `located`, at the start of `tokens`:
    /// its code and number of words.
    fn phrase_at(
        &self,
        tokens: &[&str],
        lower: &[String],
        located: bool,
    ) -> Option<(&'static str, usize)> {
        let several = self.starts.contains(tokens[0]) || self.starts.contains(&lower[0]);
        let longest = if several { self.longest } else { 1 };
        (1..=longest.min(tokens.len())).rev().find_map(|n| {
            let (land, town) = if n == 1 {
                (self.land_names.get(&lower[0]), self.towns.get(tokens[0]))
            } else {
                (
                    self.land_names.get(&lower[..n].join(" ")),
                    self.towns.get(&tokens[..n].join(" ")),
                )
            };
            land.or(town.filter(|_| located)).map(|code| (*code, n))
        })
    }

    /// A single word that names a place without being a listed name: the first part of
    /// a compound ("Berlin-Neukölln", "in Leipzig-Grünau"), a town's adjective after a
    /// location word ("im Chemnitzer Norden"), or a Land's adjective ("bayerische").
    fn word_at(&self, token: &str, lower: &str, located: bool) -> Option<&'static str> {
        if let Some((head, _)) = token.split_once('-') {
            let land = self.land_names.get(&head.to_lowercase());
            let town = || self.towns.get(head).filter(|_| located);
            if let Some(code) = land.or_else(town) {
                return Some(*code);
            }
        }
        let adjective = token
            .strip_suffix("er")
            .and_then(|town| self.towns.get(town))
            .filter(|_| located);
        adjective.copied().or_else(|| land_of_adjective(lower))
    }
}

/// The Land of a German town named by `value` (any case, umlauts folded or not:
/// "Leipzig", "frankfurt am main", "Dusseldorf"), for a value that names a place on its
/// own (a profile's `regions`, a prompt's place after "in"); `None` for unknown or
/// ambiguous names ("Neustadt").
pub fn town_land(value: &str) -> Option<&'static str> {
    places()
        .towns_folded
        .get(&fold_name(value))
        .copied()
        .flatten()
}

/// Administrative words before a place's name in a profile's `regions` ("Landkreis
/// Uelzen", "the city of Mainz"), compared lower-cased word by word.
const ADMIN_PREFIXES: &[&str] = &[
    "landkreis",
    "kreis",
    "stadt",
    "hansestadt",
    "landeshauptstadt",
    "universitätsstadt",
    "kreisstadt",
    "gemeinde",
    "ortsgemeinde",
    "verbandsgemeinde",
    "samtgemeinde",
    "markt",
    "region",
    "metropolregion",
    "großraum",
    "raum",
    "bezirk",
    "stadtbezirk",
    "regierungsbezirk",
    "the",
    "greater",
    "city of",
    "town of",
    "county of",
    "district of",
    "region of",
    "municipality of",
];

/// Words after a place's name ("Unna district", "Hanover region").
const ADMIN_SUFFIXES: &[&str] = &["district", "county", "region", "area", "kreis"];

/// The regions (codes) a value of a profile's `regions` stands for when it is no region
/// of the vocabulary: a German town ("Leipzig", "Cologne"), a Land's other names ("NRW",
/// "Mecklenburg-Western Pomerania"), a district or landscape (`areas.tsv`: "Emsland",
/// "Ruhrgebiet"; one across Länder stands for each: "Eifel" → Rheinland-Pfalz and
/// Nordrhein-Westfalen), any of these after an administrative word ("Landkreis Uelzen",
/// "Kreis Unna", "Region Hannover"), the part of a town ("Berlin-Mitte", "Hamburg-Altona")
/// or a word for the whole country or the EU ("bundesweit" → `DE`). Empty when the value
/// names no place known here, or a town name found in several Länder ("Neustadt").
pub fn value_regions(value: &str) -> Vec<&'static str> {
    let p = places();
    let lookup = |v: &str| -> Vec<&'static str> {
        if let Some(code) = town_land(v) {
            return vec![code];
        }
        if let Some(codes) = p.areas.get(&fold_name(v)) {
            return codes.clone();
        }
        let key = words(v).join(" ").to_lowercase();
        p.land_names.get(&key).map(|c| vec![*c]).unwrap_or_default()
    };
    let found = lookup(value);
    if !found.is_empty() {
        return found;
    }
    let core = without_admin_words(value);
    let found = lookup(&core);
    if !found.is_empty() || core.is_empty() {
        return found;
    }
    // A compound's first part ("Berlin-Mitte"), a Land's name or adjective inside.
    lands_in(&format!("in {core}"))
}

/// `value` without the administrative words around a place's name.
fn without_admin_words(value: &str) -> String {
    let mut w: Vec<&str> = words(value);
    loop {
        let lower: Vec<String> = w.iter().map(|t| t.to_lowercase()).collect();
        let prefix = ADMIN_PREFIXES.iter().find_map(|a| {
            let a: Vec<&str> = a.split(' ').collect();
            (lower.len() > a.len() && lower[..a.len()] == a[..]).then_some(a.len())
        });
        if let Some(n) = prefix {
            w.drain(..n);
        } else if w.len() > 1 && ADMIN_SUFFIXES.contains(&lower[w.len() - 1].as_str()) {
            w.pop();
        } else {
            return w.join(" ");
        }
    }
}

/// The Land whose adjective `word` is ("bayerische", "sächsischen", "Saxon"), in any case,
/// umlauts folded or not.
pub fn land_of_adjective(word: &str) -> Option<&'static str> {
    let folded = fold_name(word);
    places()
        .land_stems
        .iter()
        .find(|(stem, _)| folded.starts_with(stem.as_str()))
        .map(|(_, code)| *code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn land_words_are_names_genitives_compounds_and_adjectives_not_towns() {
        let at = |text: &str| {
            let tokens: Vec<&str> = text.split_whitespace().collect();
            land_words_at(&tokens)
        };
        assert_eq!(at("Rheinland-Pfalz, mit 9 Hektar"), 1);
        assert_eq!(at("(Baden-Württemberg) mit"), 1);
        assert_eq!(at("North Rhine-Westphalia is"), 2);
        assert_eq!(at("Sachsens Kommunen"), 1);
        assert_eq!(at("bayerischer Handwerksbetrieb"), 1);
        assert_eq!(at("rheinland-pfälzischen Weinbau"), 1);
        assert_eq!(at("Berlin-Neukölln"), 1);
        assert_eq!(at("Leipzig"), 0);
        assert_eq!(at("Weinbau an der Mosel"), 0);
        assert_eq!(at("– Sachsen"), 0);
        assert_eq!(at(""), 0);
    }

    #[test]
    fn region_values_name_towns_districts_landscapes_and_the_country() {
        for (value, codes) in [
            ("NRW", &["DE-NW"][..]),
            ("Mecklenburg-Western Pomerania", &["DE-MV"]),
            ("Cologne", &["DE-NW"]),
            ("Landkreis Uelzen", &["DE-NI"]),
            ("Kreis Unna", &["DE-NW"]),
            ("Region Hannover", &["DE-NI"]),
            ("the city of Mainz", &["DE-RP"]),
            ("Berlin-Mitte", &["DE-BE"]),
            ("Hamburg-Altona", &["DE-HH"]),
            ("Landkreis Vorpommern-Greifswald", &["DE-MV"]),
            ("Emsland", &["DE-NI"]),
            ("Ruhrgebiet", &["DE-NW"]),
            ("Landkreis Vulkaneifel", &["DE-RP"]),
            ("Eifel", &["DE-RP", "DE-NW"]),
            ("bundesweit", &["DE"]),
            ("Europäische Union", &["EU"]),
        ] {
            assert_eq!(value_regions(value), codes, "{value}");
        }
        for unknown in ["Neustadt", "Atlantis", "Vereinsheim", "Landkreis"] {
            assert!(value_regions(unknown).is_empty(), "{unknown}");
        }
    }

    #[test]
    fn land_names_count_anywhere_in_german_and_english() {
        assert_eq!(lands_in("Sportverein im ländlichen Sachsen"), ["DE-SN"]);
        assert_eq!(lands_in("Wir sind in Sachsen-Anhalt tätig"), ["DE-ST"]);
        assert_eq!(lands_in("a farm in Lower Saxony"), ["DE-NI"]);
        assert_eq!(lands_in("near Leisnig in central Saxony"), ["DE-SN"]);
        assert_eq!(lands_in("die Wirtschaft Thüringens"), ["DE-TH"]);
        assert_eq!(
            lands_in("ein bayerischer Handwerksbetrieb, aktiv in Berlin"),
            ["DE-BY", "DE-BE"]
        );
        assert_eq!(lands_in("a Bavarian brewery"), ["DE-BY"]);
    }

    #[test]
    fn towns_count_after_a_location_word_or_in_the_name() {
        assert_eq!(lands_in("Bäckerei mit drei Filialen in Leipzig"), ["DE-SN"]);
        assert_eq!(lands_in("Wir kommen aus Merseburg."), ["DE-ST"]);
        assert_eq!(lands_in("a start-up based in Kiel"), ["DE-SH"]);
        assert_eq!(lands_in("the city of Mainz"), ["DE-RP"]);
        assert_eq!(lands_in("Sitz in Frankfurt am Main"), ["DE-HE"]);
        assert_eq!(lands_in("ein Verein im Chemnitzer Norden"), ["DE-SN"]);
        assert_eq!(lands_in("an association in Berlin-Neukölln"), ["DE-BE"]);
        // Without a location word a town in a name does not count ("Hof", "Berg").
        assert!(lands_in("Hof Wessels GbR. Milchhof van der Berg GbR").is_empty());
        // A town named like a word counts only after a location word.
        assert!(lands_in("Essen auf Rädern für Senioren").is_empty());
        assert_eq!(lands_in("Tafel in Essen"), ["DE-NW"]);
    }

    #[test]
    fn a_value_that_names_a_town_gives_its_land() {
        assert_eq!(town_land("Leipzig"), Some("DE-SN"));
        assert_eq!(town_land("frankfurt am main"), Some("DE-HE"));
        assert_eq!(town_land("Düsseldorf"), Some("DE-NW"));
        assert_eq!(town_land("dusseldorf"), Some("DE-NW"));
        assert_eq!(town_land("Neustadt"), None);
        assert_eq!(town_land("Atlantis"), None);
        assert_eq!(land_of_adjective("sachsischen"), Some("DE-SN"));
        assert_eq!(land_of_adjective("Niedersächsische"), Some("DE-NI"));
    }

    #[test]
    fn landscapes_are_left_out_of_a_topic() {
        for (text, topic) in [
            (
                "Glasbläserei in Lauscha im Thüringer Wald.",
                "Glasbläserei in Lauscha im",
            ),
            ("ein Hof im Bayerischen Wald", "ein Hof im"),
            (
                "Hotel an der Ostseeküste (Mecklenburg-Vorpommern)",
                "Hotel an der (Mecklenburg-Vorpommern)",
            ),
            (
                "a fishery on the Baltic coast of Mecklenburg",
                "a fishery on the of",
            ),
            ("a sawmill in the Black Forest.", "a sawmill in the"),
            ("Weingut an der Mosel", "Weingut an der"),
        ] {
            assert_eq!(without_landscapes(text), topic, "{text}");
        }
        // Words that only contain or start like a landscape, the Länder and the words for
        // the whole country stay.
        for text in [
            "Waldschwimmbad und Waldkindergarten",
            "Forst und Wald",
            "Mecklenburg-Vorpommern und Sachsen",
            "bundesweit tätig",
            "Ostseefischerei",
        ] {
            assert_eq!(without_landscapes(text), text, "{text}");
        }
    }

    #[test]
    fn no_place_no_land() {
        assert!(lands_in("Musterfirma GmbH. Wir bauen Software.").is_empty());
        assert!(lands_in("bundesweit tätig, Sitz in Deutschland").is_empty());
        // An ambiguous town name ("Neustadt") is not in the list.
        assert!(lands_in("ein Verein in Neustadt").is_empty());
    }
}

//! The farm animals a programme is restricted to, read from the condition of its teaser
//! ("Wenn Sie als landwirtschaftlicher Betrieb in der Schweinehaltung …", "Wenn Sie in
//! Ihrem landwirtschaftlichen Betrieb Rinder oder Schweine tiergerecht halten, …"), and
//! the animals a profile's texts say the farm keeps. A programme for pig farming does not
//! serve a dairy farm; a profile that names no animals is never told it does not fit.

use std::sync::OnceLock;

use regex::Regex;
use serde::Serialize;

use super::kind::Read;
use super::sector::re;
use crate::model::Grant;

/// A kind of farm animal a programme may be restricted to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Livestock {
    Pigs,
    Cattle,
    Poultry,
    SheepAndGoats,
}

impl Livestock {
    const ALL: [Livestock; 4] = [
        Livestock::Pigs,
        Livestock::Cattle,
        Livestock::Poultry,
        Livestock::SheepAndGoats,
    ];

    /// German label for reasons ("Schweinehaltung").
    pub fn label_de(self) -> &'static str {
        match self {
            Livestock::Pigs => "Schweinehaltung",
            Livestock::Cattle => "Rinderhaltung",
            Livestock::Poultry => "Geflügelhaltung",
            Livestock::SheepAndGoats => "Schaf- und Ziegenhaltung",
        }
    }

    /// English label for reasons ("pig farming").
    pub fn label_en(self) -> &'static str {
        match self {
            Livestock::Pigs => "pig farming",
            Livestock::Cattle => "cattle farming",
            Livestock::Poultry => "poultry farming",
            Livestock::SheepAndGoats => "sheep and goat farming",
        }
    }

    /// The German words of a programme's condition that name the animal ("Schweine",
    /// "Schweinehaltung", "Milchvieh").
    fn programme_words(self) -> &'static Regex {
        &Self::words()[self as usize].0
    }

    /// The words by which a profile (German or English) says the farm keeps the animal.
    fn profile_words(self) -> &'static Regex {
        &Self::words()[self as usize].1
    }

    /// Per animal (in [`Livestock::ALL`] order): the programme's words, the profile's.
    fn words() -> &'static [(Regex, Regex)] {
        static R: OnceLock<Vec<(Regex, Regex)>> = OnceLock::new();
        R.get_or_init(|| {
            [
                (
                    r"schwein|\bsauen|ferkel",
                    r"schwein|\bsauen|ferkel|\bpigs?\b|piglet|\bsows?\b|\bhogs?\b|swine",
                ),
                (
                    r"\brind|milchvieh|milchküh|milchkuh|mutterküh|\bkühe|kälber",
                    r"\brind|milchvieh|milchküh|milchkuh|mutterküh|\bkühe|\bkuh\b|kälber|\bcows?\b|cattle|\bcalves\b|\bdairy (farm|herd|cows|cattle)|\bherd of\b|milchhof|milchbetrieb|milcherzeug|milchviehbetrieb",
                ),
                (
                    r"geflügel|legehenn|\bhühner|masthühn|\bputen|\bgänse|\benten\b",
                    r"geflügel|legehenn|\bhühner|masthühn|\bputen|\bgänse|\benten\b|poultry|chickens?\b|\bhens\b|broiler|turkeys",
                ),
                (
                    r"\bschaf(e|en|haltung|zucht)?\b|\bziege",
                    r"\bschaf(e|en|haltung|zucht)?\b|\bziege|\bsheep\b|\bgoats?\b|\blambs?\b",
                ),
            ]
            .into_iter()
            .map(|(programme, profile)| (re(programme), re(profile)))
            .collect()
        })
    }
}

/// The animals the condition of a programme's teaser restricts it to: the first sentence
/// of the short description (or the title) names keeping animals ("…haltung", "halten")
/// and the animals kept. The sentence is the evidence.
pub fn of_programme(grant: &Grant) -> Option<Read<Vec<Livestock>>> {
    static KEEPING: OnceLock<Regex> = OnceLock::new();
    let keeping = KEEPING.get_or_init(|| re(r"haltung|\bhalten\b|\bhält\b"));
    let short = grant.short_description.as_deref().unwrap_or("");
    let first = short.split_inclusive(". ").next().unwrap_or("");
    [first, grant.title.as_str()]
        .into_iter()
        .filter(|s| keeping.is_match(s))
        .find_map(|s| {
            let kinds: Vec<Livestock> = Livestock::ALL
                .into_iter()
                .filter(|k| k.programme_words().is_match(s))
                .collect();
            (!kinds.is_empty()).then(|| Read {
                value: kinds,
                sentence: Some(s.trim().to_string()),
            })
        })
}

/// The animals a profile's texts say the organisation keeps.
pub fn in_profile(text: &str) -> Vec<Livestock> {
    Livestock::ALL
        .into_iter()
        .filter(|k| k.profile_words().is_match(text))
        .collect()
}

/// A programme for some animals, for a profile that names animals but none of these.
pub fn misfit(programme: &[Livestock], profile: &[Livestock]) -> bool {
    !programme.is_empty() && !profile.is_empty() && !programme.iter().any(|k| profile.contains(k))
}

#[cfg(test)]
mod tests {
    use super::Livestock::*;
    use super::*;
    use crate::facts::test_grant as grant;

    /// Shortened from "Förderung des Umbaus der Tierhaltung 2024 bis 2030" and "T(h)ür
    /// Tierwohl": the teaser's condition names the animals.
    #[test]
    fn a_teaser_names_the_animals_it_is_for() {
        let pigs = grant(
            "Förderung des Umbaus der Tierhaltung 2024 bis 2030 – Investive Vorhaben",
            "Wenn Sie als landwirtschaftlicher Betrieb in der Schweinehaltung Ihre vorhandenen Ställe zu tierwohlgerechten Ställen umbauen möchten, können Sie einen Zuschuss erhalten. Rinder folgen später.",
            "subsidy",
        );
        let read = of_programme(&pigs).unwrap();
        assert_eq!(read.value, vec![Pigs]);
        assert!(read.sentence.unwrap().contains("Schweinehaltung"));
        let both = grant(
            "T(h)ür Tierwohl",
            "Wenn Sie in Ihrem landwirtschaftlichen Betrieb Rinder oder Schweine tiergerecht halten, können Sie einen Zuschuss bekommen.",
            "subsidy",
        );
        assert_eq!(of_programme(&both).unwrap().value, vec![Pigs, Cattle]);
        // Animals named without keeping them, and keeping without animals, restrict
        // nothing.
        for (title, short) in [
            ("Landwirtschaft – Nachhaltigkeit", "Wenn Sie Investitionen planen, um Ihre Tierhaltung zu verbessern, können Sie einen Zuschuss erhalten."),
            ("Demonstrationsvorhaben Tierschutz", "Wenn Sie Erkenntnisse zum Wohl von Schweinen in die Praxis bringen, können Sie einen Zuschuss erhalten."),
            ("Wohnraumförderung", "Wenn Sie Mietwohnraum schaffen, können Sie ein Darlehen erhalten."),
        ] {
            assert!(of_programme(&grant(title, short, "subsidy")).is_none(), "{title}");
        }
    }

    #[test]
    fn a_profile_names_the_animals_it_keeps() {
        assert_eq!(in_profile("Milchviehbetrieb mit 120 Kühen"), vec![Cattle]);
        assert_eq!(
            in_profile("a dairy farm with 90 cows in Saxony"),
            vec![Cattle]
        );
        assert_eq!(
            in_profile("Wir halten Sauen und Legehennen"),
            vec![Pigs, Poultry]
        );
        assert_eq!(
            in_profile("a flock of sheep and goats"),
            vec![SheepAndGoats]
        );
        // "schaffen" is no sheep, a dairy product no herd, a Kuhle no cow.
        for text in [
            "Wir wollen Arbeitsplätze schaffen",
            "Wir verkaufen Käse und Milchprodukte",
            "Ausflugslokal an der Kuhle",
            "ein Ackerbaubetrieb mit Weizen und Raps",
        ] {
            assert!(in_profile(text).is_empty(), "{text}");
        }
        assert!(misfit(&[Pigs], &[Cattle]));
        assert!(!misfit(&[Pigs, Cattle], &[Cattle]));
        assert!(
            !misfit(&[Pigs], &[]),
            "a profile that names no animals is no stranger"
        );
    }
}

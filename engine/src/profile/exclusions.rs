//! What a profile says it does not want: "Das Geld ist nicht für Forschung", "Eine
//! Beratung brauchen wir nicht", "purely for travelling, not for an internship, research
//! or volunteering", "we do not plan any construction". An advisor reads such a clause
//! as an exclusion; the embedding and the lexical query would read its words as the
//! topic. The clauses are cut out of the texts the topic is read from (query vector,
//! needs, lexical query, research, sectors); instruments, places and the applicant are
//! read from the whole text, whose own rules know their refusals.
//!
//! Narrower than a qualification prompt's exclusions ([`crate::qualify`]): a prompt is
//! written as rules, a profile describes a situation, where "keine" and "no" often name
//! what is missing and so what is wanted ("Wir haben keine Küche", "we have no heat
//! pump yet"). Only a negated wish or activity, "nicht für/um", "neither … nor",
//! "except" and a negated plan after the topic count; a clause that names a loan, a
//! guarantee or equity is left to the funding-type rules ("Kredite möchten wir nach Möglichkeit
//! nicht aufnehmen" is a wish, not a refusal, and the loans stay topic).

use std::ops::Range;
use std::sync::OnceLock;

use regex::Regex;

fn re(p: &str) -> Regex {
    Regex::new(&format!("(?i){p}")).expect("valid exclusion rule")
}

/// Words of a wish or an activity in a profile, German and English.
const WISH_DE: &str = "suchen|brauchen|benötigen|wollen|möchten|planen|beantragen|betreiben|machen|durchführen|streben|wünschen|suche|brauche|benötige|will|möchte|plane|beantrage|betreibe|mache|wünsche";
// Not "run", "cover" or "include": "the boiler does not run efficiently", "the hall
// does not include an accessible toilet" describe a problem, which is topic.
const WISH_EN: &str = "want|need|plan|seek|look|intend|wish|do|conduct|carry|apply|require|pursue";

/// Cues after which the clause is excluded: "nicht für …", "wir suchen keine …",
/// "we do not want …", "neither …", "except …". Not "instead of" or "anstatt": they
/// name what a plan replaces ("a heat pump instead of the oil boiler"), which is topic;
/// nor "außer" or "apart from", which mostly mean "besides".
fn forward() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        re(&format!(
            r"(?-u:\b)(nicht (für|um|zur|zum)(?-u:\b)|({WISH_DE}) (wir |ich )?(\w+ ){{0,2}}?(?P<from>kein(e|en|er|em)?)(?-u:\b)|weder(?-u:\b)|ausgenommen(?-u:\b)|not (for|about|into|towards?|to (fund|finance|pay for))(?-u:\b)|(do|does|did|will|would|are|is|am|wo|'re|’re|'m|’m)(n't|n’t| not) ({WISH_EN})\w*|no (interest in|plans? (to|for)|need for|intention)(?-u:\b)|not interested in(?-u:\b)|(?P<lack>kein(en)? (interesse|bedarf) (an|für))(?-u:\b)|(do|does|conduct|conducts|carry out|carries out|perform|performs) no(?-u:\b)|neither(?-u:\b)|except(?-u:\b)|excluding(?-u:\b))"
        ))
    })
}

/// Cues that exclude their whole clause, topic first: "Forschung betreiben wir nicht",
/// "Ein Neubau ist nicht geplant", "construction is not planned".
fn whole_clause() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        re(&format!(
            r"(?-u:\b)(({WISH_DE}) (wir|ich) (\w+ ){{0,3}}?nicht(?-u:\b)|nicht (geplant|vorgesehen|gewünscht|gesucht|beabsichtigt) (ist|sind|wird|werden)(?-u:\b)|(ist|sind|wird|werden|kommt|kommen|steht|stehen) (für uns |bei uns |dabei )?(ausdrücklich )?(nicht|kein|keine|keinen) (geplant|vorgesehen|in frage|infrage|thema|teil|gewünscht|gesucht|ziel|gegenstand|beabsichtigt|nötig|notwendig|erforderlich)|(is|are)(n't|n’t| not) (planned|an option|needed|required|part of|our (focus|aim|goal)|what we|wanted|sought|of interest|intended))"
        ))
    })
}

/// "nicht nur …, sondern auch", "not only … but also", "Künftig wollen wir nicht mehr
/// mit Öl heizen": a negation followed by "only" or "no longer" excludes nothing (the
/// change it describes is topic).
fn only_follows(sentence: &str, at: usize) -> bool {
    let rest = sentence[at..].trim_start().to_lowercase();
    [
        "nur ", "bloß ", "mehr ", "länger ", "only ", "just ", "merely ",
    ]
    .iter()
    .any(|w| rest.starts_with(w))
}

/// Where an excluded clause ends: a contrast ("sondern", "but", "aber"), a semicolon, or
/// a comma before a new subject ("…, wir wollen investieren").
fn clause_end() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        re(r"(,? (sondern|aber|jedoch|but|however|instead)(?-u:\b)|;|, (wir|ich|es|unser\w*|we|i|it|our|they|sie) )")
    })
}

/// Where a clause starts, looking back from a whole-clause cue: after a comma or a
/// semicolon.
fn clause_start(sentence: &str, cue: usize) -> usize {
    sentence[..cue].rfind([',', ';']).map_or(0, |i| i + 1)
}

/// The byte ranges of `sentence` that are excluded. A clause ends at [`clause_end`] or
/// before the sentence's final punctuation.
fn excluded_in(sentence: &str) -> Vec<Range<usize>> {
    let body = sentence
        .trim_end_matches(|c: char| matches!(c, '.' | '!' | '?') || c.is_whitespace())
        .len();
    let end_from = |from: usize| {
        clause_end()
            .find_at(&sentence[..body], from.min(body))
            .map_or(body, |m| m.start())
    };
    let mut out: Vec<Range<usize>> = Vec::new();
    for c in forward().captures_iter(sentence) {
        let whole = c.get(0).expect("match");
        let from = c
            .name("from")
            .or_else(|| c.name("lack"))
            .map_or(whole.start(), |m| m.start());
        let range = from..end_from(whole.end()).max(from);
        if !describes_a_need(&sentence[..from], &sentence[range.clone()]) {
            out.push(range);
        }
    }
    for m in whole_clause().find_iter(sentence) {
        if only_follows(sentence, m.end()) {
            continue;
        }
        let start = clause_start(sentence, m.start());
        out.push(start..end_from(m.end()).max(start));
    }
    out
}

/// A negation that states a need, not an exclusion: what the money does not suffice for
/// ("Unsere Rücklagen reichen nicht für die Sanierung"), what should no longer happen
/// ("Wir wollen keine Kinder mehr abweisen") or what a building is not fit for ("Die Halle
/// ist nicht für Rollstuhlfahrer zugänglich", "nicht für den Dauerbetrieb ausgelegt").
fn describes_a_need(before: &str, clause: &str) -> bool {
    static R: OnceLock<[Regex; 3]> = OnceLock::new();
    let [enough, no_longer, unfit] = R.get_or_init(|| {
        [
            re(r"(reich|genüg|langt|langen)\w*\s+(\w+\s+){0,2}$"),
            re(r"(?-u:\b)(mehr|länger|any more|anymore|any longer)(?-u:\b)"),
            re(r"^nicht (für|um|zur|zum) .*(lich|bar|net|legt|fähig|reichend|genug|groß|klein)$"),
        ]
    });
    enough.is_match(before) || no_longer.is_match(clause) || unfit.is_match(clause)
}

/// The clause names a loan, a guarantee or equity: the funding-type rules read it.
fn names_repayable(clause: &str) -> bool {
    crate::text::fold_name(clause).split(' ').any(|w| {
        crate::qualify::grant_type_of_word(w).is_some_and(|t| t != crate::model::GrantType::Subsidy)
    })
}

/// The text without the clauses it excludes, and those clauses. Sentences end at `.`,
/// `!`, `?` or a line break.
pub fn strip(text: &str) -> (String, Vec<String>) {
    let mut kept = String::with_capacity(text.len());
    let mut excluded = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if matches!(b, b'.' | b'!' | b'?' | b'\n') || i + 1 == bytes.len() {
            strip_sentence(&text[start..=i], &mut kept, &mut excluded);
            start = i + 1;
        }
    }
    (kept, excluded)
}

fn strip_sentence(sentence: &str, kept: &mut String, excluded: &mut Vec<String>) {
    let mut ranges = excluded_in(sentence);
    if ranges.is_empty() {
        kept.push_str(sentence);
        return;
    }
    ranges.sort_by_key(|r| r.start);
    let mut at = 0;
    for r in ranges {
        let r = r.start.max(at)..r.end.max(at);
        if r.is_empty() || names_repayable(&sentence[r.clone()]) {
            continue;
        }
        kept.push_str(&sentence[at..r.start]);
        let cut = sentence[r.clone()].trim_matches(|c: char| c == ',' || c.is_whitespace());
        if !cut.is_empty() {
            excluded.push(cut.to_string());
        }
        at = r.end;
    }
    kept.push_str(&sentence[at..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(t: &str) -> (String, Vec<String>) {
        strip(t)
    }

    #[test]
    fn negated_wishes_and_purposes_are_cut() {
        let (kept, ex) = cut(
            "We want money purely for travelling, not for an internship, research or volunteering.",
        );
        assert_eq!(kept, "We want money purely for travelling, .");
        assert_eq!(ex, ["not for an internship, research or volunteering"]);

        let (kept, ex) =
            cut("Wir suchen keine Forschungsförderung, sondern einen Zuschuss für die Halle.");
        assert_eq!(ex, ["keine Forschungsförderung"]);
        assert!(kept.contains("sondern einen Zuschuss für die Halle"));

        // Each sentence and the one clause it excludes.
        for (text, excluded) in [
            (
                "Das Geld ist nicht für Personalkosten gedacht.",
                "nicht für Personalkosten gedacht",
            ),
            (
                "Ein Neubau ist nicht geplant, wir sanieren das Vereinsheim.",
                "Ein Neubau ist nicht geplant",
            ),
            (
                "We do not plan any construction; we need staff training.",
                "do not plan any construction",
            ),
            (
                "Wir haben kein Interesse an Forschungsprojekten, aber an einer Halle.",
                "kein Interesse an Forschungsprojekten",
            ),
            (
                "Nicht geplant ist ein Neubau.",
                "Nicht geplant ist ein Neubau",
            ),
            (
                "We're not looking for research funding, we need a new roof.",
                "'re not looking for research funding",
            ),
            (
                "I’m not planning to hire staff.",
                "’m not planning to hire staff",
            ),
            (
                "We are not interested in export promotion.",
                "not interested in export promotion",
            ),
            (
                "Forschungsförderung oder Bauzuschüsse brauche ich nicht.",
                "Forschungsförderung oder Bauzuschüsse brauche ich nicht",
            ),
            (
                "Weder Forschung noch Beratung kommen für uns in Betracht.",
                "Weder Forschung noch Beratung kommen für uns in Betracht",
            ),
        ] {
            assert_eq!(cut(text).1, [excluded], "{text}");
        }

        let (kept, ex) = cut("Forschung betreiben wir nicht. Wir wollen eine Wärmepumpe kaufen.");
        assert_eq!(ex, ["Forschung betreiben wir nicht"]);
        assert!(kept.contains("Wärmepumpe"));
    }

    #[test]
    fn a_situation_or_a_change_is_no_exclusion() {
        for t in [
            "Wir haben keine eigene Küche und möchten eine bauen.",
            "We have no heat pump yet.",
            "Weil viele Grundschulkinder nicht schwimmen können, möchten wir Schwimmkurse anbieten.",
            "Since the quotas were cut, fishing alone no longer pays.",
            "Wir wollen nicht nur sanieren, sondern auch erweitern.",
            "Dafür wollen wir nicht nur Geräte kaufen, sondern auch Personal schulen.",
            "We do not only sell, we also repair.",
            "Der Kurs findet in der Werkstatt statt.",
            "Wir haben bisher keine Förderung erhalten.",
            "We want to sell sawn timber instead of raw logs.",
            "Kredite möchten wir nach Möglichkeit nicht aufnehmen.",
            "Künftig wollen wir nicht mehr mit Öl heizen.",
            "Unsere Rücklagen reichen nicht für die Sanierung des Daches.",
            "Das Geld reicht leider nicht für neue Geräte.",
            "Wir wollen keine Kinder mehr abweisen müssen.",
            "Die Halle ist nicht für Rollstuhlfahrer zugänglich.",
            "Die Heizung ist nicht für den Dauerbetrieb ausgelegt.",
            "Der Raum ist nicht für größere Gruppen geeignet.",
            "Außer Fußball bieten wir Leichtathletik an.",
            "Apart from football we offer athletics.",
            "Our old boiler does not run efficiently.",
            "The hall does not include an accessible toilet.",
            "Wir suchen keine Kredite.",
        ] {
            let (kept, ex) = cut(t);
            assert!(ex.is_empty(), "{t}: {ex:?}");
            assert_eq!(kept, t);
        }
    }

    #[test]
    fn every_sentence_is_kept_in_order() {
        let t = "Erster Satz. Zweiter Satz! Dritter?\nVierter ohne Punkt";
        assert_eq!(cut(t).0, t);
        assert_eq!(cut("").0, "");
    }
}

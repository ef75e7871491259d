//! Programmes for founding or taking over a business, or for its first years
//! ("ERP-Gründerkredit – StartGeld", "Startfinanzierung 80", "Wenn Sie sich selbstständig
//! machen wollen, …"), and whether a profile speaks of founding, taking over or a young
//! business. Such a programme is a kind misfit for an organisation that does neither: a
//! family-owned die-caster with 260 employees gets no start-up loan.
//!
//! The programme side is read from the title, else from the condition of the teaser (the
//! clause before "können Sie" / "kann"), and only when nothing there names an
//! established business as well ("gründen oder in Ihr bestehendes Unternehmen
//! investieren", "Gründungs- und Wachstumsfinanzierung", "als Existenzgründer oder
//! kleines oder mittleres Unternehmen"). The profile side is read generously: a profile
//! that mentions founding, succession or a young company at all keeps these programmes.

use std::sync::OnceLock;

use regex::Regex;

use super::sector::re;
use super::Fact;
use crate::facts::Source;
use crate::model::Grant;

/// Words of a title that name founding, succession or the start-up phase.
fn title_founding() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        re(r"gründung|gründer|gründen|start-?ups?\b|startgeld|startfinanzierung|startkapital|starter|seed|nachfolge|jungunternehm|junge (innovatoren|unternehmen)")
    })
}

/// Words of a title or condition that name what an established business does too:
/// growth, investment, running something, research infrastructure.
fn established() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        re(r"wachstum|wachsen|investition|investieren|betrieb|infrastruktur|validierung|bestehend|etabliert|existierend|mittler|\bkmu\b|expandier|freiberuf|freien beruf|angehörig|kommune|träger|kammer|abgeschlossen|ihre[nrms]? (praxis|apotheke|unternehmen|betrieb)|unterstützen|betreuen|beraten|beteiligen")
    })
}

/// Founding cues of a teaser's condition.
fn condition_founding() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        re(r"unternehmen (gründen|übernehmen)|gründen|gegründet|existenzgründ|gründer|selbstständig mach|selbständig mach|sprung in die selbstständigkeit|start-?up|junge[sn]? unternehmen|neu gegründet")
    })
}

/// The condition of a teaser: the clause before "können Sie", "kann" or "dann".
fn condition(teaser: &str) -> Option<&str> {
    let t = teaser.trim_start();
    if !(t.starts_with("Wenn ") || t.starts_with("Als ")) {
        return None;
    }
    let end = [", können", ", kann", ", dann", " können Sie"]
        .iter()
        .filter_map(|m| t.find(m))
        .min()?;
    Some(&t[..end])
}

/// `Some` (value `true`, with the title or the condition as evidence) when the programme
/// is for founding or taking over a business or for its first years only.
pub fn founding(grant: &Grant) -> Option<Fact<bool>> {
    let title = grant.title.as_str();
    let read = |evidence: &str| Fact {
        value: true,
        source: Source::Text,
        evidence: Some(evidence.to_string()),
    };
    if title_founding().is_match(title) {
        return (!established().is_match(title)).then(|| read(title));
    }
    let cond = grant.short_description.as_deref().and_then(condition)?;
    (condition_founding().is_match(cond) && !established().is_match(cond)).then(|| read(cond))
}

/// The profile's texts speak of founding, taking over or succession, or of a young
/// business ("in Gründung", "we want to take over the bakery", "Nachfolge",
/// "start-up", "self-employed").
pub fn in_profile(text: &str) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        re(r"gründ(en|ung|ungen|e|er|erin|erinnen)\b|gründungs|existenzgründ|übernahme|übernehme\b|(betrieb|firma|unternehmen|praxis|hof|geschäft|laden|werkstatt|kanzlei|apotheke)\S* (zu )?übernehmen|nachfolge|start-?up|startup|spin-?offs?\b|selbstständig|selbständig|junge[sns]? (unternehmen|firma|betrieb)|neu gegründet|found(ing|er|ers|ed a)\b|\bto found\b|set(ting)? up (a|an|my|our|her|his|the) (own )?(business|company|firm|shop|practice)|take over|taking over|takeover|succession|successor|self-employ|young (company|business|firm)|newly founded|recently founded|new business|in formation")
    })
    .is_match(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::test_grant;

    fn founding_of(title: &str, short: &str) -> bool {
        founding(&test_grant(title, short, "loan")).is_some()
    }

    #[test]
    fn founding_programmes_by_title_or_condition() {
        let cases = [
            ("ERP-Gründerkredit – StartGeld", "", true),
            ("Startfinanzierung 80", "", true),
            ("Gründungszuschuss", "", true),
            ("Beteiligungskapital der Bayern Kapital – Seedfonds", "", true),
            ("Beteiligungen zur Unternehmensnachfolge", "", true),
            // Founding next to growth, investment or running a thing.
            ("Gründungs- und Wachstumsfinanzierung – GuW Thüringen", "", false),
            ("Förderung der Gründung und des Betriebs von Energieagenturen", "", false),
            ("Förderrichtlinie Landwirtschaft, Investition, Existenzgründung – FRL LIE/2023", "", false),
            // A green roof is no founding.
            ("GründachPLUS", "", false),
            // The condition of the teaser.
            ("Bürgschaft Direkt (BoB)", "Wenn Sie sich selbstständig machen wollen und Ihnen die nötigen Sicherheiten fehlen, kann die ISB eine Bürgschaft übernehmen.", true),
            ("Darlehen für den Mittelstand – Mikrodarlehen", "Wenn Sie in Sachsen ein Unternehmen gründen oder übernehmen wollen, können Sie unter bestimmten Voraussetzungen ein Darlehen erhalten.", true),
            ("Förderung des Mittelstands durch Darlehen", "Wenn Sie ein Unternehmen gründen oder in Ihr bestehendes Unternehmen investieren, können Sie ein Darlehen erhalten.", false),
            ("Bürgschaften der Bürgschaftsbank Thüringen", "Wenn Sie als Existenzgründer und Existenzgründerin oder als kleines oder mittleres Unternehmen einen Kredit brauchen, kann die Bank bürgen.", false),
            ("Berlin Start", "Wenn Sie ein kleines oder und mittleres Unternehmen in Berlin gründen oder festigen möchten, können Sie ein Darlehen erhalten.", false),
            // "übernehmen" after the condition is the bank's guarantee, not a takeover.
            ("Bürgschaften der LfA", "Wenn Sie nicht über ausreichende Sicherheiten für Ihren Kredit verfügen, kann die LfA Förderbank Bayern eine Bürgschaft übernehmen.", false),
            ("Investitionszuschuss", "Wenn Sie investieren wollen, können Sie einen Zuschuss erhalten.", false),
        ];
        for (title, short, want) in cases {
            assert_eq!(founding_of(title, short), want, "{title}");
        }
    }

    #[test]
    fn profiles_that_found_take_over_or_are_young() {
        for t in [
            "Naht & Wert – Upcycling-Atelier (in Gründung)",
            "Ich möchte mich mit einer Kaffeerösterei selbstständig machen.",
            "Die Nachfolge in der Geschäftsführung steht 2027 an.",
            "We want to take over the bakery of our former employer.",
            "A start-up developing sensors.",
            "Kiezrad – cargo bike workshop (in formation)",
            "Ein Geselle könnte den Betrieb übernehmen.",
            "Zum 1. April übernehme ich die Praxis.",
            "Zwei Doktoranden planen eine Ausgründung; wir begleiten Ausgründungen.",
            "Two postdocs plan a spin-off.",
        ] {
            assert!(in_profile(t), "{t}");
        }
        for t in [
            "Familiengeführter Aluminium-Druckgießer mit 260 Beschäftigten.",
            "A family-owned manufacturer with 260 employees.",
            "Wir sind ein Sportverein mit 400 Mitgliedern.",
            // Taking on a task is no takeover of a business.
            "Kasse und Pflege der Anlage übernehmen fast nur Ehrenamtliche.",
            "Wir übernehmen die Kosten der Kurse.",
        ] {
            assert!(!in_profile(t), "{t}");
        }
    }
}

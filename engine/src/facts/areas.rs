//! Grant areas read from a programme's title and short description: a lexicon of words
//! and phrases per top-level Förderbereich, built from the area taxonomy and the titles
//! of the labelled programmes (the source labels areas at the top level), plus the
//! grant type (loans, guarantees and equity are company financing).

use std::sync::OnceLock;

use regex::Regex;

use crate::catalogue::{Catalogue, Idx};
use crate::model::{Grant, GrantType};

/// (area code, pattern over title and short description, case-insensitive).
const LEXICON: &[(&str, &str)] = &[
    (
        "arbeit",
        r"arbeitsplätze|arbeitslos|beschäftigung|arbeitsmarkt|fachkräfte|arbeitsschutz|arbeitnehmer|erwerbsleben|erwerbstätig",
    ),
    (
        "aus_weiterbildung",
        r"ausbildung|weiterbildung|qualifizierung|berufsorientierung|auszubildende|lehrling|meisterbonus|studium|studierende|stipendi|berufliche bildung|berufsbildung",
    ),
    (
        "aussenwirtschaft",
        r"export|auslandsmärkt|internationalisierung|markterschließung|entwicklungszusammenarbeit|entwicklungsländer|schwellenländer|außenwirtschaft",
    ),
    ("beratung", r"beratung|coaching|berater"),
    ("corona", r"corona|covid|pandemie"),
    (
        "digitalisierung",
        r"digital|software|künstliche[nr]? intelligenz|\bki\b|breitband|it-sicherheit|cyber|gigabit|e-government",
    ),
    (
        "energieeffizienz_erneuerbare_energien",
        r"energieeffizien|erneuerbare[nr]? energie|energieeinspar|photovoltaik|solar|windenergie|wasserstoff|geothermie|wärmepumpe|wärmenetz|heizung|energetische|energiewende|bioenergie|biogas",
    ),
    (
        "existenzgruendung_festigung",
        r"existenzgründ|gründung|gründer|start-?up|jungunternehm|nachfolge",
    ),
    (
        "forschung_innovation_themenoffen",
        r"themenoffen|technologieoffen|branchenoffen|innovationsgutschein|zentrales innovationsprogramm|\bzim\b",
    ),
    ("frauenfoerderung", r"frauen|gleichstellung|gründerinnen"),
    (
        "gesundheit_soziales",
        r"gesundheit|pflege|medizin|krankenh|klinik|sozial|inklusion|behinder|familie|senior|älterer? menschen|kinder|jugend|integration|migra|flüchtling|geflüchtet|prävention|sucht|obdach|teilhabe",
    ),
    (
        "infrastruktur",
        r"infrastruktur|breitband|straßen|brücken|wasserversorgung|abwasser|hochwasserschutz|kläranlage",
    ),
    (
        "kultur_medien_sport",
        r"kultur|kunst|künstler|museum|theater|musik|film|medien|sport|denkmal|heimat|bibliothek|literatur",
    ),
    (
        "landwirtschaft_laendliche_entwicklung",
        r"landwirt|agrar|ländliche|forst|wald|fischerei|aquakultur|tierhaltung|tierwohl|ökolandbau|ökologischen landbau|dorf|weinbau|obstbau|gartenbau|ernährungswirtschaft|leader",
    ),
    ("messen_ausstellungen", r"messe|ausstellung"),
    (
        "mobilitaet",
        r"mobilität|verkehr|elektromobil|fahrzeug|ladeinfrastruktur|ladestation|schienen|bahn|radverkehr|radweg|öpnv|nahverkehr|luftfahrt|schifffahrt|binnenschiff|logistik",
    ),
    (
        "regionalfoerderung",
        r"regionalförder|regionale wirtschaft|strukturschwach|strukturwandel|\bgrw\b|regionalentwicklung|regionalbudget",
    ),
    (
        "smart_cities_regionen",
        r"smart cit|smarte region|smart region",
    ),
    (
        "staedtebau_stadterneuerung",
        r"städtebau|stadterneuerung|stadtentwicklung|innenstadt|ortskern|stadtumbau|quartier",
    ),
    (
        "umwelt_naturschutz",
        r"umwelt|naturschutz|biodiversität|artenschutz|artenvielfalt|kreislaufwirtschaft|recycling|abfall|gewässer|moor|landschaftspflege|klimaanpassung|ressourceneffizien",
    ),
    (
        "unternehmensfinanzierung",
        r"kredit|darlehen|bürgschaft|beteiligungskapital|eigenkapital|wagniskapital|risikokapital|venture|liquidität|betriebsmittel|mezzanin",
    ),
    (
        "wohnungsbau_modernisierung",
        r"wohnungsbau|wohnraum|wohngebäude|eigenheim|mietwohnung|wohneigentum|modernisierung von wohn",
    ),
];

fn rules() -> &'static [(String, Regex)] {
    static R: OnceLock<Vec<(String, Regex)>> = OnceLock::new();
    R.get_or_init(|| {
        LEXICON
            .iter()
            .map(|(code, p)| {
                (
                    code.to_string(),
                    Regex::new(&format!("(?i){p}")).expect("valid area pattern"),
                )
            })
            .collect()
    })
}

/// Codes of the top-level areas whose words occur in the grant's title or short
/// description, and company financing for loans, guarantees and equity.
fn lexicon_codes(grant: &Grant) -> Vec<&'static str> {
    codes_in(grant, grant.short_description.as_deref().unwrap_or(""))
}

/// Codes of the top-level areas whose words occur in the grant's title or in `text` (a
/// part of its short description), and company financing for loans, guarantees and
/// equity.
fn codes_in(grant: &Grant, text: &str) -> Vec<&'static str> {
    let text = format!("{} {text}", grant.title);
    let mut out: Vec<&'static str> = rules()
        .iter()
        .zip(LEXICON)
        .filter(|((_, rx), _)| rx.is_match(&text))
        .map(|(_, (code, _))| *code)
        .collect();
    if super::kind::grant_type(grant).value != GrantType::Subsidy
        && !out.contains(&"unternehmensfinanzierung")
    {
        out.push("unternehmensfinanzierung");
    }
    out
}

/// Top-level areas whose words occur in the grant's title or short description, and
/// company financing for loans, guarantees and equity; catalogue indices, sorted.
pub fn lexicon_areas(cat: &Catalogue, g: Idx) -> Vec<Idx> {
    let code_idx = |code: &str| {
        cat.grant_areas
            .iter()
            .position(|a| a.code == code && a.parent_id.is_none())
            .map(|i| i as Idx)
    };
    let mut out: Vec<Idx> = lexicon_codes(&cat.grants[g as usize])
        .into_iter()
        .filter_map(code_idx)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Areas that name no topic: company financing, founding, regional economic promotion,
/// topic-open research and innovation.
const OPEN_AREAS: &[&str] = &[
    "unternehmensfinanzierung",
    "existenzgruendung_festigung",
    "regionalfoerderung",
    "forschung_innovation_themenoffen",
];

/// The programme is open to any topic: its title and the first sentence of its short
/// description (the purpose: "Wenn Sie …, können Sie … erhalten"; later sentences name
/// further terms, "Infrastrukturmaßnahmen werden … mit bis zu 90 Prozent gefördert")
/// name one of the areas that are no topic ([`OPEN_AREAS`]: "ERP-Förderkredit KMU",
/// "Gemeinschaftsaufgabe Verbesserung der regionalen Wirtschaftsstruktur", "Zentrales
/// Innovationsprogramm Mittelstand") and no topical one. Jobs created or secured
/// ("Arbeitsplätze schaffen", "Sicherung der Beschäftigung") are the aim of such
/// financing, not a topic: next to an open area, labour does not count. Its text speaks
/// of financing, not of a topic, so its cosine to any profile's topic is low though the
/// topic fits by definition.
pub fn topic_open(grant: &Grant) -> bool {
    let short = grant.short_description.as_deref().unwrap_or("");
    let codes = codes_in(grant, first_sentence(short));
    let open = codes.iter().any(|c| OPEN_AREAS.contains(c));
    open && codes
        .iter()
        .all(|c| OPEN_AREAS.contains(c) || *c == "arbeit")
}

/// The text up to the end of its first sentence (a full stop, question or exclamation
/// mark followed by a space and a capital letter: "bis zu 45 Prozent erhalten. Infra…").
pub(crate) fn first_sentence(text: &str) -> &str {
    let bytes = text.as_bytes();
    for (i, c) in text.char_indices() {
        if matches!(c, '.' | '!' | '?')
            && bytes.get(i + 1) == Some(&b' ')
            && text[i + 2..].chars().next().is_some_and(char::is_uppercase)
        {
            return &text[..=i];
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::facts::test_grant as grant;

    #[test]
    fn only_programmes_that_name_no_topic_are_open_to_any() {
        let investing =
            "Wenn Sie in Ihrem Unternehmen Investitionen planen, erhalten Sie ein Darlehen.";
        assert!(topic_open(&grant(
            "ERP-Förderkredit KMU",
            investing,
            "loan"
        )));
        assert!(topic_open(&grant(
            "Zentrales Innovationsprogramm Mittelstand (ZIM)",
            "Wenn Sie Forschungs- oder Entwicklungsaktivitäten planen, erhalten Sie einen Zuschuss.",
            "subsidy"
        )));
        // A loan for a topic is not open to any.
        assert!(!topic_open(&grant(
            "Förderkredit Geothermie",
            investing,
            "loan"
        )));
        // Jobs are the aim of financing, not a topic; a later sentence names further
        // terms, not the purpose.
        assert!(topic_open(&grant(
            "Gemeinschaftsaufgabe „Verbesserung der regionalen Wirtschaftsstruktur“ (GRW)",
            "Wenn Sie als Unternehmen Arbeitsplätze neu schaffen oder dauerhaft sichern und investieren, erhalten Sie einen Zuschuss.",
            "subsidy"
        )));
        assert!(topic_open(&grant(
            "Förderung im Rahmen der Gemeinschaftsaufgabe „Verbesserung der regionalen Wirtschaftsstruktur“ (GRW)",
            "Wenn Sie in einer strukturschwachen Region investieren, können Sie eine GRW-Förderung von bis zu 45 Prozent erhalten. Infrastrukturmaßnahmen werden mit bis zu 90 Prozent gefördert.",
            "subsidy"
        )));
        // Labour alone is a topic (a programme for the unemployed).
        assert!(!topic_open(&grant(
            "Eingliederung Langzeitarbeitsloser",
            "Wenn Sie Langzeitarbeitslose beschäftigen, erhalten Sie einen Zuschuss.",
            "subsidy"
        )));
        // A subsidy that names no area at all says nothing about being open.
        assert!(!topic_open(&grant(
            "Richtlinie AGATHE",
            "Sie erhalten einen Zuschuss.",
            "subsidy"
        )));
    }
}

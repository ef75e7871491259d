//! Programmes for farms only, read from the condition of their teaser ("Wenn Sie als
//! landwirtschaftlicher Betrieb …", "Wenn Sie als Landwirtin und Landwirt …", "Wenn Sie
//! Investitionen in Ihren landwirtschaftlichen Betrieb planen, …"), and whether a
//! profile's texts say the organisation farms. An agricultural investment programme does
//! not serve a butcher's shop that buys from farmers, though both speak of agriculture
//! ([`super::sector::Sector::Agriculture`] is the topic; this is who may apply).

use std::sync::OnceLock;

use regex::Regex;

use super::kind::Read;
use super::sector::re;
use crate::model::Grant;

/// True (with the sentence as evidence) when the first sentence of the teaser addresses
/// its reader as a farm: "als landwirtschaftliches Unternehmen", "als land- oder
/// forstwirtschaftlicher Betrieb", "als Landwirtin und Landwirt", "in Ihrem
/// landwirtschaftlichen Betrieb", "ein landwirtschaftliches Unternehmen … gründen",
/// "landwirtschaftliche Flächen … bewirtschaften", "Landwirte … können". `None` when it
/// does not.
pub fn only_farms(grant: &Grant) -> Option<Read<bool>> {
    static CONDITION: OnceLock<Regex> = OnceLock::new();
    let condition = CONDITION.get_or_init(|| {
        re(concat!(
            r"\bals (land- (und|oder) forstwirtschaftliche[rs]?|landwirtschaftliche[rs]?|forstwirtschaftliche[rs]?) (betrieb|unternehmen)",
            r"|\bals landwirt|\bals bergbäuerin|\bals bergbauer|\bals (ein )?unternehmen der (land|forst)wirtschaft\b",
            r"|\bunternehmen der landwirtschaftlichen primärproduktion|\b(einen|ihren) betrieb in der landwirtschaft\b",
            r"|\bihr(e[mn]?)? (land- (und|oder) forstwirtschaftliche[ns]?|landwirtschaftliche[ns]?) (betrieb|unternehmen)",
            r"|\b(ein|einen) landwirtschaftliche[ns]? (betrieb|unternehmen)\b[^.]{0,60}\b(gründen|übernehmen)",
            r"|\b(landwirtschaftliche|land-, forst- oder weinbauliche)n? (nutz)?flächen?\b[^.]{0,100}\bbewirtschaften",
            r"|^(landwirtinnen und landwirte|landwirte)\b[^.]{0,40}\bkönnen\b",
        ))
    });
    let short = grant.short_description.as_deref().unwrap_or("");
    let first = short.split_inclusive(". ").next().unwrap_or("");
    condition.is_match(first).then(|| Read {
        value: true,
        sentence: Some(first.trim().to_string()),
    })
}

/// True when a profile's texts (German or English) say the organisation farms: a farm,
/// its land, animals, vines, orchards, greenhouses, forest or ponds. Buying from farmers
/// ("Das Fleisch kommt von Landwirten") is no farming.
pub fn in_profile(text: &str) -> bool {
    static FARMING: OnceLock<Regex> = OnceLock::new();
    let farming = FARMING.get_or_init(|| {
        re(concat!(
            r"landwirtschaftliche[rns]? (betrieb|unternehmen|familienbetrieb|hof)|landwirtschaftsbetrieb",
            r"|bauernhof|\bhof\b|\bhöfe\b|agrargenossenschaft|agrarbetrieb|milchvieh|milchkühe|ackerbau",
            r"|ackerland|grünland|hektar|weingut|winzer|weinbau|obstbau|gartenbau|gärtnerei|baumschule",
            r"|forstbetrieb|waldbesitz|forstwirt|schäferei|imkerei|fischerei|aquakultur|teichwirtschaft",
            r"|fischzucht|tierhaltung|\bställe?\b|gewächshaus",
            r"|\bfarms?\b|farming|hectares|arable|vineyard|winery|orchard|horticultur|forest estate",
            r"|beekeep|livestock|cattle|dairy herd|\bcows\b|\bpigs\b|greenhouse|viticultur",
        ))
    });
    farming.is_match(text) || !super::livestock::in_profile(text).is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::test_grant as grant;

    /// Teasers shortened from the catalogue ("Förderung von Investitionen in
    /// landwirtschaftlichen Unternehmen", "Diversifizierung …", "FRL LIE/2023").
    #[test]
    fn a_teaser_that_addresses_farms_restricts_the_programme_to_them() {
        for short in [
            "Wenn Sie als landwirtschaftliches Unternehmen Investitionen in langlebige Wirtschaftsgüter planen, können Sie einen Zuschuss erhalten.",
            "Wenn Sie als Landwirtin und Landwirt in Einkommensquellen außerhalb der Landwirtschaft investieren, können Sie einen Zuschuss erhalten.",
            "Wenn Sie Investitionen in Ihren landwirtschaftlichen Betrieb planen, können Sie einen Zuschuss erhalten.",
            "Wenn Sie als land- oder forstwirtschaftlicher Betrieb durch Naturkatastrophen geschädigt sind, können Sie eine Beihilfe erhalten.",
            "Wenn Sie als Unternehmen der Landwirtschaft Liquiditätshilfe benötigen, können Sie ein Darlehen erhalten.",
            "Wenn Sie in Ihrem landwirtschaftlichen Unternehmen eine Stütze für Ihre Liquidität benötigen, können Sie ein Darlehen erhalten.",
            "Wenn Sie planen, ein landwirtschaftliches Unternehmen in Sachsen zu gründen oder eine Hofnachfolge anzutreten, können Sie einen Zuschuss erhalten.",
            "Wenn Sie landwirtschaftliche Flächen in einem benachteiligten Gebiet bewirtschaften, können Sie eine Ausgleichszulage erhalten.",
            "Wenn Sie eine land-, forst- oder weinbauliche Fläche bewirtschaften und Ihnen Schäden entstanden sind, können Sie eine Hilfe erhalten.",
            "Wenn Sie einen Betrieb in der Landwirtschaft, im Gartenbau oder Weinbau führen, können Sie ein Darlehen erhalten.",
            "Wenn Sie sich als ein Unternehmen der landwirtschaftlichen Primärproduktion in einer Schieflage befinden, können Sie ein Darlehen erhalten.",
            "Landwirte und Gärtner können unter bestimmten Bedingungen eine Förderung für energieeffiziente Maßnahmen erhalten.",
        ] {
            let read = only_farms(&grant("Agrarinvestitionen", short, "subsidy"));
            assert_eq!(read.map(|r| r.sentence.is_some()), Some(true), "{short}");
        }
        // A programme about agriculture for others, or naming farms after its first
        // sentence, is not restricted to them.
        for short in [
            "Wenn Sie als Unternehmen der Agrar- und Ernährungswirtschaft Lebensmittel verarbeiten, können Sie einen Zuschuss erhalten.",
            "Wenn Sie als Kommune den ländlichen Raum stärken, können Sie einen Zuschuss erhalten. Auch landwirtschaftliche Betriebe sind antragsberechtigt.",
            "Wenn Sie Landwirtinnen und Landwirte beraten, können Sie einen Zuschuss erhalten.",
            "Wenn Sie Maßnahmen planen, mit denen die Absatzmöglichkeiten für landwirtschaftliche Erzeugnisse verbessert werden, können Sie einen Zuschuss erhalten.",
            "Wenn Sie Maßnahmen zur Aufrechterhaltung der landwirtschaftlichen Flächennutzung planen, können Sie einen Zuschuss erhalten.",
        ] {
            assert!(only_farms(&grant("Ländlicher Raum", short, "subsidy")).is_none(), "{short}");
        }
    }

    #[test]
    fn a_profile_says_whether_it_farms() {
        for text in [
            "Hof Wessels GbR, ein landwirtschaftlicher Familienbetrieb mit 120 Hektar",
            "Agrargenossenschaft Bördeland eG mit 600 Milchkühen",
            "a family vineyard on the Moselle",
            "Teichwirtschaft mit Karpfen und Forellen",
            "Wir halten 300 Mutterkühe",
        ] {
            assert!(in_profile(text), "{text}");
        }
        for text in [
            "Landmetzgerei mit eigener Schlachtung; das Fleisch kommt von Landwirten aus der Umgebung",
            "Bäckerei mit sechs Filialen",
            "a software company for fleet analytics",
        ] {
            assert!(!in_profile(text), "{text}");
        }
    }
}

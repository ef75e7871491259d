//! What kind of programme a grant is, and its terms (SMEs only, non-profit only), read
//! from the grant type, the title and the texts.

use std::sync::OnceLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::model::{Grant, GrantType};

use super::applicants::sentences;

/// Kind of programme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = ProgrammeKindValue))]
pub enum ProgrammeKind {
    ResearchCall,
    InvestmentGrant,
    ProjectGrant,
    Loan,
    Guarantee,
    Equity,
    Advisory,
    PrizeScholarship,
    Infrastructure,
}

impl ProgrammeKind {
    pub const ALL: [ProgrammeKind; 9] = [
        Self::ResearchCall,
        Self::InvestmentGrant,
        Self::ProjectGrant,
        Self::Loan,
        Self::Guarantee,
        Self::Equity,
        Self::Advisory,
        Self::PrizeScholarship,
        Self::Infrastructure,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::ResearchCall => "research_call",
            Self::InvestmentGrant => "investment_grant",
            Self::ProjectGrant => "project_grant",
            Self::Loan => "loan",
            Self::Guarantee => "guarantee",
            Self::Equity => "equity",
            Self::Advisory => "advisory",
            Self::PrizeScholarship => "prize_scholarship",
            Self::Infrastructure => "infrastructure",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }

    pub fn label_de(self) -> &'static str {
        match self {
            Self::ResearchCall => "Forschungs- und Innovationsförderung",
            Self::InvestmentGrant => "Investitionszuschuss",
            Self::ProjectGrant => "Projekt- oder Betriebskostenzuschuss",
            Self::Loan => "Darlehen",
            Self::Guarantee => "Bürgschaft",
            Self::Equity => "Beteiligung",
            Self::Advisory => "Beratungsförderung",
            Self::PrizeScholarship => "Preis oder Stipendium",
            Self::Infrastructure => "Infrastrukturförderung",
        }
    }

    pub fn label_en(self) -> &'static str {
        match self {
            Self::ResearchCall => "research and innovation funding",
            Self::InvestmentGrant => "investment grant",
            Self::ProjectGrant => "project or operating grant",
            Self::Loan => "loan",
            Self::Guarantee => "guarantee",
            Self::Equity => "equity",
            Self::Advisory => "advisory funding",
            Self::PrizeScholarship => "prize or scholarship",
            Self::Infrastructure => "infrastructure funding",
        }
    }
}

/// A fact read from a text: the value and the sentence (or field) it was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct Read<T> {
    pub value: T,
    /// `None` when the value comes from a structured field (the grant type).
    pub sentence: Option<String>,
}

fn re(p: &str) -> Regex {
    Regex::new(&format!("(?i){p}")).expect("valid kind pattern")
}

/// Subsidy kinds by the words of title and texts, in order of precedence.
fn subsidy_rules() -> &'static [(ProgrammeKind, Regex)] {
    use ProgrammeKind::*;
    static R: OnceLock<Vec<(ProgrammeKind, Regex)>> = OnceLock::new();
    R.get_or_init(|| {
        vec![
            (
                PrizeScholarship,
                re(r"\bpreis(es|e)?\b|preisverleihung|award|wettbewerb(e|en|s)?\b|stipendi|auszeichnung|förderpreis|innovationspreis"),
            ),
            (
                Advisory,
                re(r"beratung(en|s)?\b|beratungsförder|coaching|\bberater|beratungsleistung|beratungsgutschein|gutschein|consulting"),
            ),
            (
                ResearchCall,
                re(r"forschung|entwicklungsvorhaben|entwicklungsprojekt|\bf(u|&)e\b|\bfue\b|verbundvorhaben|verbundprojekt|zum thema|themenfeld|wissenschaft|innovationsvorhaben|innovationsprojekt|machbarkeitsstudie|pilotvorhaben|demonstrationsvorhaben|technologieentwicklung|horizon|erforsch|\bforsch(en|t)\b"),
            ),
            (
                Infrastructure,
                re(r"infrastruktur|breitband|gigabit|radweg|radverkehr|straßenbau|gemeindestraß|abwasser|wasserversorgung|städtebau|dorferneuerung|dorfentwicklung|stadterneuerung|sportstätte|schwimmbad|bushaltestell|öpnv|hochwasserschutz|kläranlage|schulbau|schulgebäude|kitaausbau|kita-ausbau|ganztagsausbau|krankenhausinvest|bahnhof|hafen"),
            ),
            (
                InvestmentGrant,
                re(r"investition|investieren|anschaffung|anschaffen|modernisier|sanier|neubau|errichtung|errichten|ausstattung|maschinen|anlagen\b|erwerb|kauf von|umbau|ausbau"),
            ),
        ]
    })
}

/// Names of applicants that contain a kind's word ("Forschungseinrichtung" is who may
/// apply, not research): removed before the kind rules read a text.
fn applicant_names() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| re(r"forschungs(einrichtung|institut|stätte|organisation)\w*"))
}

/// The first kind rule that matches `text` once applicant names are removed.
fn kind_in(text: &str) -> Option<ProgrammeKind> {
    let text = applicant_names().replace_all(text, "");
    subsidy_rules()
        .iter()
        .find(|(_, rx)| rx.is_match(&text))
        .map(|(k, _)| *k)
}

/// The funding instrument: the record's grant type, except a "subsidy" whose title names
/// a loan ("ERP-Förderkredit Innovation", "ISB-Darlehen Wohnraum für Flüchtlinge",
/// "Bayerische regionale Förderungsprogramme/Regionalkredit"). The Förderdatenbank files
/// a few promotional loans under grants; the programme's own name says what it lends.
/// The sentence is the title when it decides.
pub fn grant_type(grant: &Grant) -> Read<GrantType> {
    static R: OnceLock<Regex> = OnceLock::new();
    let loan = R.get_or_init(|| re(r"kredit|darlehen"));
    if grant.grant_type == GrantType::Subsidy && loan.is_match(&grant.title) {
        return Read {
            value: GrantType::Loan,
            sentence: Some(grant.title.clone()),
        };
    }
    Read {
        value: grant.grant_type,
        sentence: None,
    }
}

/// The kind of a grant: loans, guarantees and equity from the grant type; subsidies by
/// the first rule that matches the title, then the first rule that matches a sentence of
/// the short description (applicant names such as "Forschungseinrichtung" left out),
/// else a project or operating grant.
pub fn kind(grant: &Grant) -> Read<ProgrammeKind> {
    let fixed = match grant_type(grant).value {
        GrantType::Loan => Some(ProgrammeKind::Loan),
        GrantType::Guarantee => Some(ProgrammeKind::Guarantee),
        GrantType::Equity => Some(ProgrammeKind::Equity),
        GrantType::Subsidy => None,
    };
    if let Some(value) = fixed {
        return Read {
            value,
            sentence: None,
        };
    }
    if let Some(value) = kind_in(&grant.title) {
        return Read {
            value,
            sentence: Some(grant.title.clone()),
        };
    }
    if let Some(text) = grant.short_description.as_deref() {
        for (k, rx) in subsidy_rules() {
            let found =
                sentences(text).find(|s| rx.is_match(&applicant_names().replace_all(s, "")));
            if let Some(s) = found {
                return Read {
                    value: *k,
                    sentence: Some(s.to_string()),
                };
            }
        }
    }
    Read {
        value: ProgrammeKind::ProjectGrant,
        sentence: None,
    }
}

/// The programme funds founding teams through their university or research institution:
/// the institution applies, the team is supported ("Wenn Sie als Hochschule oder
/// Forschungseinrichtung innovative Gründungsprojekte unterstützen", "unterstützt
/// Hochschulen und Forschungseinrichtungen bei der Begleitung von Gründungsteams").
/// Read from the short description and description.
pub fn founding_teams_via_institution(grant: &Grant) -> bool {
    static R: OnceLock<Regex> = OnceLock::new();
    let rx = R.get_or_init(|| {
        re(r"\b(hochschulen?|forschungseinrichtung(en)?)\b[^.]{0,120}?\b(aus)?gründungs(vorhaben|projekte?|teams?|ideen)\b")
    });
    [&grant.short_description, &grant.description]
        .into_iter()
        .flatten()
        .any(|t| rx.is_match(&t.to_lowercase()))
}

fn sme_rule() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        re(r"\bkmu\b|kleine(s|n|r)? (und|oder|bis) mittler|kleinst- und kleinunternehm|kleinunternehm|kleinstunternehm|mittelständische|höchstens \d+ (beschäftigte|mitarbeit)|weniger als \d+ (beschäftigte|mitarbeit)|\bsmes?\b|small and medium")
    })
}

fn non_profit_rule() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| re(r"gemeinnützig|non-?profit|steuerbegünstigte zwecke|mildtätig"))
}

/// An SME named as the applicant: "als kleines oder mittleres Unternehmen", "Ihr
/// mittelständisches Unternehmen", "Wenn Sie ein kleines oder mittleres Unternehmen
/// gründen", "als Start-up oder KMU" — not SMEs as the beneficiaries of someone else's
/// project ("wenn Sie kleine und mittlere Unternehmen beraten"), as the companies an
/// investor takes a stake in, or as the receivers of a bonus ("zusätzlich").
fn sme_applicant_rule() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        re(r"(\b(als|ihre[mnrs]?|ihr)\s+(\S+\s+){0,4}?|\b(sie|mit) (ein|einem)\s+)(kleine[mnrs]?\s+(und|oder|bis)\s+mittler|kleinst\w*|kleinunternehm|mittelständische|kmu\b|unternehmen mit (höchstens|weniger als) \d+)")
    })
}

/// "Only SMEs" when the title restricts to KMU ("KMU-innovativ", "für kleine und
/// mittlere Unternehmen"), or the first sentence of the short description that names
/// SMEs names them as the applicant; the source field
/// `company_size` wins when set.
pub fn sme_only(grant: &Grant) -> Option<Read<bool>> {
    if let Some(size) = grant.company_size.as_deref() {
        let value = sme_rule().is_match(size);
        return Some(Read {
            value,
            sentence: None,
        });
    }
    if sme_rule().is_match(&grant.title) {
        return Some(Read {
            value: true,
            sentence: Some(grant.title.clone()),
        });
    }
    let text = grant.short_description.as_deref()?;
    let s = sentences(text).find(|s| sme_rule().is_match(s))?;
    let addressed = sme_applicant_rule().is_match(s) && !s.to_lowercase().contains("zusätzlich");
    addressed.then(|| Read {
        value: true,
        sentence: Some(s.to_string()),
    })
}

/// "Only larger companies" when the title restricts the programme to companies beyond
/// the SME thresholds ("KfW-Förderkredit großer Mittelstand", "… für Großunternehmen",
/// "Midcaps") and names no SMEs: a programme a company of fewer than 250 employees cannot
/// use. The title is the evidence.
pub fn large_only(grant: &Grant) -> Option<Read<bool>> {
    static R: OnceLock<[Regex; 2]> = OnceLock::new();
    let [large, small] = R.get_or_init(|| {
        [
            re(r"großer?n? mittelstand|großunternehm|\bgroße[n]? unternehmen|\bmid-?caps?\b"),
            re(r"klein|mittlere|\bkmu\b|\bsmes?\b"),
        ]
    });
    (large.is_match(&grant.title) && !small.is_match(&grant.title)).then(|| Read {
        value: true,
        sentence: Some(grant.title.clone()),
    })
}

/// "Only non-profit applicants": the source field when set, else when the sentence the
/// applicants were read from asks for non-profit applicants and names no company.
pub fn non_profit_only(
    grant: &Grant,
    applicants: Option<&super::Fact<Vec<super::ApplicantType>>>,
) -> Option<Read<bool>> {
    if let Some(v) = grant.non_profit_only {
        return Some(Read {
            value: v,
            sentence: None,
        });
    }
    let a = applicants.filter(|a| a.source == super::Source::Text)?;
    let sentence = a.evidence.as_deref()?;
    (non_profit_rule().is_match(sentence) && !a.value.contains(&super::ApplicantType::Company))
        .then(|| Read {
            value: true,
            sentence: Some(sentence.to_string()),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subsidy(title: &str, short: &str) -> Grant {
        super::super::test_grant(title, short, "subsidy")
    }

    #[test]
    fn an_applicant_named_research_institution_does_not_make_a_research_call() {
        let g = subsidy(
            "Gemeinschaftsaufgabe – Gewerbliche Wirtschaft",
            "Wenn Sie als Unternehmen oder gemeinnützige wirtschaftsnahe Forschungseinrichtung \
             Investitionen planen, erhalten Sie einen Zuschuss.",
        );
        assert_eq!(kind(&g).value, ProgrammeKind::InvestmentGrant);
        let g = subsidy("Verbundforschung Photonik", "Gefördert werden Vorhaben.");
        assert_eq!(kind(&g).value, ProgrammeKind::ResearchCall);
    }

    #[test]
    fn a_programme_for_those_who_research_is_a_research_call() {
        // The Förderdatenbank's teasers of research calls often say it with the verb.
        for short in [
            "Wenn Sie an einem innovativen Projekt im Bereich der Bioökonomie forschen und \
             entwickeln, können Sie unter bestimmten Voraussetzungen einen Zuschuss erhalten.",
            "Sie forschen zur Aufklärung ungelöster Fälle bei seltenen Erkrankungen?",
        ] {
            let g = subsidy("KMU-innovativ: Bioökonomie", short);
            assert_eq!(kind(&g).value, ProgrammeKind::ResearchCall, "{short}");
        }
    }

    #[test]
    fn a_subsidy_whose_title_names_a_loan_is_a_loan() {
        for title in [
            "ERP-Förderkredit Innovation",
            "ISB-Darlehen Wohnraum für Flüchtlinge und Asylbegehrende",
            "Bayerische regionale Förderungsprogramme/Regionalkredit",
        ] {
            let g = subsidy(title, "Sie erhalten eine Förderung.");
            let t = grant_type(&g);
            assert_eq!(t.value, GrantType::Loan, "{title}");
            assert_eq!(t.sentence.as_deref(), Some(title));
            assert_eq!(kind(&g).value, ProgrammeKind::Loan, "{title}");
        }
        // "Beteiligung" is taking part here, not equity; the record stands.
        let g = subsidy(
            "Grenzscoutprojekte in Grenzregionen mit deutscher Beteiligung",
            "Sie erhalten einen Zuschuss.",
        );
        assert_eq!(grant_type(&g).value, GrantType::Subsidy);
        assert_eq!(grant_type(&g).sentence, None);
    }

    #[test]
    fn founding_teams_supported_by_their_institution() {
        let via = |short: &str| founding_teams_via_institution(&subsidy("Programm", short));
        assert!(via("Wenn Sie als Hochschule oder Forschungseinrichtung anspruchsvolle, \
                     innovative Gründungsprojekte unterstützen, können Sie einen Zuschuss erhalten."));
        assert!(via(
            "Das Ministerium unterstützt Hochschulen und Forschungseinrichtungen bei der \
                     Begleitung von Gründungsteams."
        ));
        assert!(via(
            "Wenn Sie als Hochschule forschungsbasierte Ausgründungsvorhaben unterstützen, \
                     erhalten Sie einen Zuschuss."
        ));
        assert!(!via(
            "Wenn Sie als Hochschule Forschungsprojekte durchführen, erhalten Sie einen Zuschuss."
        ));
        assert!(!via(
            "Wenn Sie als Hochschule Studierende beraten. Gründungsteams erhalten Coaching."
        ));
    }

    #[test]
    fn competitive_programmes_are_no_prize() {
        let g = subsidy(
            "Zuwendungen für Maßnahmen im Rahmen der wettbewerblichen EU-Förderprogramme",
            "Das Land unterstützt die Antragstellung.",
        );
        assert_ne!(kind(&g).value, ProgrammeKind::PrizeScholarship);
        let g = subsidy("Gründerwettbewerb Digitale Innovationen", "");
        assert_eq!(kind(&g).value, ProgrammeKind::PrizeScholarship);
    }

    #[test]
    fn larger_companies_only_by_the_title() {
        let only = |title: &str| large_only(&subsidy(title, "")).is_some_and(|r| r.value);
        assert!(only("KfW-Förderkredit großer Mittelstand"));
        assert!(only(
            "KfW-Förderkredit großer Mittelstand mit Haftungsfreistellung"
        ));
        assert!(only("Investitionszuschuss für Großunternehmen"));
        for title in [
            "ERP-Förderkredit KMU",
            "Förderung für kleine, mittlere und große Unternehmen",
            "Mittelstandsförderung – Betriebsberatung",
            "Großprojekte der Infrastruktur",
        ] {
            assert!(!only(title), "{title}");
        }
    }

    #[test]
    fn smes_only_when_they_are_the_applicant() {
        let only =
            |title: &str, short: &str| sme_only(&subsidy(title, short)).is_some_and(|r| r.value);
        assert!(only("KMU-innovativ: Materialforschung", ""));
        for short in [
            "Wenn Sie als kleines oder mittleres Unternehmen investieren, können Sie einen Zuschuss erhalten.",
            "Wenn Sie als Kommune oder kleines oder mittleres Unternehmen (KMU) Maßnahmen planen, können Sie einen Zuschuss bekommen.",
            "Wenn Sie in die Digitalisierung Ihres kleinen oder mittleren Unternehmens (KMU) investieren, können Sie einen Zuschuss erhalten.",
            "Wenn Sie ein kleines oder mittleres Unternehmen gründen wollen, können Sie einen Zuschuss erhalten.",
            "Als Start-up oder KMU mit innovativem Geschäftsmodell können Sie eine Beteiligung erhalten.",
        ] {
            assert!(only("Förderprogramm", short), "{short}");
        }
        for short in [
            "Wenn Sie mit einem Vorhaben kleine und mittlere Unternehmen im Bereich IT-Sicherheit unterstützen, können Sie einen Zuschuss erhalten.",
            "Wenn Sie sich als private Kapitalbeteiligungsgesellschaft an der Finanzierung von Vorhaben kleiner und mittlerer Unternehmen beteiligen, kann die Bank eine Garantie übernehmen.",
            "Wenn Sie investieren, erhalten Sie ein Darlehen. Als kleines oder mittleres Unternehmen können Sie zusätzlich von der Klimaprämie profitieren.",
            "Wenn Sie den Wissenstransfer von Hochschulen an vorwiegend kleine und mittlere Unternehmen (KMU) unterstützen, können Sie einen Zuschuss erhalten.",
        ] {
            assert!(!only("Förderprogramm", short), "{short}");
        }
    }
}

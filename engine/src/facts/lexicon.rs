//! The applicant lexicon shared by grant facts, profile resolution and qualification:
//! the nine Förderdatenbank applicant types, the words that name them in programme
//! texts, profiles and prompts, and their eligible entities (legal forms).

use std::sync::OnceLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

/// Who may apply, in the coarse classes of the Förderdatenbank ("Förderberechtigte").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = ApplicantTypeValue))]
pub enum ApplicantType {
    Company,
    Founder,
    Association,
    Municipality,
    University,
    ResearchInstitution,
    EducationInstitution,
    PublicInstitution,
    PrivatePerson,
}

impl ApplicantType {
    pub const ALL: [ApplicantType; 9] = [
        Self::Company,
        Self::Founder,
        Self::Association,
        Self::Municipality,
        Self::University,
        Self::ResearchInstitution,
        Self::EducationInstitution,
        Self::PublicInstitution,
        Self::PrivatePerson,
    ];

    /// The Förderdatenbank label (German).
    pub fn label_de(self) -> &'static str {
        match self {
            Self::Company => "Unternehmen",
            Self::Founder => "Existenzgründer/in",
            Self::Association => "Verband/Vereinigung",
            Self::Municipality => "Kommune",
            Self::University => "Hochschule",
            Self::ResearchInstitution => "Forschungseinrichtung",
            Self::EducationInstitution => "Bildungseinrichtung",
            Self::PublicInstitution => "Öffentliche Einrichtung",
            Self::PrivatePerson => "Privatperson",
        }
    }

    pub fn label_en(self) -> &'static str {
        match self {
            Self::Company => "companies",
            Self::Founder => "founders",
            Self::Association => "associations",
            Self::Municipality => "municipalities",
            Self::University => "universities",
            Self::ResearchInstitution => "research institutions",
            Self::EducationInstitution => "educational institutions",
            Self::PublicInstitution => "public institutions",
            Self::PrivatePerson => "private individuals",
        }
    }

    /// Plural German noun for reasons ("Kommunen", "Vereine und Verbände").
    pub fn plural_de(self) -> &'static str {
        match self {
            Self::Company => "Unternehmen",
            Self::Founder => "Gründerinnen und Gründer",
            Self::Association => "Vereine und Verbände",
            Self::Municipality => "Kommunen",
            Self::University => "Hochschulen",
            Self::ResearchInstitution => "Forschungseinrichtungen",
            Self::EducationInstitution => "Bildungseinrichtungen",
            Self::PublicInstitution => "öffentliche Einrichtungen",
            Self::PrivatePerson => "Privatpersonen",
        }
    }

    /// Code of the matching target group in the shipped vocabulary.
    pub fn target_group_code(self) -> &'static str {
        match self {
            Self::Company => "unternehmen",
            Self::Founder => "existenzgruenderin",
            Self::Association => "verband_vereinigung",
            Self::Municipality => "kommune",
            Self::University => "hochschule",
            Self::ResearchInstitution => "forschungseinrichtung",
            Self::EducationInstitution => "bildungseinrichtung",
            Self::PublicInstitution => "oeffentliche_einrichtung",
            Self::PrivatePerson => "privatperson",
        }
    }

    /// Codes of the eligible entities (legal forms) an applicant type stands for; the
    /// same table turns the source's labels into entities (`scripts/build_fixtures.py`).
    pub fn entity_codes(self) -> &'static [&'static str] {
        match self {
            Self::Company => &[
                "gmbh",
                "ug",
                "ag",
                "eg",
                "gbr",
                "ohg",
                "kg",
                "gmbh_co_kg",
                "partg",
                "einzelunternehmen",
                "freiberufler",
            ],
            Self::Founder => &["einzelunternehmen", "freiberufler", "gmbh", "ug", "gbr"],
            Self::Association => &["ev"],
            Self::Municipality => &["kommune"],
            Self::University => &["hochschule"],
            Self::ResearchInstitution => &["forschungseinrichtung"],
            Self::EducationInstitution => &["bildungseinrichtung"],
            Self::PublicInstitution => &["kdoer", "aoer", "stiftung_oeffentlich"],
            Self::PrivatePerson => &["privatperson"],
        }
    }

    /// The applicant type a legal form (entity code) belongs to, for reading the
    /// entities of a record back as applicant types and for profiles.
    pub fn of_entity_code(code: &str) -> Option<ApplicantType> {
        Some(match code {
            "gmbh" | "ug" | "ag" | "eg" | "gbr" | "ohg" | "kg" | "gmbh_co_kg" | "partg"
            | "einzelunternehmen" | "freiberufler" => Self::Company,
            "ev" | "nev" | "ggmbh" | "stiftung_privat" => Self::Association,
            "kommune" => Self::Municipality,
            "hochschule" => Self::University,
            "forschungseinrichtung" => Self::ResearchInstitution,
            "bildungseinrichtung" => Self::EducationInstitution,
            "kdoer" | "aoer" | "stiftung_oeffentlich" => Self::PublicInstitution,
            "privatperson" => Self::PrivatePerson,
            _ => return None,
        })
    }

    /// Parses a label, code or common alias as partners send it ("Unternehmen", "KMU",
    /// "Verband/Vereinigung", "Start-up", "company", "association" …). Exact words only:
    /// free text goes through [`applicant_words`].
    pub fn parse(value: &str) -> Option<ApplicantType> {
        let v = crate::text::fold_name(value);
        let v = v.trim();
        Self::ALL
            .into_iter()
            .find(|t| {
                crate::text::fold_name(t.label_de()) == v
                    || t.target_group_code() == v.replace(' ', "_")
                    || crate::text::fold_name(t.label_en()) == v
            })
            .or_else(|| {
                let words = applicant_words(value);
                (words.len() == 1 || (words.len() == 2 && words.contains(&Self::Founder))).then(
                    || {
                        if words.contains(&Self::Founder) {
                            Self::Founder
                        } else {
                            words[0]
                        }
                    },
                )
            })
    }
}

struct Rule {
    rx: Regex,
    types: &'static [ApplicantType],
}

/// Word rules, case-insensitive, over German and English applicant words.
fn rules() -> &'static [Rule] {
    use ApplicantType::*;
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let table: &[(&str, &'static [ApplicantType])] = &[
            (r"\bggmbh\b|\bgug\b|gemeinnützige (gmbh|ug)\b", &[Association, Company]),
            (
                r"existenzgründ|gründer|gründungswillig|gründungsteam|start-?ups?\b|jungunternehm|junge[ns]? unternehm|neu ?gegründet|neugründung|\bfounders?\b|\bnew business|\byoung compan|newly founded",
                &[Founder, Company],
            ),
            (
                r"unternehm|\bkmu\b|\bsmes?\b|betrieb|mittelstand|mittelständ|gewerb|handwerk|\bfirm|freiberuf|freie[nr]? beruf|selbst(st)?ändig|landwirt|bäuer|bauer\b|bauern\b|winzer|gärtnere|fischer(in|innen|n)?\b|forstwirt|kaufleute|kaufmann|händler|hotel|gastronom|reeder|werft|stadtwerk|investor|arbeitgeber|apothek|ärzt|\barzt|heilberuf|produzent|verlag|filmherstell|produktionsfirm|genossenschaft|\bcompan|\bbusiness|\benterprise|freelanc|self-employed|\bfarm|\bemployer|\bcooperatives?\b|sole (proprietor|trader)|\bltd\b|\bllc\b|\binc\b|manufactur|manufaktur|\bproducers?\b|\bretailers?\b|\bwholesalers?\b|\bbrewer(y|ies)\b|\bbaker(y|ies)\b|\bconsultanc(y|ies)\b|\b(gp|medical|private|dental|veterinary|physiotherapy|law) practices?\b|general practitioner|\bphysicians?\b|\bdentists?\b|\bpharmac(y|ies)\b|\bkgaa\b|baugesellschaft|kreditinstitut|tierarzt|arztpraxis|personengesellschaft|\bgmbh\b|\bug\b|\bag\b|\bkg\b|\bohg\b|\bgbr\b|\bpartg\b|\beg\b",
                &[Company],
            ),
            (
                r"verein(e|en|s)?\b|vereins|(^|[^k])verband|(^|[^k])verbände|vereinigung|\be\. ?v\.|träger der freien|freie[nr]? träger|wohlfahrt|initiative|stiftung|nichtregierungsorganisation|\bngos?\b|organisationen|gemeinnützige organisation|kirche|kirchlich|religionsgemeinschaft|pfarrgemeinde|sportbund|sportorganisation|\bassociation|\bclub|\bcharit|\bnon-?profits?\b|\bfoundation|\bnon-governmental|\bchurch|religious (organi[sz]ation|communit|bod)",
                &[Association],
            ),
            (
                r"kommun|zweckverb|(^|[^n])gemeinde|städte\b|städten\b|\bstadt\b|\bstädte|stadt-|landkreis|\bkreise?\b|zweckverb|gebietskörperschaft|jugendämter|jugendamt|träger der (örtlichen|öffentlichen) jugendhilfe|\bbezirk|\bmunicipal|\bcit(y|ies)\b|\btowns?\b|\bcount(y|ies)\b|\bdistricts?\b|local authorit",
                &[Municipality],
            ),
            (
                // Not "außeruniversitär": that is the research institution beside one.
                r"hochschul|(?:^|[^r])universit",
                &[University],
            ),
            (
                r"au(ß|ss)eruniversitär|forschungseinricht|forschungsinstitut|forschungsorganisation|forschungszentr|einrichtung(en)? für forschung|wissenschaftseinricht|wissenschaftlich(e|en) einricht|\binstitute?\b|\binstituten?\b|forschende|wissenschaftler|forscher|research (institut|organi[sz]ation|centre|center)|researchers?\b",
                &[ResearchInstitution],
            ),
            (
                r"(?:^|[^h])schulen?\b|schulträger|bildungseinricht|bildungsträger|bildungsstätte|volkshochschul|weiterbildungseinricht|weiterbildungsanbieter|\bkitas?\b|kindertages|bildungswerk|\bschools?\b|education(al)? (institution|provider)",
                &[EducationInstitution],
            ),
            (
                r"öffentliche[nr]? (einrichtung|träger|stelle)|körperschaft(en)? des öffentlichen|anstalt(en)? des öffentlichen|behörde|landesbetrieb|öffentlich-rechtlich|public (bod|institution|authorit)|\b(state|federal|public|government) agenc|\bihk\b|industrie- und handelskammer",
                &[PublicInstitution],
            ),
            (
                r"privatperson|\bbürger(in|innen|n)?\b|eigentümer|\bmieter|\bstudent|studierend|schüler|auszubildend|privathaushalt|natürliche (und juristische )?person|\beltern\b|künstler|promovierend|doktorand|bauherr|hausbesitzer|private (person|individual)|natural persons?\b|\bhomeowner|\bindividuals?\b|\bpupils?\b|\bartists?\b",
                &[PrivatePerson],
            ),
            // Any legal entity ("natürliche und juristische Personen", "juristische
            // Personen des privaten und öffentlichen Rechts", "rechtsfähige und
            // unbeschränkt geschäftsfähige Personen", "Institutionen unabhängig von ihrer
            // Rechtsform") is every organisation …
            (
                r"juristische[n]? person(en)?(\s+(des privaten|des bürgerlichen|[^d\s]|d[^e])|[^\s\w]|$)|rechtsfähige[^,.;]{0,40}\bpersonen\b|unabhängig von (ihrer|der) rechtsform",
                &[
                    Company,
                    Association,
                    Municipality,
                    University,
                    ResearchInstitution,
                    EducationInstitution,
                    PublicInstitution,
                ],
            ),
            // … one of public law is a public body.
            (
                r"juristische[n]? person(en)? des öffentlichen rechts",
                &[
                    Municipality,
                    University,
                    ResearchInstitution,
                    PublicInstitution,
                ],
            ),
        ];
        table
            .iter()
            .map(|(p, types)| Rule {
                rx: Regex::new(&format!("(?i){p}")).expect("valid applicant rule"),
                types,
            })
            .collect()
    })
}

/// Kinds of institution whose legal form — and so applicant type — the word alone does
/// not tell: a hospital may be a municipal company, a gGmbH or a public institution, a
/// museum a Kommune's, a foundation's or an association's. A value of `eligible_entities`
/// naming one is accepted without setting an applicant type; the profile's name and
/// texts tell it ("Klinikum Nordfriesland gGmbH", "Stadt …").
pub fn names_institution_kind(value: &str) -> bool {
    static RX: OnceLock<Regex> = OnceLock::new();
    RX.get_or_init(|| {
        Regex::new(
            r"(?i)krankenh|klinik|spital\b|hospital|\bclinics?\b|pflege|altenheim|seniorenheim|hospiz|hospice|\bcare (home|provider|service|facilit)|nursing (home|service)|museum|museen|theater|theatre|bibliothek|büchere|\blibrar|archiv|kultureinricht|cultural (institution|centre|center)|orchest|jugendhilfe|jugendzentr|behindertenhilfe|eingliederungshilfe|altenhilfe|sozialeinricht|soziale einricht|einrichtung (der|für)\b|social (institution|service)|\bträger\b|\bprovider\b|\bdoctors?\b|waldbesitz|forest owner|vermieter|landlord|kulturschaffend|städtische gesellschaft|eigenbetrieb|municipal (company|enterprise|utilit)",
        )
        .expect("valid institution rule")
    })
    .is_match(value)
}

/// Applicant types named in a short phrase (an "als …" phrase of a teaser, a value of
/// `eligible_entities`, a list in a prompt), in [`ApplicantType::ALL`] order.
pub fn applicant_words(phrase: &str) -> Vec<ApplicantType> {
    // Associations of municipalities ("Gemeinden und Gemeindeverbände", "municipal
    // associations (Zweckverbände)") are public bodies, not Vereine.
    static MUNICIPAL_BODIES: OnceLock<Regex> = OnceLock::new();
    let phrase = MUNICIPAL_BODIES
        .get_or_init(|| {
            Regex::new(r"(?i)gemeindeverb(and|ände)\w*|kommunalverb(and|ände)\w*|(municipal|local authority) associations?")
                .expect("valid municipal-body rule")
        })
        .replace_all(phrase, "Kommunen");
    // Chambers are public bodies, whatever trade they name ("Handwerkskammer" is no craft
    // business, "Landwirtschaftskammer" no farm).
    static CHAMBERS: OnceLock<Regex> = OnceLock::new();
    let phrase = CHAMBERS
        .get_or_init(|| {
            Regex::new(r"(?i)\b(handwerks|handels|industrie- und handels|landwirtschafts|ärzte|zahnärzte|tierärzte|apotheker|architekten|ingenieur|steuerberater|rechtsanwalts|notar|psychotherapeuten|wirtschaftsprüfer|pflege|berufs)?kammer(n)?\b|\bchambers? of (commerce|crafts?|skilled crafts|industry)( and (commerce|industry))?")
                .expect("valid chamber rule")
        })
        .replace_all(&phrase, "öffentliche Einrichtung");
    let mut out: Vec<ApplicantType> = Vec::new();
    for rule in rules() {
        if rule.rx.is_match(&phrase) {
            for &t in rule.types {
                if !out.contains(&t) {
                    out.push(t);
                }
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::ApplicantType::*;
    use super::*;

    #[test]
    fn associations_of_municipalities_are_municipal_bodies() {
        assert_eq!(
            applicant_words("Gemeinden und Gemeindeverbände"),
            vec![Municipality]
        );
        assert_eq!(
            applicant_words("towns, districts and municipal associations"),
            vec![Municipality]
        );
        assert_eq!(applicant_words("Vereine und Verbände"), vec![Association]);
    }

    #[test]
    fn chambers_are_public_bodies() {
        for chamber in [
            "Handwerkskammer zu Leipzig",
            "Landwirtschaftskammer Niedersachsen",
            "Industrie- und Handelskammer",
            "Kammern",
            "Chamber of Skilled Crafts",
        ] {
            assert_eq!(
                applicant_words(chamber),
                vec![PublicInstitution],
                "{chamber}"
            );
        }
        assert_eq!(
            applicant_words("Kammer oder berufsständische Vereinigung"),
            vec![Association, PublicInstitution]
        );
        // A cold room is no chamber of a trade.
        assert_eq!(
            applicant_words("Handwerksbetrieb mit Kühlkammer"),
            vec![Company]
        );
    }

    #[test]
    fn institutions_named_by_their_role() {
        assert_eq!(applicant_words("Kreditinstitut"), vec![Company]);
        assert_eq!(applicant_words("Jugendamt"), vec![Municipality]);
        assert_eq!(
            applicant_words("Träger der örtlichen Jugendhilfe"),
            vec![Municipality]
        );
        assert_eq!(
            applicant_words("Weiterbildungsanbieterin und Weiterbildungsanbieter"),
            vec![EducationInstitution]
        );
        assert_eq!(applicant_words("Sportorganisation"), vec![Association]);
    }

    #[test]
    fn words_of_teasers_and_partners() {
        assert_eq!(
            applicant_words("kleines oder mittleres Unternehmen (KMU)"),
            vec![Company]
        );
        assert_eq!(
            applicant_words("Kommune oder Unternehmen"),
            vec![Company, Municipality]
        );
        assert_eq!(applicant_words("Hochschule"), vec![University]);
        assert_eq!(applicant_words("Universität"), vec![University]);
        assert_eq!(
            applicant_words("Hochschule oder außeruniversitäre Einrichtung"),
            vec![University, ResearchInstitution]
        );
        assert_eq!(
            applicant_words("natürliche und juristische Personen mit Sitz in Deutschland"),
            vec![
                Company,
                Association,
                Municipality,
                University,
                ResearchInstitution,
                EducationInstitution,
                PublicInstitution,
                PrivatePerson
            ]
        );
        assert_eq!(
            applicant_words("juristische Personen des öffentlichen Rechts"),
            vec![
                Municipality,
                University,
                ResearchInstitution,
                PublicInstitution
            ]
        );
        // Any legal person, however the text words it, and research bodies by their
        // purpose ("Innovationsfonds", "Kulturstiftung des Bundes", ZIM).
        let any = vec![
            Company,
            Association,
            Municipality,
            University,
            ResearchInstitution,
            EducationInstitution,
            PublicInstitution,
        ];
        assert_eq!(
            applicant_words("rechtsfähige und unbeschränkt geschäftsfähige Personen"),
            any
        );
        assert_eq!(
            applicant_words(
                "deutsche und ausländische Institutionen unabhängig von ihrer Rechtsform"
            ),
            any
        );
        assert_eq!(applicant_words("Personengesellschaften"), vec![Company]);
        assert_eq!(
            applicant_words("Einrichtungen für Forschung und Wissensverbreitung"),
            vec![ResearchInstitution]
        );
        assert_eq!(applicant_words("Verein oder Verband"), vec![Association]);
        assert_eq!(applicant_words("Stadt- und Landkreis"), vec![Municipality]);
        assert_eq!(
            applicant_words("Existenzgründer:in"),
            vec![Company, Founder]
        );
        assert_eq!(applicant_words("Berufsschule"), vec![EducationInstitution]);
        assert_eq!(
            applicant_words("kleines neu gegründetes Technologieunternehmen"),
            vec![Company, Founder]
        );
        assert!(applicant_words("Vorhaben").is_empty());
        // A sector is no applicant; its people are.
        assert!(applicant_words("Fischerei und Aquakultur").is_empty());
        assert_eq!(applicant_words("Fischer und Fischerinnen"), vec![Company]);
        // English profiles name their trade, not their legal form.
        for first_sentence in [
            "We are a family-owned manufacturer of industrial pumps.",
            "We run a small bakery with three shops in Kiel.",
            "Our craft brewery in Bamberg employs 12 people.",
            "We are a software consultancy in Berlin.",
        ] {
            assert_eq!(
                applicant_words(first_sentence),
                vec![Company],
                "{first_sentence}"
            );
        }
    }

    #[test]
    fn parse_partner_values() {
        assert_eq!(ApplicantType::parse("Unternehmen"), Some(Company));
        assert_eq!(ApplicantType::parse("KMU"), Some(Company));
        assert_eq!(ApplicantType::parse("Existenzgründer/in"), Some(Founder));
        assert_eq!(ApplicantType::parse("Start-up"), Some(Founder));
        assert_eq!(
            ApplicantType::parse("Verband/Vereinigung"),
            Some(Association)
        );
        assert_eq!(ApplicantType::parse("association"), Some(Association));
        assert_eq!(ApplicantType::parse("company"), Some(Company));
        assert_eq!(
            ApplicantType::parse("Öffentliche Einrichtung"),
            Some(PublicInstitution)
        );
        assert_eq!(ApplicantType::parse("Freiberufler"), Some(Company));
        assert_eq!(ApplicantType::parse("Kommunen"), Some(Municipality));
        assert_eq!(ApplicantType::parse("Quantenphysik"), None);
        // More of what partners send: each value one type.
        for (values, t) in [
            (
                &[
                    "cooperative",
                    "sole proprietor",
                    "Ltd",
                    "KGaA",
                    "Wohnungsbaugesellschaft",
                    "Tierarzt",
                ][..],
                Company,
            ),
            (
                &[
                    "non-profit",
                    "nonprofit",
                    "freier Träger",
                    "Kirchengemeinde",
                    "church",
                    "kirchliche Einrichtung",
                    "religious organisation",
                ][..],
                Association,
            ),
            (
                &["county", "town", "Gemeinde", "Ortsgemeinde"][..],
                Municipality,
            ),
            (
                &["state agency", "federal agency", "IHK"][..],
                PublicInstitution,
            ),
        ] {
            for v in values {
                assert_eq!(ApplicantType::parse(v), Some(t), "{v}");
            }
        }
        assert_eq!(
            applicant_words("gUG (haftungsbeschränkt)"),
            vec![Company, Association]
        );
    }
}

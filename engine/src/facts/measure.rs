//! Investment measures a programme funds for whoever carries them out, and the measures
//! a profile plans. A programme for a measure ("KfW-Programm Erneuerbare Energien
//! „Standard“", "Bundesförderung für effiziente Gebäude – Einzelmaßnahmen") says little
//! more than its title, so its text lies far from a profile that plans a photovoltaic
//! system or a new heating among other things; yet a funding advisor names it to every
//! organisation that may apply and plans the measure. Matching gives such a programme
//! the semantic floor of [`crate::matching::MatchOptions::measure_semantic`].
//!
//! The programme side is read from the title and the first sentence of the teaser; the
//! profile side from its topical texts, in German and English, for the measure itself
//! (a photovoltaic system, insulation, a heat pump), not for the topic at large: an
//! energy cooperative that "speaks of" renewables does not plan a measure on its own
//! building.

use std::sync::OnceLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use super::sector::re;
use crate::model::Grant;

/// An investment measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Measure {
    /// Photovoltaics.
    SolarPower,
    /// Wind turbines.
    WindPower,
    /// Electricity storage.
    PowerStorage,
    /// Energy efficiency of an existing building: envelope, windows, heating, ventilation,
    /// and the energy advice for it.
    BuildingEnergy,
    /// Energy efficiency of a business's equipment and processes: refrigeration, waste
    /// heat, process heat and steam, furnaces, machines and production lines.
    ProductionEnergy,
    /// LED lighting: street lighting, halls, sports grounds.
    Lighting,
}

impl Measure {
    pub fn label_de(self) -> &'static str {
        match self {
            Measure::SolarPower => "eine Photovoltaikanlage",
            Measure::WindPower => "eine Windenergieanlage",
            Measure::PowerStorage => "einen Stromspeicher",
            Measure::BuildingEnergy => "die energetische Sanierung Ihres Gebäudes",
            Measure::ProductionEnergy => {
                "energieeffizientere Anlagen und Prozesse in Ihrem Betrieb"
            }
            Measure::Lighting => "die Umstellung der Beleuchtung auf LED",
        }
    }

    pub fn label_en(self) -> &'static str {
        match self {
            Measure::SolarPower => "a photovoltaic system",
            Measure::WindPower => "a wind turbine",
            Measure::PowerStorage => "power storage",
            Measure::BuildingEnergy => "the energy-efficient renovation of your building",
            Measure::ProductionEnergy => {
                "more energy-efficient equipment and processes in your business"
            }
            Measure::Lighting => "the switch of your lighting to LED",
        }
    }
}

/// Programme side: the words of a title or teaser by which a programme funds measures,
/// those measures, and the words that make a programme about something else (heat from
/// renewables is process heat or a heat network, not power; research is no investment).
const PROGRAMME: &[(&str, &[Measure], &str)] = &[
    (
        r"erneuerbare[nr]? energien|sonne, wind",
        &[
            Measure::SolarPower,
            Measure::WindPower,
            Measure::PowerStorage,
        ],
        RENEWABLE_OTHER,
    ),
    (
        r"photovoltaik|solar",
        &[Measure::SolarPower],
        RENEWABLE_OTHER,
    ),
    (r"windenergie", &[Measure::WindPower], RENEWABLE_OTHER),
    (
        r"stromspeicher|batteriespeicher",
        &[Measure::PowerStorage],
        RENEWABLE_OTHER,
    ),
    (
        r"effiziente gebäude|gebäudesanierung|heizungsförderung|energiekredit gebäude|energieberatung für nichtwohngebäude|bestandsgebäude|energetische[ns]? (sanierung|niveau|modernisierung)",
        &[Measure::BuildingEnergy],
        r"neubau|forschung",
    ),
    (
        r"energie- und ressourceneffizienz in der wirtschaft|energieeffizienzprogramm – produktionsanlagen|energieeffizienz in (unternehmen|ihrem betrieb)|energieeffizienz und co2-einsparung in landwirtschaft|klimaschutzoffensive für unternehmen|klimaschutzmaßnahmen in ihrem unternehmen",
        &[Measure::ProductionEnergy],
        r"transformationspl|forschung|mess-, steuer-",
    ),
    (
        r"kommunaler klimaschutz|kommunalrichtlinie",
        &[Measure::Lighting],
        r"natürlicher klimaschutz",
    ),
];

const RENEWABLE_OTHER: &str = r"wärme|heizwerk|offshore|kerosin|forschung|demonstration|fanggerät";

/// Profile side: the words by which a profile plans a measure.
const PROFILE: &[(Measure, &str)] = &[
    (
        Measure::SolarPower,
        r"photovolta|pv-anlage|\bpv\b|solaranlage|solarstrom|solardach|solarmodul|solar panels?|solar (power )?(system|array|plant|installation)|rooftop solar",
    ),
    (
        Measure::WindPower,
        r"windkraftanlage|windenergieanlage|windrad|windräder|windpark|wind turbines?|wind farm",
    ),
    (
        Measure::PowerStorage,
        r"batteriespeicher|stromspeicher|battery storage|storage batter",
    ),
    (
        Measure::BuildingEnergy,
        r"energetisch\w* (sanier|modernisier|ertüchtig)|(gebäude|halle|heim|rathaus|kita)\w*\b[^.;]{0,80}\b(energieeffizient(er)?\b|energetisch (sanier|modernisier))|wärmedämm|dämmung|dämmen|gebäudehülle|fenster (austauschen|erneuern|ersetzen)|neue fenster|heizung\w* (erneuer|austausch|ersetz|modernisier|tausch)|heizungstausch|wärmepumpe|lüftungsanlage|wärmerückgewinnung|energy[- ]efficien\w* (renovation|refurbishment|retrofit)|energetic renovation|energy renovation|renovat\w* (it |them )?for energy efficiency|\b(building|clubhouse|house|hall|school|premises)s?\b[^.;]{0,80}\bmore energy[- ]efficient|insulat|new windows|replace\w* (the |our |its )?(old |oil |gas )*(heating|boiler|windows)|heat pump|ventilation system|heat recovery|building envelope|retrofit",
    ),
    (
        Measure::ProductionEnergy,
        r"kältetechnik|kälteanlage|kältemaschine|kühltechnik|kühlzelle|kühltheke|kühlanlage|gärkühlung|kühl- und kälte|refrigeration (system|equipment|unit)|cooling (system|technology|equipment)|cold rooms?|fermentation cooling|\babwärme|(recover\w*|us\w*|utili[sz]\w*) (the )?waste heat|waste[- ]heat (recovery|utili[sz]ation)|prozesswärme|dampferzeug|dampfkessel|process heat|steam (generation|boiler)|(schmelz|induktions|kühl|glüh)öfen|elektrische\w* öfen|öfen auf strom|umstellung der öfen|(melting|induction|annealing|electric) (furnaces?|ovens?)|switching the ovens|energieeffizient\w* (linie|anlage|maschine|produktion|fertigung)|energiesparend\w* (linie|anlage|maschine|sudhaus|kühl)|(fertigung|produktion)\w*\b[^.;]{0,40}\benergieeffizienter|energy[- ]efficient (line|machine|production|equipment)|all-electric",
    ),
    (
        Measure::Lighting,
        r"\b(auf|to) led\b|\bled[- ]?(beleuchtung|leuchten|lampen|flutlicht|strahler|lights?|lighting|floodlights?|street ?lights?|street ?lighting)|hallenbeleuchtung\w* (erneuer|umstell|austausch|ersetz|moderni)|(straßenbeleuchtung|flutlicht)\w* (erneuer|umstell|austausch|ersetz|moderni)",
    ),
];

struct Rules {
    programme: Vec<(Regex, &'static [Measure], Regex)>,
    profile: Vec<(Measure, Regex)>,
}

fn rules() -> &'static Rules {
    static R: OnceLock<Rules> = OnceLock::new();
    R.get_or_init(|| Rules {
        programme: PROGRAMME
            .iter()
            .map(|(p, m, not)| (re(p), *m, re(not)))
            .collect(),
        profile: PROFILE.iter().map(|(m, p)| (*m, re(p))).collect(),
    })
}

/// The measures programme `grant` funds, read from its title and the first sentence of
/// its teaser.
pub fn of_programme(grant: &Grant) -> Vec<Measure> {
    let short = grant.short_description.as_deref().unwrap_or("");
    let text = format!("{} {}", grant.title, super::areas::first_sentence(short));
    let mut out: Vec<Measure> = Vec::new();
    for (words, measures, other) in &rules().programme {
        if words.is_match(&text) && !other.is_match(&text) {
            for m in *measures {
                if !out.contains(m) {
                    out.push(*m);
                }
            }
        }
    }
    out
}

/// The measures a profile's topical text plans.
pub fn in_profile(text: &str) -> Vec<Measure> {
    rules()
        .profile
        .iter()
        .filter(|(_, r)| r.is_match(text))
        .map(|(m, _)| *m)
        .collect()
}

/// The first measure a programme funds that the profile plans.
pub fn shared(programme: &[Measure], profile: &[Measure]) -> Option<Measure> {
    programme.iter().copied().find(|m| profile.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::test_grant as grant;

    /// Each text plans exactly `measure`.
    fn plans(texts: &[&str], measure: Measure) {
        for text in texts {
            assert_eq!(in_profile(text), vec![measure], "{text}");
        }
    }

    /// No text plans a measure.
    fn plans_nothing(texts: &[&str]) {
        for text in texts {
            assert!(in_profile(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn a_programme_for_renewable_power_is_not_one_for_renewable_heat() {
        let power = grant(
            "Förderung im Rahmen des KfW-Programmes für Erneuerbare Energien „Standard“",
            "",
            "loan",
        );
        assert_eq!(
            of_programme(&power),
            vec![
                Measure::SolarPower,
                Measure::WindPower,
                Measure::PowerStorage
            ]
        );
        let wind = grant(
            "Förderung im Rahmen des Programmes „Bürgerenergiegesellschaften“ bei Windenergie an Land",
            "",
            "subsidy",
        );
        assert_eq!(of_programme(&wind), vec![Measure::WindPower]);
        let heat = grant(
            "Bundesförderung für Energie- und Ressourceneffizienz in der Wirtschaft (Kredit) – Förderung von Prozesswärme aus erneuerbaren Energien (Modul 2)",
            "",
            "loan",
        );
        assert_eq!(of_programme(&heat), vec![Measure::ProductionEnergy]);
    }

    #[test]
    fn efficiency_in_business_is_a_measure_but_a_plan_or_software_is_not() {
        let cross = grant(
            "Bundesförderung für Energie- und Ressourceneffizienz in der Wirtschaft (Zuschuss) – Förderung von Querschnittstechnologien (Modul 1)",
            "Das Bundesministerium für Wirtschaft und Energie (BMWE) fördert Maßnahmen von Unternehmen zur Steigerung der Energie- und Ressourceneffizienz.",
            "subsidy",
        );
        assert_eq!(of_programme(&cross), vec![Measure::ProductionEnergy]);
        let rural = grant(
            "Sonderprogramm „Energieeffizienz in Unternehmen“",
            "Wenn Sie als kleines oder mittleres Unternehmen ein Investitionsvorhaben zur Steigerung der Energieeffizienz in Ihrem Betrieb planen, können Sie einen Zuschuss bekommen.",
            "subsidy",
        );
        assert_eq!(of_programme(&rural), vec![Measure::ProductionEnergy]);
        for other in [
            "Bundesförderung für Energie- und Ressourceneffizienz in der Wirtschaft (Zuschuss) – Förderung von Transformationsplänen (Modul 5)",
            "Bundesförderung für Energie- und Ressourceneffizienz in der Wirtschaft (Kredit) – Förderung von Mess-, Steuer- und Regelungstechnik, Sensorik und Energiemanagement-Software (Modul 3)",
            "KMU-innovativ: Energieeffizienz, Klimaschutz und Klimaanpassung",
        ] {
            assert!(of_programme(&grant(other, "", "subsidy")).is_empty(), "{other}");
        }
    }

    #[test]
    fn a_profile_plans_efficient_equipment_by_naming_it() {
        plans(
            &[
                "Unsere Kühl- und Kältetechnik ist veraltet: Wir wollen sie erneuern und die Abwärme für Warmwasser nutzen.",
                "Wir möchten auf elektrische Schmelz- und Kühlöfen umstellen.",
                "Wir wollen ein neues, energiesparendes Sudhaus einbauen.",
                "We want to replace old hydraulic injection moulding machines with all-electric ones and recover waste heat from the cooling system.",
                "our pasteurisation line is thirty years old: we want to replace it with an energy-efficient line",
            ],
            Measure::ProductionEnergy,
        );
        plans_nothing(&[
            "Our platform tells facility managers where they waste heat and electricity.",
            "Für die Tafel brauchen wir ein elektrisches Kühlfahrzeug.",
            "we need an electric refrigerated vehicle",
        ]);
    }

    #[test]
    fn existing_buildings_are_read_from_title_or_teaser_but_new_ones_are_not() {
        let single = grant(
            "Bundesförderung für effiziente Gebäude – Einzelmaßnahmen (BEG EM)",
            "Wenn Sie in Bestandsgebäude investieren und das energetische Niveau des Gebäudes verbessern möchten, können Sie eine Förderung erhalten.",
            "subsidy",
        );
        assert_eq!(of_programme(&single), vec![Measure::BuildingEnergy]);
        let new = grant(
            "Bundesförderung für effiziente Gebäude – Klimafreundlicher Neubau – Nichtwohngebäude",
            "",
            "loan",
        );
        assert!(of_programme(&new).is_empty());
    }

    #[test]
    fn a_profile_plans_the_measure_not_the_topic() {
        assert_eq!(
            in_profile(
                "Wir wollen eine Photovoltaikanlage auf dem Hallendach und eine Wärmepumpe."
            ),
            vec![Measure::SolarPower, Measure::BuildingEnergy]
        );
        assert_eq!(
            in_profile("we want to install a ventilation system with heat recovery"),
            vec![Measure::BuildingEnergy]
        );
        plans(
            &[
                "Außerdem müssen unsere Gebäude besser vor Hitze geschützt und energieeffizienter werden.",
                "Our clubhouse and changing rooms from the 1970s need energy renovation.",
                "We want to convert an apartment building and renovate it for energy efficiency.",
            ],
            Measure::BuildingEnergy,
        );
        assert_eq!(
            in_profile("Wir wollen unsere Produktion energieeffizienter machen."),
            vec![Measure::ProductionEnergy]
        );
        assert!(in_profile(
            "Im Gebäude der Hochschule entwickeln wir energieeffiziente Rechenzentren."
        )
        .is_empty());
        assert!(
            in_profile("Wir beraten Kommunen zur Energiewende und zu erneuerbaren Energien.")
                .is_empty()
        );
    }

    #[test]
    fn led_lighting_is_a_measure_of_the_municipal_climate_programme() {
        let municipal = grant(
            "Bundesförderung kommunaler Klimaschutz (Kommunalrichtlinie)",
            "Wenn Sie in Kommunen Vorhaben zur Minderung von Treibhausgasen planen, können Sie einen Zuschuss erhalten.",
            "subsidy",
        );
        assert_eq!(of_programme(&municipal), vec![Measure::Lighting]);
        let natural = grant(
            "Förderung im Rahmen der Maßnahme Natürlicher Klimaschutz in Kommunen (NKK)",
            "",
            "subsidy",
        );
        assert!(of_programme(&natural).is_empty());
        plans(
            &[
                "Außerdem wollen wir die Straßenbeleuchtung auf LED umstellen.",
                "we want to replace the floodlights on our pitch with LED lights",
                "the conversion of street lighting to LED",
            ],
            Measure::Lighting,
        );
        assert!(in_profile("We are a research-led SME with 28 employees.").is_empty());
        assert!(in_profile("Wir entwickeln LED-Treiber für die Industrie.").is_empty());
    }

    #[test]
    fn a_shared_measure_is_one_the_programme_funds_and_the_profile_plans() {
        use Measure::*;
        assert_eq!(
            shared(&[BuildingEnergy], &[SolarPower, BuildingEnergy]),
            Some(BuildingEnergy)
        );
        assert_eq!(shared(&[WindPower], &[SolarPower, BuildingEnergy]), None);
    }
}

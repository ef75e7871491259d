//! Sectors a programme is restricted to, read from its title ("Exportinitiative
//! Gesundheitswirtschaft", "BMEL-Exportförderprogramm", "Energieberatung für
//! Wohngebäude"), and the sectors a profile's texts speak of. A programme whose title
//! names sectors none of which the profile mentions is a kind misfit for it: an
//! export programme for the health economy does not serve a pump manufacturer, an
//! agricultural start-up fund not a smart-grid start-up.
//!
//! The programme side is read from the title only (a description names many sectors
//! in passing); the profile side from all its texts, keywords and target groups, in
//! German and English, with generous word stems, so that a profile that touches a
//! sector at all is never treated as a stranger to it.

use std::collections::HashSet;
use std::sync::OnceLock;

use regex::Regex;
use serde::Serialize;

/// A sector a programme's title may restrict it to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Sector {
    Housing,
    Agriculture,
    Health,
    Security,
    Quantum,
    Media,
    Culture,
    Maritime,
    Aviation,
    Transport,
    Tourism,
    Childcare,
    Sport,
    CoalRegions,
    International,
    Broadband,
    Geothermal,
    HeatNetworks,
    TrainingCentres,
    Forestry,
    Fisheries,
    NewBuildings,
    Production,
}

/// One sector: the words of a title that restrict a programme to it, and the words by
/// which a profile speaks of it.
struct Rule {
    sector: Sector,
    title: Regex,
    profile: Regex,
}

/// A case-insensitive rule whose word boundaries are ASCII (`(?-u:\b)`): a Unicode `\b`
/// makes the regex engine leave its fast DFA on German text, and the profile side runs on
/// every matching request (measured: 2.7 of a repeated profile's 6.7 ms). An ASCII boundary
/// also falls after an umlaut or ß ("…öwald"), which no word these rules look for meets.
pub(crate) fn re(p: &str) -> Regex {
    let ascii = p.replace(r"\b", r"(?-u:\b)");
    Regex::new(&format!("(?i){ascii}")).expect("valid pattern")
}

fn rules() -> &'static [Rule] {
    use Sector::*;
    static R: OnceLock<Vec<Rule>> = OnceLock::new();
    R.get_or_init(|| {
        let table: &[(Sector, &str, &str)] = &[
            (
                Housing,
                r"wohngebäud|wohnraum|wohnungsbau|wohnungswesen|wohneigentum|eigenwohn|eigenheim|mietwohn|wohnungen\b|wohnheim|\bwohnen\b",
                r"wohnung|wohnraum|wohngebäude|wohnhaus|wohnhäuser|mieter|vermiet|eigenheim|wohneigentum|einfamilienhaus|mehrfamilienhaus|wohnen|\bhousing\b|apartment|residential|\bhome ?owners?\b|\bflats?\b",
            ),
            (
                Agriculture,
                r"landwirt|agrar|rentenbank|\bbmel\b|ernährungswirtschaft|lebensmittel|weinbau|gartenbau|tierhalt|tierwohl|milch|\bland-(,| und| oder) ",
                r"landwirt|agrar|\bbauer|bäuer|\bfarm|agri|\bhof\b|höfe|milch|dairy|wein|winzer|\bgarten|gärtn|\btier|nutztier|animal|lebensmittel|food|ernährung|fisch|fish|forst|forest|\bwald(es|s)?\b|\bwälder|holzwirtschaft|sägewerk|sawmill|rural|ländlich|cheese|käse|vieh|livestock|crop|acker|vineyard|horticult|imker|\bbees?\b",
            ),
            (
                Health,
                r"gesundheit|medizin|\bklinik|\bkrankenh|arznei|pharma|pflegeeinricht|pflegeberuf|altenpflege|pflegekräft|pflegeversicher|pflegebedürft|\bpflege\b|hospiz",
                r"gesundheit|medizin|medical|health|pflegedienst|pflegeheim|pflegeeinricht|pflegekräft|pflegekraft|pflegebedürf|altenpflege|krankenpflege|pflegeberuf|pflegeschul|pflegeversicher|ambulanten? pflege|stationären? pflege|in der pflege\b|\bcare\b|klinik|clinic|krankenh|hospital|\barzt|ärzt|\bdoctors?\b|physician|pharma|therap|patient|diagnostik|diagnostic|hospiz|hospice|nursing|senior|ältere|elderly|behinder|disab",
            ),
            (
                Security,
                r"sicherheitstechn|zivile sicherheit|sicherheitsforsch|verteidigung|rüstung",
                r"sicherheitstechn|sicherheitsforsch|zivile(n)? sicherheit|security|katastrophenschutz|bevölkerungsschutz|zivilschutz|civil protection|defen[cs]e|verteidig|rüstung",
            ),
            (Quantum, r"quant", r"quant|photon"),
            (
                Media,
                r"\bfilm|kino|\bmedien|games|computerspiel|kreativwirtschaft|\bverlag(e|es|s)?\b|verlagswesen|buchhandel",
                r"film|kino|cinema|\bmedia|medien|game|\bspiele?\b|computerspiel|videospiel|spieleentwick|video|kreativ|creative|verlag|publish|\bbooks\b|\bbuch\b|\bbücher|buchhandel",
            ),
            (
                Culture,
                r"\bkultur|soziokultur|\bkunst|künstler|musik|theater|museum|museen|denkmal|bibliothek|heimatpflege|brauchtum",
                r"kultur|cultur|kunst|\bart\b|\barts\b|artist|künstler|music|musik|chor|choir|theater|theatre|museum|denkmal|heritage|monument|bibliothek|library|heimat|brauchtum|tradition|konzert|concert|orchest|festival",
            ),
            (
                Maritime,
                r"maritim|schiff|\bhafen|häfen|werft|meerestechn|reeder",
                r"maritim|schiff|\bships?\b|shipping|shipbuild|hafen|häfen|\bports?\b|werft|shipyard|meer|marine|\bsea\b|reeder|vessel|boot|boat|fähr|ferry|wasserstraß|waterway",
            ),
            (
                Aviation,
                r"luftfahrt|raumfahrt|aviation|flughäfen|flughafen",
                r"luftfahrt|raumfahrt|aero|spacecraft|space industry|space technolog|aviation|flug|aircraft|drohne|drone|satellit",
            ),
            (
                Transport,
                r"elektromobil|\bverkehr|verkehrs|radverkehr|nahverkehr|güterkraft|fahrzeug|\bbusse?\b|\bbahn|schienen|logistik|ladeinfrastruktur|\blkw|nutzfahrzeug",
                r"\bmobilität|elektromobil|e-mobil|\bmobility|verkehr|transport|fahrzeug|vehicle|\bbus(se|sen|ses)?\b|\bbus(unternehm|flotte|fahr|verkehr|lini|depot|betrieb|bahnhof|haltestell)|omnibus|linienbus|reisebus|schulbus|elektrobus|bahn|rail|\brad\b|\bradweg|\bradverkehr|\bradfahr|\bräder|fahrrad|bike|\bcycl|bicycl|logist|\bautos?\b|autohaus|automobil|automotive|\bcars?\b|fleet|flotte|lkw|truck|ladesäul|ladestation|ladepunkt|ladeinfra|charging|pendl|commut|taxi|öpnv|spedition|freight|shuttle",
            ),
            (
                Tourism,
                r"touris|gastgewerbe|\bhotel|beherberg",
                r"touris|hotel|gastronom|gastgewerbe|gästehaus|\bgäste|\bgasthof|\bgasthaus|\bgaststätte|ferien|holiday|travel|\breise|urlaub|camping|beherberg|übernacht|visitor|besucher",
            ),
            (
                Childcare,
                r"frühkindlich|kindertages|\bkitas?\b|kinderbetreuung|kinderkrippe",
                r"\bkitas?\b|kindertages|kindergart|kindergärt|kinderbetreuung|krippe|frühkindlich|tagesmutter|tagesmütter|erzieher|childcare|child care|daycare|day care|nursery|preschool",
            ),
            (
                Sport,
                r"\bsport",
                r"sport|schwimm|\bswim|freibad|hallenbad|strandbad|bäder|\bturn(en|er|halle|verein)|gymnast|fußball|football|soccer|handball|volleyball|basketball|hockey|tennis|\breit(en|er|sport|verein|halle)|\bski(en|ing|club|verein)?\b|kletter|climbing|athlet|fitness|\bbewegung|übungsleiter|\btanz|\bdanc|\bruder|rowing|\bkanu|canoe|kayak|\bsegel|sailing|\bgolf|\byoga|\bjudo|karate|\bbox(en|ing)|\bschach|chess",
            ),
            (
                CoalRegions,
                r"\bkohle\b|kohleregion|kohlekraftwerk|braunkohle|steinkohle|\brevier",
                r"kohle|coal|revier|lausitz|lusatia|strukturwandel|structural change|strukturstärk|bergbau|mining|tagebau|cottbus|spremberg|weißwasser|hoyerswerda|görlitz|bautzen|leipzig|\bhalle\b|merseburg|zeitz|altenburg|helmstedt|aachen|düren|mönchengladbach|erftkreis|rhein-erft|heinsberg",
            ),
            (
                International,
                r"internationa|\bausland|auslands|export|weltweit|\bglobal|partnerländ|entwicklungsländ|entwicklungszusammenarbeit|drittstaat|grenzüberschreit|interreg|transnational|klimaschutzinitiative",
                // Countries by name: `names_a_country`.
                r"internationa|\bausland|auslands|abroad|foreign|export|weltweit|worldwide|global|partnerländ|partnerland|partner countr|overseas|übersee|drittstaat|entwicklungszusammenarbeit|development cooperation|grenzüberschreit|grenznah|grenzregion|cross-border|\beurop|\beu\b|\bmesse|messe\b|fachmessen|auslandsmessen|leitmessen|trade fair|jugendaustausch|schüleraustausch|studierendenaustausch|youth exchange|student exchange|migra|zugewander|geflüchtet|flüchtling|refugee|einwander|immigra|fachkräfte aus|workers from|französisch|\bfrench|polnisch|\bpolish|tschechisch|österreichisch|niederländisch|\bdutch|italienisch|\bitalian|spanisch|\bspanish|chinesisch|\bchinese|indisch|japanisch|japanese|amerikanisch|american|\basien|\basia\b|afrika|africa|lateinamerika|latin america|skandinav|scandinav|baltikum|\bbaltic|nahost|middle east",
            ),
            (
                Broadband,
                r"digitale[rn]? infrastruktur|breitband|gigabit|glasfaser|mobilfunk|telekommunikationsnetz",
                r"breitband|broadband|glasfaser|fibre|fiber|gigabit|mobilfunk|mobile network|telekommunikation|telecom|netzbetreiber|network operator|funkloch|internetversorgung|internetanschl|internet access|internet connection|\b5g\b|\bwlan\b|wi-?fi|schnelles internet|fast internet|digitale infrastruktur|digital infrastructure",
            ),
            (
                Geothermal,
                r"geotherm|erdwärme",
                r"geotherm|erdwärme|erdsonde|erdwärmesonde|ground-source|ground source|tiefenbohr|wärmebohr",
            ),
            (
                HeatNetworks,
                r"wärmenetz|fernwärme|nahwärme|wärmeplanung",
                r"wärmenetz|fernwärme|nahwärme|heat network|district heat|heating network|wärmeplanung|heat planning|heizwerk|heating plant|wärmeversorgung|heat supply",
            ),
            (
                TrainingCentres,
                r"überbetriebliche|berufsbildungsstätte|bildungsstätte|\bübs\b|bildungszentren|berufsbildungszentr",
                r"überbetrieblich|bildungsstätte|bildungszentrum|bildungszentren|ausbildungszentrum|training cent(re|er)|lehrwerkstatt|\binnung|kreishandwerkerschaft|handwerkskammer|industrie- und handelskammer|\bihk\b|\bkammer\b|chamber of|bildungsträger|training provider|berufsbildungswerk",
            ),
            (
                Forestry,
                r"forstwirt|forstbetrieb|forstlich|\bforst|\bwald|wälder|waldbau",
                r"forst|forest|\bwald(es|s)?\b|\bwälder|waldbesitz|woodland|holzwirtschaft|sägewerk|sawmill",
            ),
            (
                Fisheries,
                r"aquakultur|fischerei|fischwirtschaft|fangtätigkeit|fanggerät",
                r"fisch|fish|aquakultur|aquacultur|teichwirtschaft|karpfen|forelle|\bcarp\b|trout|angler|angelverein|angelsport",
            ),
            (
                NewBuildings,
                r"neubau",
                r"neubau|neu (zu )?(bauen|errichten)|neu gebaut|errichten|errichtung|\bbauen (wir |sie )?(ein|eine|einen|unser|unsere|unseren) neue|neues gebäude|neue[nr]? (halle|gebäude)|\bbau (von|und|neuer|eines|einer)\b|\banbau(ten)?\b|erweiterungsbau|\berweitern\b|zusätzliche[nr]? (halle|gebäude|räume)|new[- ]build|newly built|new building|build(ing)? (a|an|our) new|\bconstruct|\bextension\b|\bextend\b|additional (hall|building)",
            ),
            (
                Production,
                r"prozesswärme|produktionsanlagen|anlagen und prozessen|produktionsverfahren|prozessemission|dekarbonisierung der industrie|industrie und klimaschutz",
                r"produktion|produzier|fertigung|\bfertigen|herstell|manufactur|\bproduc|fabrik|factory|\bwerk\b|werkstatt|werkstätten|workshop|industrie|industrial|\bplants?\b|maschine|machine|\banlagen|\böfen|\bofen|oven|kiln|furnace|backstube|bakehouse|bäckerei|bakery|metzgerei|brauerei|brewery|molkerei|dairy|kelterei|juice press|gießerei|foundry|\bguss|cast|schmelz|smelt|trocknung|drying|kälteanlage|kühlhaus|cold store|spritzguss|injection|galvani|lackier|\bpress|wäscherei|laundry|waschstraß|wärmerückgewinnung|heat recovery|abwärme|waste heat|druckluft|compressed air|großküche|kantine|canteen|catering",
            ),
        ];
        table
            .iter()
            .map(|&(sector, title, profile)| Rule {
                sector,
                title: re(title),
                profile: re(profile),
            })
            .collect()
    })
}

impl Sector {
    /// A restriction that holds whatever the programme's other sectors: business abroad,
    /// new buildings ([`misfit`]).
    pub fn restricts_on_its_own(self) -> bool {
        matches!(self, Self::International | Self::NewBuildings)
    }

    /// A trade or field a population of organisations works in, as qualification reads a
    /// prompt's topic: not business abroad, new buildings or production, which any
    /// organisation's project may involve.
    pub fn names_a_trade(self) -> bool {
        !matches!(
            self,
            Self::International | Self::NewBuildings | Self::Production
        )
    }

    /// German label for reasons ("Gesundheit und Pflege").
    pub fn label_de(self) -> &'static str {
        match self {
            Self::Housing => "Wohngebäude und Wohnraum",
            Self::Agriculture => "Land- und Ernährungswirtschaft",
            Self::Health => "Gesundheit und Pflege",
            Self::Security => "Sicherheits- und Verteidigungstechnik",
            Self::Quantum => "Quantentechnologien",
            Self::Media => "Film, Medien und Kreativwirtschaft",
            Self::Culture => "Kunst und Kultur",
            Self::Maritime => "Schifffahrt und Häfen",
            Self::Aviation => "Luft- und Raumfahrt",
            Self::Transport => "Verkehr und Fahrzeuge",
            Self::Tourism => "Tourismus und Gastgewerbe",
            Self::Childcare => "Kindertagesbetreuung",
            Self::Sport => "Sport",
            Self::CoalRegions => "Kohleregionen",
            Self::International => "internationale Zusammenarbeit und Auslandsgeschäft",
            Self::Broadband => "Breitband- und Telekommunikationsnetze",
            Self::Geothermal => "Geothermie",
            Self::HeatNetworks => "Wärmenetze und Wärmeplanung",
            Self::TrainingCentres => "überbetriebliche Bildungsstätten",
            Self::Forestry => "Forstwirtschaft und Wald",
            Self::Fisheries => "Fischerei und Aquakultur",
            Self::NewBuildings => "Neubauten",
            Self::Production => "Produktionsanlagen und -prozesse",
        }
    }

    pub fn label_en(self) -> &'static str {
        match self {
            Self::Housing => "residential buildings and housing",
            Self::Agriculture => "agriculture and food",
            Self::Health => "health and care",
            Self::Security => "security and defence technology",
            Self::Quantum => "quantum technologies",
            Self::Media => "film, media and the creative industries",
            Self::Culture => "arts and culture",
            Self::Maritime => "shipping and ports",
            Self::Aviation => "aviation and space",
            Self::Transport => "transport and vehicles",
            Self::Tourism => "tourism and hospitality",
            Self::Childcare => "childcare",
            Self::Sport => "sport",
            Self::CoalRegions => "coal regions",
            Self::International => "international cooperation and business abroad",
            Self::Broadband => "broadband and telecommunication networks",
            Self::Geothermal => "geothermal energy",
            Self::HeatNetworks => "heat networks and heat planning",
            Self::TrainingCentres => "inter-company vocational training centres",
            Self::Forestry => "forestry and woodland",
            Self::Fisheries => "fisheries and aquaculture",
            Self::NewBuildings => "new buildings",
            Self::Production => "production plants and processes",
        }
    }
}

/// The sectors a programme's title restricts it to. "Wohngebäude/Nichtwohngebäude" is
/// for every building, so a title naming "Nichtwohn…" is not residential; a title naming
/// "Neubau" with "Ausbau", a renovation or the existing stock is not for new buildings
/// only; the name of a
/// fund the programme draws on ("im Rahmen der Gemeinschaftsaufgabe „Verbesserung der
/// Agrarstruktur …“", "… des Europäischen Landwirtschaftsfonds für die Entwicklung des
/// ländlichen Raums") is no sector: forestry measures of the agricultural funds are for
/// forests.
pub fn of_title(title: &str) -> Vec<Sector> {
    static FUNDS: OnceLock<Regex> = OnceLock::new();
    let funds = FUNDS.get_or_init(|| {
        re(r"verbesserung der agrarstruktur und des küstenschutzes|europäischen landwirtschaftsfonds für die entwicklung des ländlichen raums")
    });
    let title = funds.replace_all(title, " ");
    let lower = title.to_lowercase();
    let non_residential = lower.contains("nichtwohn");
    let not_only_new = ["ausbau", "sanier", "modernis", "bestand", "reaktivier"]
        .iter()
        .any(|w| lower.contains(w));
    rules()
        .iter()
        .filter(|r| !(r.sector == Sector::Housing && non_residential))
        .filter(|r| !(r.sector == Sector::NewBuildings && not_only_new))
        .filter(|r| r.title.is_match(&title))
        .map(|r| r.sector)
        .collect()
}

/// The sectors a profile's texts speak of; business abroad also when they name a
/// country ([`names_a_country`]).
pub fn in_profile(text: &str) -> Vec<Sector> {
    rules()
        .iter()
        .filter(|r| {
            r.profile.is_match(text) || (r.sector == Sector::International && names_a_country(text))
        })
        .map(|r| r.sector)
        .collect()
}

const COUNTRIES: &str = include_str!("countries.txt");

/// The text names a country other than Germany (`countries.txt`, English and German
/// names, compared folded as whole words: "Tansania", "the United States").
pub fn names_a_country(text: &str) -> bool {
    static C: OnceLock<(HashSet<String>, usize)> = OnceLock::new();
    let (names, longest) = C.get_or_init(|| {
        let names: HashSet<String> = COUNTRIES
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(crate::text::fold_name)
            .collect();
        let longest = names
            .iter()
            .map(|n| n.split(' ').count())
            .max()
            .unwrap_or(1);
        (names, longest)
    });
    let folded = crate::text::fold_name(text);
    let words: Vec<&str> = folded.split(' ').collect();
    (0..words.len()).any(|i| {
        (1..=*longest)
            .take_while(|n| i + n <= words.len())
            .any(|n| names.contains(&words[i..i + n].join(" ")))
    })
}

/// A programme restricted to a sector the profile speaks of: a topical sector of its title
/// (not business abroad alone) is one of the profile's, and it is no [`misfit`].
pub fn serves(programme: &[Sector], profile: &[Sector]) -> bool {
    programme
        .iter()
        .any(|s| *s != Sector::International && profile.contains(s))
        && !misfit(programme, profile)
}

/// A programme restricted to sectors (`programme`) none of which the profile speaks of.
/// [`Sector::International`] and [`Sector::NewBuildings`] restrict on their own: a
/// programme for exports of music ("Go! Export … Initiative Musik") needs a profile that
/// speaks of culture and of business abroad, one for new residential buildings a profile
/// that speaks of housing and of building.
pub fn misfit(programme: &[Sector], profile: &[Sector]) -> bool {
    let (own, topical): (Vec<Sector>, Vec<Sector>) =
        programme.iter().partition(|s| s.restricts_on_its_own());
    own.iter().any(|s| !profile.contains(s))
        || (!topical.is_empty() && !topical.iter().any(|s| profile.contains(s)))
}

#[cfg(test)]
mod tests {
    use super::Sector::*;
    use super::*;

    #[test]
    fn business_abroad_is_a_restriction_of_its_own() {
        assert_eq!(
            of_title("Exportkreditgarantien (Hermesdeckungen)"),
            [International]
        );
        assert_eq!(
            of_title("Go! Export Förderung der Initiative Musik"),
            [Culture, International]
        );
        assert!(
            of_title("Teilnahme mittelständischer Unternehmen an Auslandsmessen")
                .contains(&International)
        );
        // Profiles: words of business abroad, or a country by name.
        for text in [
            "Wir exportieren 60 Prozent unserer Maschinen.",
            "Seit 2019 pflegen wir eine Partnerschaft mit einem Krankenhaus in Tansania.",
            "Our customers are in the United States and Vietnam.",
            "Wir wollen auf einer Fachmesse ausstellen.",
        ] {
            assert!(in_profile(text).contains(&International), "{text}");
        }
        for text in [
            "Wir digitalisieren unsere Buchhaltung.",
            "Die Heizung ist angemessen, der Austausch der Fenster begrenzt die Kosten.",
            "Please help us to insulate our workshop.",
        ] {
            assert!(!in_profile(text).contains(&International), "{text}");
        }
        // A programme abroad needs a profile abroad, also when its other sector fits …
        assert!(misfit(&[Culture, International], &[Culture]));
        assert!(misfit(&[Culture, International], &[International]));
        assert!(!misfit(
            &[Culture, International],
            &[Culture, International]
        ));
        assert!(!misfit(&[International], &[International, Health]));
        assert!(misfit(&[International], &[]));
    }

    #[test]
    fn a_programme_serves_a_profile_of_its_topical_sector() {
        let afp = of_title("EULLE – Agrarinvestitionsförderungsprogramm (AFP)");
        let winery =
            in_profile("Familienweingut an der Mosel, wir stellen auf ökologischen Weinbau um");
        assert!(serves(&afp, &winery));
        // Not a profile of another sector, not a programme open to every sector …
        assert!(!serves(&afp, &in_profile("Wir sind eine Softwarefirma.")));
        assert!(!serves(&of_title("Digitalbonus"), &winery));
        // … and business abroad alone is no topic: an export programme of another
        // sector does not serve an exporter, one of its own sector does.
        let exporter = in_profile("Wir exportieren 60 Prozent unserer Weine nach Japan.");
        assert!(!serves(
            &of_title("Exportkreditgarantien (Hermesdeckungen)"),
            &exporter
        ));
        assert!(!serves(
            &of_title("Exportinitiative Gesundheitswirtschaft"),
            &exporter
        ));
        assert!(serves(&of_title("BMEL-Exportförderprogramm"), &exporter));
        assert!(!serves(&of_title("BMEL-Exportförderprogramm"), &winery));
    }

    /// Programmes for those who build networks, drill for heat or run training centres
    /// (the KfW "Investitionskredit für Digitale Infrastruktur", "Förderkredit
    /// Geothermie", "Förderung überbetrieblicher Berufsbildungsstätten (ÜBS)") serve the
    /// profiles that speak of it, not every company that digitalises, heats or trains.
    #[test]
    fn network_heat_and_training_centre_programmes_serve_those_who_speak_of_them() {
        let loan = of_title("Investitionskredit für Digitale Infrastruktur – Standardvariante");
        assert_eq!(loan, [Broadband]);
        assert_eq!(of_title("Förderkredit Geothermie"), [Geothermal]);
        let ubs = of_title("Förderung überbetrieblicher Berufsbildungsstätten (ÜBS)");
        assert_eq!(ubs, [TrainingCentres]);
        let village = in_profile("Neun Weiler haben noch keinen Glasfaseranschluss.");
        assert!(serves(&loan, &village));
        let guild = in_profile("Der Verband betreibt eine überbetriebliche Bildungsstätte.");
        assert!(serves(&ubs, &guild));
        let bakery = in_profile(
            "Wir wollen unsere Bestellungen digitalisieren, eine Wärmepumpe einbauen und Lehrlinge ausbilden.",
        );
        for programme in [&loan, &ubs, &of_title("Förderkredit Geothermie")] {
            assert!(misfit(programme, &bakery), "{programme:?}");
        }
        assert!(!misfit(
            &of_title("Förderkredit Geothermie"),
            &in_profile("Heizen mit Erdwärme")
        ));
        let networks = of_title("Bundesförderung für effiziente Wärmenetze (BEW)");
        assert_eq!(networks, [HeatNetworks]);
        assert!(misfit(&networks, &bakery));
        assert!(serves(
            &networks,
            &in_profile("Wir planen ein Nahwärmenetz für das Dorf.")
        ));
    }

    #[test]
    fn titles_name_the_sectors_they_restrict_to() {
        assert_eq!(
            of_title("Exportinitiative Gesundheitswirtschaft"),
            [Health, International]
        );
        assert_eq!(
            of_title("BMEL-Exportförderprogramm"),
            [Agriculture, International]
        );
        assert_eq!(of_title("Energieberatung für Wohngebäude"), [Housing]);
        assert!(of_title("Bundesförderung für effiziente Gebäude – Nichtwohngebäude").is_empty());
        assert_eq!(
            of_title("NEXT.IN.NRW – Produkte aus Kultur, Medien, Kreativwirtschaft"),
            [Media, Culture]
        );
        // Words inside other words are no sector: "Verlagerung", "Kindertagespflege" (no
        // care of the sick or elderly), "Willkommenskultur".
        assert!(of_title("Modernisierung zur Verlagerung von Gütern").is_empty());
        assert_eq!(
            of_title("Betriebskosten der Kindertagespflege"),
            [Childcare]
        );
        assert!(of_title("Willkommenskultur in Unternehmen").is_empty());
        assert!(of_title("Markterschließungsprogramm für KMU").is_empty());
        assert_eq!(
            of_title("Aufbruch in den Revieren und an den Kohlekraftwerkstandorten"),
            [CoalRegions]
        );
        assert!(
            of_title("Vermeidung von Kohlendioxidemissionen durch Biomasseheizwerke").is_empty()
        );
    }

    /// Programmes for childcare or sport suit organisations that speak of them: a
    /// shipyard that wants to train apprentices is no Kita, a company's coaching or
    /// turnover is no sport.
    #[test]
    fn childcare_and_sport_programmes_need_a_profile_about_them() {
        let kita_staff = of_title(
            "Maßnahmen freier Träger und Kommunen zur Fachkräftegewinnung in der frühkindlichen Bildung und Betreuung",
        );
        assert_eq!(kita_staff, [Childcare]);
        let shipyard = in_profile(
            "Die Bootswerft baut Segelyachten. Wir möchten mehr Lehrlinge ausbilden und Fachkräfte gewinnen.",
        );
        assert!(misfit(&kita_staff, &shipyard));
        let kita = in_profile("Unser Verein betreibt zwei Kitas mit 120 Plätzen.");
        assert!(!misfit(&kita_staff, &kita));
        let sports_grounds = of_title("Förderung des Sportstättenbaus");
        assert_eq!(sports_grounds, [Sport]);
        let pool = in_profile("Unser Förderverein betreibt das Waldschwimmbad der Stadt.");
        assert!(!misfit(&sports_grounds, &pool));
        let firm = in_profile(
            "We want coaching for our managers; our annual turnover is 4 million euros.",
        );
        assert!(misfit(&sports_grounds, &firm));
    }

    /// Agriculture and forestry are read from what an organisation does, not from a word
    /// that merely starts like it: a pool in the woods, a boat builder and timber-frame
    /// carpentry are no forestry or farming; a forest and a farm are.
    #[test]
    fn agriculture_is_read_from_farms_and_forests_not_from_look_alikes() {
        for text in [
            "Unser Förderverein betreibt das Waldschwimmbad der Stadt.",
            "Wir sind eine Bootswerft mit zwölf Bootsbauern.",
            "We are a carpentry firm building timber-frame houses.",
        ] {
            assert!(!in_profile(text).contains(&Agriculture), "{text}");
        }
        for text in [
            "Wir bewirtschaften 400 Hektar Wald.",
            "Die Pflege unserer Wälder kostet viel.",
            "Wir sind ein Bauer mit 80 Milchkühen.",
            "We run a sawmill and a dairy farm.",
        ] {
            assert!(in_profile(text).contains(&Agriculture), "{text}");
        }
    }

    /// A sector is read from words that name it, not from words that contain one:
    /// "Sport" and "Export" hold no port, "business" no bus, "partnership" no ship, a shop
    /// ("Laden") no charging point, "Klimaschutz" no civil protection, "Preise" no travel;
    /// children are no childcare, "Bad Bevensen" is a town and the care of a site no
    /// health care.
    #[test]
    fn sectors_are_read_from_the_words_that_name_them() {
        for (text, sector) in [
            ("Wir machen Sport, Transport und Export.", Maritime),
            (
                "We are a small business with a strong partnership.",
                Maritime,
            ),
            ("We are a small business selling coffee.", Transport),
            ("Wir betreiben einen Laden mit Café.", Transport),
            ("Wir betreiben Recycling von Kunststoffen.", Transport),
            ("Klimaschutz und Naturschutz sind uns wichtig.", Security),
            ("Die Pflege der Anlage übernehmen Ehrenamtliche.", Health),
            ("Unsere Buchhaltung, zum Beispiel, ist digital.", Media),
            ("Die Preise im Landkreis steigen.", Tourism),
            ("Wir bieten Kurse für Kinder und Eltern an.", Childcare),
            ("Chor aus Bad Bevensen", Sport),
            ("We need more office space.", Aviation),
        ] {
            assert!(!in_profile(text).contains(&sector), "{text}: {sector:?}");
        }
        for (text, sector) in [
            ("Unser Busunternehmen fährt 30 Busse.", Transport),
            ("Wir suchen Busfahrerinnen für unsere Buslinien.", Transport),
            ("Wir bauen Ladestationen und einen Radweg.", Transport),
            ("Förderverein für den Katastrophenschutz", Security),
            ("ein ambulanter Pflegedienst mit 40 Pflegekräften", Health),
            ("Wir betreiben einen Hafen.", Maritime),
            ("Reisen für Senioren und Gäste", Tourism),
            ("Träger von zwei Kitas", Childcare),
            ("Wir sanieren das Freibad.", Sport),
        ] {
            assert!(in_profile(text).contains(&sector), "{text}: {sector:?}");
        }
    }

    #[test]
    fn a_programme_fits_when_the_profile_speaks_of_one_of_its_sectors() {
        let pumps = in_profile("Hersteller von Industriepumpen; wir wollen exportieren.");
        assert!(misfit(
            &of_title("Exportinitiative Gesundheitswirtschaft"),
            &pumps
        ));
        let clinic =
            in_profile("We run a rehabilitation clinic and want to treat patients from abroad.");
        assert!(!misfit(
            &of_title("Exportinitiative Gesundheitswirtschaft"),
            &clinic
        ));
        let at_home = in_profile("We run a rehabilitation clinic for 120 patients.");
        assert!(misfit(
            &of_title("Exportinitiative Gesundheitswirtschaft"),
            &at_home
        ));
        let film = in_profile("Dokumentarfilm-Produktion in Köln");
        assert!(!misfit(
            &of_title("Kulturelle Filmförderung: Stoffentwicklung"),
            &film
        ));
        assert!(!misfit(&of_title("Markterschließungsprogramm"), &pumps));
    }

    /// Forestry and fisheries are sectors of their own: a cattle farm that names no
    /// forest is no applicant for forestry measures (though they are paid from the
    /// agricultural funds), nor a farm for fisheries; "Land- und Forstwirtschaft" is both.
    #[test]
    fn forestry_and_fisheries_are_sectors_of_their_own() {
        assert_eq!(
            of_title("Förderung forstwirtschaftlicher Maßnahmen im Rahmen der Gemeinschaftsaufgabe „Verbesserung der Agrarstruktur und des Küstenschutzes“"),
            [Forestry]
        );
        assert_eq!(
            of_title("Förderung forstwirtschaftlicher Maßnahmen im Rahmen des Europäischen Landwirtschaftsfonds für die Entwicklung des ländlichen Raums"),
            [Forestry]
        );
        assert_eq!(
            of_title("Hilfen für die Land- und Forstwirtschaft"),
            [Agriculture, Forestry]
        );
        assert_eq!(
            of_title("Aquakultur und Fischwirtschaft – Wachstum"),
            [Fisheries]
        );
        let cattle =
            in_profile("Wir bewirtschaften 480 Hektar Acker und Grünland mit 120 Mutterkühen.");
        assert!(misfit(&of_title("Forstwirtschaftliche Maßnahmen"), &cattle));
        assert!(misfit(
            &of_title("Förderung der Fischerei in Bayern"),
            &cattle
        ));
        assert!(!misfit(
            &of_title("Hilfen für die Land- und Forstwirtschaft"),
            &cattle
        ));
        let woods = in_profile("Wir bewirtschaften 120 Hektar Acker und 40 Hektar Wald.");
        assert!(!misfit(&of_title("Forstwirtschaftliche Maßnahmen"), &woods));
        let ponds = in_profile("Teichwirtschaft mit Karpfen und Forellen");
        assert!(!misfit(
            &of_title("Förderung der Fischerei in Bayern"),
            &ponds
        ));
        // A carpentry builds with wood but keeps no forest.
        let carpentry = in_profile("We are a carpentry firm building timber-frame houses.");
        assert!(misfit(
            &of_title("Forstwirtschaftliche Maßnahmen"),
            &carpentry
        ));
    }

    /// A programme for new buildings ("Klimafreundlicher Neubau") needs a profile that
    /// builds one; a title that also names extending or renovating is for both.
    #[test]
    fn new_buildings_need_a_profile_that_builds() {
        let kfn = of_title(
            "Bundesförderung für effiziente Gebäude – Klimafreundlicher Neubau – Nichtwohngebäude",
        );
        assert_eq!(kfn, [NewBuildings]);
        assert!(
            of_title("Neubau, Ausbau, Reaktivierung und Ersatz von Gleisanschlüssen").is_empty()
        );
        let bakery =
            in_profile("Wir wollen die Backstube energetisch sanieren und die Öfen tauschen.");
        assert!(misfit(&kfn, &bakery));
        let homes = of_title(
            "Bundesförderung für effiziente Gebäude – Klimafreundlicher Neubau – Wohngebäude",
        );
        assert_eq!(homes, [Housing, NewBuildings]);
        let renovating = in_profile("Wir wollen unser Einfamilienhaus dämmen.");
        assert!(misfit(&homes, &renovating));
        assert!(!misfit(
            &homes,
            &in_profile("Wir wollen ein Einfamilienhaus neu bauen.")
        ));
        for text in [
            "Wir planen den Neubau unserer Produktionshalle.",
            "Wir wollen ein neues Vereinsheim errichten.",
            "We want to build a new workshop.",
            "Unsere Kita braucht einen Anbau für eine Krippengruppe.",
            "Wir wollen die Kita um eine Krippengruppe erweitern.",
            "Für das Winterlager brauchen wir eine zusätzliche Halle.",
            "Geld für den Bau und die Sanierung von Kindertagesstätten",
        ] {
            assert!(!misfit(&kfn, &in_profile(text)), "{text}");
        }
    }

    /// Process heat and the optimisation of production plants need a profile that
    /// produces something: a bakery's ovens, a foundry, a plastics processor; not a hotel
    /// or a campsite.
    #[test]
    fn production_programmes_need_a_profile_that_produces() {
        let heat = of_title("Bundesförderung für Energie- und Ressourceneffizienz in der Wirtschaft (Kredit) – Förderung von Prozesswärme aus erneuerbaren Energien (Modul 2)");
        assert_eq!(heat, [Production]);
        for text in [
            "Unsere Öfen in der Backstube sind 20 Jahre alt.",
            "We are a family-owned manufacturer of aluminium die-cast parts.",
            "Wir sind eine Glasbläserei und wollen unsere Schmelzöfen ersetzen.",
            "Wir betreiben eine Großwäscherei und wollen energiesparende Waschstraßen anschaffen.",
        ] {
            assert!(!misfit(&heat, &in_profile(text)), "{text}");
        }
        for text in [
            "Familiengeführtes Ferienhotel mit 46 Zimmern; wir wollen die Heizung erneuern.",
            "We run a campsite with 90 pitches and a canoe rental.",
        ] {
            assert!(misfit(&heat, &in_profile(text)), "{text}");
        }
    }

    /// A word that merely contains a sector's word is no sign of it: a carpentry builds
    /// with wood but is no forestry, a Kita is no garden, a Quartier no animal, a real
    /// estate agent no mobility.
    #[test]
    fn words_that_contain_a_sector_word_do_not_name_it() {
        use Sector::*;
        let farm_title = of_title("Bayerisches Sonderprogramm Landwirtschaft Digital");
        for text in [
            "Zimmerei: wir bauen Dachstühle und Holzrahmenhäuser in Holzbauweise.",
            "Träger von drei Kindergärten und einem Kindergarten-Neubau",
            "Quartiersarbeit und Nachbarschaftshilfe im Kiez",
        ] {
            assert!(misfit(&farm_title, &in_profile(text)), "{text}");
        }
        for text in [
            "Wir halten Tiere artgerecht und bauen einen Garten.",
            "Ein Sägewerk im Schwarzwald",
        ] {
            assert!(in_profile(text).contains(&Agriculture), "{text}");
        }
        assert!(!in_profile("Immobilienverwaltung in Köln").contains(&Transport));
        // Housings are parts of a machine, not homes.
        assert!(!in_profile("70 percent of our sales are housings for cars").contains(&Housing));
        assert!(in_profile("We provide social housing in Leipzig.").contains(&Housing));
        assert!(in_profile("Elektromobilität für unsere Flotte").contains(&Transport));
    }
}

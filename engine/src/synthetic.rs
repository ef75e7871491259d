//! Deterministic synthetic catalogues for scale tests and benchmarks.
//!
//! [`generate`] builds `count` plausible German funding programmes in the import format
//! (`docs/catalogue-format.md`) on top of the real vocabularies of a base catalogue
//! (regions, grant areas, eligible entities, target groups). Texts come from templates
//! written for this generator plus the vocabularies' names — never from the programme
//! texts of the real catalogue (CC BY-ND). How grants link to the vocabularies (regions,
//! areas, groups, entities, grant type, non-profit rule) is copied from a randomly
//! chosen real grant, so filters are as selective as on the real catalogue. Every
//! detail field of the format is filled.
//!
//! Synthetic records are marked: grant slugs start with [`SLUG_PREFIX`], providers
//! are of type `other_type` with slugs starting with `synthetic-`, attributions say
//! "Synthetischer Datensatz", and links point at `synthetic.example`. The same
//! `(base vocabularies, count, seed)` always gives the same records, byte for byte;
//! grant `i` depends only on the seed and `i`, so generation runs in parallel.
//!
//! Pseudo-embeddings ([`pseudo_vectors`]) stand in for the model when ranking is
//! benchmarked at sizes the model cannot embed in reasonable time: a common direction
//! (e5 vectors all lie in a narrow cone), a topic direction per grant area (sub-areas
//! lean towards their parent) and per-grant noise, so that cosines fall in e5's band
//! (≈ 0.72 unrelated, ≈ 0.86 same topic). Their model id is `pseudo/<seed>`, which no
//! embedding model produces, so they can never be mistaken for real embeddings.

use std::collections::HashMap;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use rayon::prelude::*;
use uuid::Uuid;

use crate::error::{Error, Result};
use crate::model::{Address, GeoLocation};
use crate::model::{ContactPoint, Grant, GrantArea, GrantProvider, GrantType, RegionType};
use crate::records::CatalogueRecords;
use crate::vectors::GrantVectors;

/// Slug prefix of every synthetic grant (and provider).
pub const SLUG_PREFIX: &str = "synthetic-";
/// Dimension of pseudo-embeddings (that of the real model).
pub const PSEUDO_DIM: usize = crate::embed::DIM;
/// Area whose topic the benchmark query vector ([`bench_query`]) is about.
pub const BENCH_QUERY_AREA: &str = "digitalisierung";

/// Model id of the pseudo-embeddings of `seed`.
pub fn pseudo_model_id(seed: u64) -> String {
    format!("pseudo/{seed}")
}

/// True for the model id of pseudo-embeddings.
pub fn is_pseudo_model(model_id: &str) -> bool {
    model_id.starts_with("pseudo/")
}

/// SplitMix64: tiny, fast, and the same on every platform.
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    /// An independent stream for (`seed`, `stream`, `index`).
    fn new(seed: u64, stream: u64, index: u64) -> Self {
        let mut r = Rng(seed ^ stream.wrapping_mul(0xA076_1D64_78BD_642F));
        r.0 ^= r.next_u64() ^ index.wrapping_mul(0xE703_7ED1_A0B4_28DB);
        r.next_u64();
        r
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }

    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    fn chance(&mut self, p: f64) -> bool {
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
    }

    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }

    /// Uniform in [-1, 1).
    fn signed_unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }

    fn uuid(&mut self) -> Uuid {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.next_u64().to_le_bytes());
        b[8..].copy_from_slice(&self.next_u64().to_le_bytes());
        uuid::Builder::from_random_bytes(b).into_uuid()
    }

    /// `n` distinct items of `xs` (fewer when `xs` is shorter), in `xs` order.
    fn sample<'a>(&mut self, xs: &'a [&'a str], n: usize) -> Vec<&'a str> {
        let mut idx: Vec<usize> = (0..xs.len()).collect();
        let n = n.min(xs.len());
        for i in 0..n {
            let j = i + self.below(xs.len() - i);
            idx.swap(i, j);
        }
        let mut chosen = idx[..n].to_vec();
        chosen.sort_unstable();
        chosen.into_iter().map(|i| xs[i]).collect()
    }
}

const STREAM_GRANT: u64 = 1;
const STREAM_PROVIDER: u64 = 2;
const STREAM_MEAN: u64 = 3;
const STREAM_TOPIC: u64 = 4;
const STREAM_NOISE: u64 = 5;
const STREAM_QUERY: u64 = 6;

const KINDS: &[&str] = &[
    "Förderprogramm",
    "Richtlinie zur Förderung von Vorhaben",
    "Zuschussprogramm",
    "Sonderprogramm",
    "Investitionsprogramm",
    "Innovationsfonds",
    "Modellvorhaben",
    "Landesinitiative",
    "Förderaufruf",
    "Strukturfonds",
];
const LOAN_KINDS: &[&str] = &["Förderkredit", "Darlehensprogramm", "Investitionskredit"];
const GUARANTEE_KINDS: &[&str] = &["Bürgschaftsprogramm", "Ausfallbürgschaften"];
const EQUITY_KINDS: &[&str] = &["Beteiligungsfonds", "Wagniskapitalprogramm"];

const ACTIVITIES: &[&str] = &[
    "Investitionen in Anlagen, Maschinen und Ausstattung",
    "Beratungs- und Qualifizierungsleistungen",
    "Machbarkeitsstudien und Konzepte",
    "Personal- und Sachausgaben für Pilotprojekte",
    "der Aufbau von Netzwerken und Kooperationen",
    "Maßnahmen zur Öffentlichkeitsarbeit und Wissensvermittlung",
    "die Entwicklung neuer Produkte, Verfahren und Dienstleistungen",
    "bauliche Maßnahmen und Modernisierungen",
    "digitale Werkzeuge, Software und Schulungen",
    "Veranstaltungen, Workshops und Austauschformate",
    "die Erprobung innovativer Ansätze in der Praxis",
    "energetische Sanierungen und Effizienzmaßnahmen",
];
const GOALS: &[&str] = &[
    "die Wettbewerbsfähigkeit der Region zu stärken",
    "neue Arbeits- und Ausbildungsplätze zu schaffen",
    "den Klimaschutz und die Energiewende voranzubringen",
    "die Digitalisierung in Wirtschaft und Gesellschaft zu beschleunigen",
    "das bürgerschaftliche Engagement vor Ort zu stärken",
    "gleichwertige Lebensverhältnisse in Stadt und Land zu sichern",
    "den Zugang zu Bildung und kultureller Teilhabe zu verbessern",
    "Forschungsergebnisse schneller in die Anwendung zu bringen",
    "den gesellschaftlichen Zusammenhalt zu fördern",
    "die Gesundheitsversorgung wohnortnah zu sichern",
];
const REQUIREMENTS: &[&str] = &[
    "Sitz oder Betriebsstätte im Fördergebiet",
    "Das Vorhaben darf vor Antragstellung noch nicht begonnen worden sein.",
    "Die Gesamtfinanzierung des Vorhabens muss gesichert sein.",
    "Nachweis der fachlichen Eignung und Zuverlässigkeit",
    "Einhaltung der beihilferechtlichen Vorgaben (De-minimis)",
    "Ein angemessener Eigenanteil wird erbracht.",
    "Kooperation mit mindestens einem Partner aus der Region",
];
const EXPENDITURES: &[&str] = &[
    "Personalausgaben für projektbezogenes Personal",
    "Sachausgaben und Verbrauchsmaterial",
    "Ausgaben für externe Dienstleistungen",
    "Investitionen in Geräte und Ausstattung",
    "Reisekosten im Rahmen des Vorhabens",
    "Ausgaben für Öffentlichkeitsarbeit",
    "Miete für projektbezogene Räume",
];
const NON_EXPENDITURES: &[&str] = &[
    "Ausgaben, die vor Bewilligung entstanden sind",
    "laufende Betriebskosten",
    "Grunderwerb",
    "Finanzierungskosten und Zinsen",
    "erstattungsfähige Umsatzsteuer",
];
const CATEGORIES: &[&str] = &[
    "Personalausgaben",
    "Sachausgaben",
    "Investitionen",
    "Fremdleistungen",
    "Reisekosten",
];
const CRITERIA: &[&str] = &[
    "Beitrag zu den Zielen des Programms",
    "Innovationsgehalt des Vorhabens",
    "Wirtschaftlichkeit und Angemessenheit der Ausgaben",
    "Nachhaltigkeit der Ergebnisse",
    "regionale Wirkung",
    "Qualität des Arbeitsplans",
];
const DOCUMENTS: &[&str] = &[
    "Antragsformular",
    "Projektbeschreibung",
    "Kosten- und Finanzierungsplan",
    "Zeitplan",
    "Nachweis der Rechtsform",
    "De-minimis-Erklärung",
    "Letzter Jahresabschluss",
    "Kooperationsvereinbarung",
];
const COMPANY_SIZES: &[&str] = &[
    "kleine und mittlere Unternehmen (KMU)",
    "Kleinstunternehmen",
    "alle Unternehmensgrößen",
    "keine Beschränkung",
];
const CITIES: &[&str] = &[
    "Berlin",
    "Hamburg",
    "München",
    "Köln",
    "Frankfurt am Main",
    "Stuttgart",
    "Düsseldorf",
    "Leipzig",
    "Dresden",
    "Hannover",
    "Nürnberg",
    "Erfurt",
    "Magdeburg",
    "Potsdam",
    "Schwerin",
    "Kiel",
    "Mainz",
    "Saarbrücken",
    "Wiesbaden",
    "Bremen",
];

/// Names of the vocabulary records, by id.
struct Names<'a> {
    regions: HashMap<Uuid, (&'a str, RegionType)>,
    areas: HashMap<Uuid, &'a str>,
    groups: HashMap<Uuid, &'a str>,
    entities: HashMap<Uuid, &'a str>,
}

/// The links of a grant: copied from a real grant, or drawn when there is none.
struct Links {
    grant_type: GrantType,
    region_ids: Vec<Uuid>,
    grant_area_ids: Vec<Uuid>,
    target_group_ids: Vec<Uuid>,
    eligible_entity_ids: Vec<Uuid>,
    non_profit_only: bool,
}

fn links(vocab: &CatalogueRecords, rng: &mut Rng) -> Links {
    if !vocab.grants.is_empty() {
        let g = rng.pick(&vocab.grants);
        return Links {
            grant_type: g.grant_type,
            region_ids: g.region_ids.clone(),
            grant_area_ids: g.grant_area_ids.clone(),
            target_group_ids: g.target_group_ids.clone(),
            eligible_entity_ids: g.eligible_entity_ids.clone(),
            non_profit_only: g.non_profit_only.unwrap_or(false) || rng.chance(0.08),
        };
    }
    let some = |rng: &mut Rng, ids: Vec<Uuid>, max: usize| -> Vec<Uuid> {
        if ids.is_empty() {
            return Vec::new();
        }
        let n = rng.range(0, max);
        let mut out: Vec<Uuid> = (0..n).map(|_| *rng.pick(&ids)).collect();
        out.sort();
        out.dedup();
        out
    };
    let types = [
        GrantType::Subsidy,
        GrantType::Subsidy,
        GrantType::Subsidy,
        GrantType::Loan,
        GrantType::Guarantee,
        GrantType::Equity,
    ];
    Links {
        grant_type: *rng.pick(&types),
        region_ids: vec![rng.pick(&vocab.regions).id],
        grant_area_ids: some(rng, vocab.grant_areas.iter().map(|a| a.id).collect(), 3),
        target_group_ids: some(rng, vocab.target_groups.iter().map(|a| a.id).collect(), 2),
        eligible_entity_ids: some(
            rng,
            vocab.eligible_entities.iter().map(|a| a.id).collect(),
            6,
        ),
        non_profit_only: rng.chance(0.1),
    }
}

/// German thousands grouping: 1250000 → "1.250.000".
fn euros(v: u64) -> String {
    let s = v.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push('.');
        }
        out.push(c);
    }
    out
}

fn join_de(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} und {last}", init.join(", ")),
    }
}

fn timestamp() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
        .expect("valid timestamp")
        .with_timezone(&Utc)
}

fn provider(seed: u64, k: usize, vocab: &CatalogueRecords) -> GrantProvider {
    let mut rng = Rng::new(seed, STREAM_PROVIDER, k as u64);
    let city = *rng.pick(CITIES);
    let region = vocab
        .regions
        .iter()
        .filter(|r| r.region_type == RegionType::State)
        .nth(k % 16)
        .map(|r| r.name_de.as_str())
        .unwrap_or("Deutschland");
    let n = k + 1;
    GrantProvider {
        id: rng.uuid(),
        slug: format!("{SLUG_PREFIX}foerderstelle-{seed}-{n}"),
        name: format!("Synthetische Förderstelle {n} ({region})"),
        provider_type: "other_type".into(),
        description: Some(format!(
            "Synthetischer Fördergeber für Last- und Skalierungstests mit Sitz in {city}; kein reales Förderinstitut."
        )),
        website: Some(format!("https://synthetic.example/foerderstelle-{seed}-{n}")),
        email: Some(format!("foerderung-{n}@synthetic.example")),
        phone: Some(format!("+49 30 {:07}", rng.below(10_000_000))),
        fax: Some(format!("+49 30 {:07}", rng.below(10_000_000))),
        city: Some(city.into()),
        address: Some(Address {
            street_and_number: Some(format!("Musterstraße {}", rng.range(1, 200))),
            address_line_2: None,
            postal_code: Some(format!("{:05}", rng.range(1067, 99998))),
            city: Some(city.into()),
            state: Some(region.into()),
            country: Some("Deutschland".into()),
            complete_address: None,
        }),
        geo_location: Some(GeoLocation {
            // Thousandths, so the JSON text reads back to the same f64.
            latitude: Some((47_300 + rng.below(7000)) as f64 / 1000.0),
            longitude: Some((6_000 + rng.below(9000)) as f64 / 1000.0),
            federal_state: Some(region.into()),
            federal_state_code: None,
            county: None,
        }),
        social_media: None,
        created_at: timestamp(),
        updated_at: timestamp(),
    }
}

fn grant(
    seed: u64,
    i: usize,
    vocab: &CatalogueRecords,
    names: &Names<'_>,
    providers: &[GrantProvider],
) -> Grant {
    let mut rng = Rng::new(seed, STREAM_GRANT, i as u64);
    let l = links(vocab, &mut rng);
    let area_names: Vec<&str> = l
        .grant_area_ids
        .iter()
        .filter_map(|a| names.areas.get(a).copied())
        .collect();
    let area = area_names.first().copied().unwrap_or("Wirtschaft");
    let (region, region_type) = l
        .region_ids
        .first()
        .and_then(|r| names.regions.get(r).copied())
        .unwrap_or(("Deutschland", RegionType::Country));
    let groups: Vec<&str> = l
        .target_group_ids
        .iter()
        .filter_map(|g| names.groups.get(g).copied())
        .collect();
    let entities: Vec<&str> = l
        .eligible_entity_ids
        .iter()
        .filter_map(|e| names.entities.get(e).copied())
        .collect();
    let kind = *rng.pick(match l.grant_type {
        GrantType::Subsidy => KINDS,
        GrantType::Loan => LOAN_KINDS,
        GrantType::Guarantee => GUARANTEE_KINDS,
        GrantType::Equity => EQUITY_KINDS,
    });
    let year = 2026 + rng.below(5);
    let title = match rng.below(4) {
        0 => format!("{kind} {area} {year}"),
        1 => format!("{kind} „{area}“ – {region}"),
        2 => format!(
            "{area}: {kind} für {}",
            groups.first().unwrap_or(&"Unternehmen")
        ),
        _ => format!("{kind} {area} in {region} (Förderperiode {year})"),
    };
    let n = i + 1;
    let slug = format!("{SLUG_PREFIX}{seed}-{n}");
    let quoted: Vec<String> = groups.iter().map(|g| format!("„{g}“")).collect();
    let quoted: Vec<&str> = quoted.iter().map(String::as_str).collect();
    let who = match quoted.len() {
        0 => "Antragstellende".to_string(),
        1 => format!("Antragstellende der Zielgruppe {}", quoted[0]),
        _ => format!("Antragstellende der Zielgruppen {}", join_de(&quoted)),
    };
    let acts = rng.sample(ACTIVITIES, 2);
    let goal = *rng.pick(GOALS);
    let max_amount = [
        10_000u64, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000,
    ][rng.below(8)];
    let rate = [30, 40, 50, 60, 70, 80, 90, 100][rng.below(8)];
    let months = [6, 12, 18, 24, 36, 48][rng.below(6)];
    let where_ = match region_type {
        RegionType::State => format!("Das Land {region}"),
        RegionType::Country => format!("Der Bund ({region})"),
        RegionType::Continent => format!("Die Europäische Union ({region})"),
    };
    let short =
        format!("{where_} unterstützt {who} bei Vorhaben im Bereich {area}. Ziel ist es, {goal}.");
    let mut description = format!(
        "{short} Gefördert werden insbesondere {} sowie {}.",
        acts[0],
        acts.get(1).copied().unwrap_or("begleitende Maßnahmen")
    );
    if area_names.len() > 1 {
        description.push_str(&format!(
            " Das Programm verbindet Themen aus den Bereichen {}.",
            join_de(&area_names)
        ));
    }
    if !entities.is_empty() {
        description.push_str(&format!(
            " Antragsberechtigt sind {} mit Sitz oder Betriebsstätte in {region}.",
            join_de(&entities)
        ));
    }
    description.push_str(&format!(
        " Die Förderung erfolgt als {} in Höhe von bis zu {rate} % der zuwendungsfähigen Ausgaben, höchstens {} Euro je Vorhaben. Dieser Datensatz ist synthetisch und beschreibt kein reales Förderprogramm.",
        match l.grant_type {
            GrantType::Subsidy => "nicht rückzahlbarer Zuschuss",
            GrantType::Loan => "zinsgünstiges Darlehen",
            GrantType::Guarantee => "Bürgschaft",
            GrantType::Equity => "Beteiligung",
        },
        euros(max_amount)
    ));
    let base = NaiveDate::from_ymd_opt(2025, 1, 1).expect("valid date");
    let start = base + Duration::days(rng.below(540) as i64);
    let ongoing = rng.chance(0.6);
    let end_date = if ongoing {
        None
    } else if rng.chance(0.05) {
        // A few expired programmes, as in any real catalogue.
        Some(start + Duration::days(rng.range(30, 120) as i64))
    } else {
        let end = NaiveDate::from_ymd_opt(2027, 1, 1).expect("valid date")
            + Duration::days(rng.below(4 * 365) as i64);
        Some(end.max(start))
    };
    let provider = if providers.is_empty() || rng.chance(0.03) {
        None
    } else {
        Some(rng.pick(providers))
    };
    let pick_list = |rng: &mut Rng, xs: &[&str], lo: usize, hi: usize| -> Vec<String> {
        let n = rng.range(lo, hi);
        rng.sample(xs, n).into_iter().map(String::from).collect()
    };
    Grant {
        id: rng.uuid(),
        slug: slug.clone(),
        title,
        short_description: Some(short),
        description: Some(description),
        grant_type: l.grant_type,
        grant_provider_id: provider.map(|p| p.id),
        region_ids: l.region_ids,
        grant_area_ids: l.grant_area_ids,
        target_group_ids: l.target_group_ids,
        eligible_entity_ids: l.eligible_entity_ids,
        start_date: Some(start),
        end_date,
        earliest_project_start: Some(start + Duration::days(rng.range(0, 90) as i64)),
        ongoing_grant: ongoing,
        end_date_description: Some(match end_date {
            None => "Anträge können laufend gestellt werden.".into(),
            Some(d) => format!("Anträge sind bis zum {} einzureichen.", d.format("%d.%m.%Y")),
        }),
        funding_amount: Some(format!("bis zu {} EUR", euros(max_amount))),
        max_funding_amount: Some(max_amount as f64),
        project_duration: Some(format!("bis zu {months} Monate")),
        funding_rate: Some(format!(
            "bis zu {rate} % der zuwendungsfähigen Ausgaben"
        )),
        funding_goal: Some(format!("Ziel der Förderung ist es, {goal}.")),
        target_group_description: Some(format!(
            "Das Programm richtet sich an {who} in {region}."
        )),
        company_size: Some(rng.pick(COMPANY_SIZES).to_string()),
        application_level: Some(
            match region_type {
                RegionType::State => "Land",
                RegionType::Country => "Bund",
                RegionType::Continent => "EU",
            }
            .into(),
        ),
        non_profit_only: Some(l.non_profit_only),
        contact_point: Some(ContactPoint {
            name: Some(
                provider
                    .map(|p| format!("Förderberatung der {}", p.name))
                    .unwrap_or_else(|| "Förderberatung".into()),
            ),
            email: Some(format!("programm-{seed}-{n}@synthetic.example")),
            phone: Some(format!("+49 30 {:07}", rng.below(10_000_000))),
            url: Some(format!("https://synthetic.example/programm/{slug}")),
        }),
        eligibility_requirements: pick_list(&mut rng, REQUIREMENTS, 2, 4),
        eligible_expenditures: pick_list(&mut rng, EXPENDITURES, 2, 5),
        non_eligible_expenditures: pick_list(&mut rng, NON_EXPENDITURES, 1, 3),
        eligible_expenditure_categories: pick_list(&mut rng, CATEGORIES, 1, 3),
        evaluation_criteria: pick_list(&mut rng, CRITERIA, 2, 4),
        documents_needed: pick_list(&mut rng, DOCUMENTS, 2, 5),
        application_links: vec![format!("https://synthetic.example/antrag/{slug}")],
        guideline_links: vec![format!("https://synthetic.example/richtlinie/{slug}")],
        reporting_and_claims_links: vec![format!(
            "https://synthetic.example/verwendungsnachweis/{slug}"
        )],
        attribution: Some(format!(
            "Synthetischer Datensatz (grantmatch fixtures generate, seed {seed}); kein reales Förderprogramm."
        )),
        classification: Some("derived".into()),
        created_at: timestamp(),
        updated_at: timestamp(),
    }
}

/// A synthetic catalogue of `count` grants on the vocabularies of `vocab` (its regions,
/// grant areas, eligible entities and target groups are copied; its grants only lend
/// their link structure; its providers are not used). Deterministic in `seed`.
pub fn generate(vocab: &CatalogueRecords, count: usize, seed: u64) -> Result<CatalogueRecords> {
    if vocab.regions.is_empty() {
        return Err(Error::InvalidInput(
            "the base catalogue has no regions to build synthetic grants on".into(),
        ));
    }
    let names = Names {
        regions: vocab
            .regions
            .iter()
            .map(|r| (r.id, (r.name_de.as_str(), r.region_type)))
            .collect(),
        areas: vocab
            .grant_areas
            .iter()
            .map(|a| (a.id, a.name_de.as_str()))
            .collect(),
        groups: vocab
            .target_groups
            .iter()
            .map(|g| (g.id, g.name_de.as_str()))
            .collect(),
        entities: vocab
            .eligible_entities
            .iter()
            .map(|e| (e.id, e.name_plural_de.as_str()))
            .collect(),
    };
    let provider_count = (count / 50).clamp(1, 2000);
    let providers: Vec<GrantProvider> = (0..provider_count)
        .map(|k| provider(seed, k, vocab))
        .collect();
    let grants: Vec<Grant> = (0..count)
        .into_par_iter()
        .with_min_len(256)
        .map(|i| grant(seed, i, vocab, &names, &providers))
        .collect();
    Ok(CatalogueRecords {
        regions: vocab.regions.clone(),
        grant_areas: vocab.grant_areas.clone(),
        eligible_entities: vocab.eligible_entities.clone(),
        target_groups: vocab.target_groups.clone(),
        grant_providers: providers,
        grants,
    })
}

/// A random unit vector of `PSEUDO_DIM` values.
fn unit_vector(rng: &mut Rng, out: &mut [f32]) {
    for x in out.iter_mut() {
        *x = rng.signed_unit();
    }
    let n = out.iter().map(|x| x * x).sum::<f32>().sqrt();
    out.iter_mut().for_each(|x| *x /= n);
}

/// The directions pseudo-embeddings are made of: the common one and one per area.
struct Topics {
    mean: Vec<f32>,
    by_area: HashMap<Uuid, Vec<f32>>,
}

/// Weights of the common direction, the topic and the noise (squared: 0.72, 0.14, 0.14).
const W_MEAN: f32 = 0.848_528;
const W_TOPIC: f32 = 0.374_166;
const W_NOISE: f32 = 0.374_166;

impl Topics {
    fn new(grant_areas: &[GrantArea], seed: u64) -> Self {
        let mut mean = vec![0f32; PSEUDO_DIM];
        unit_vector(&mut Rng::new(seed, STREAM_MEAN, 0), &mut mean);
        let own: HashMap<Uuid, Vec<f32>> = grant_areas
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let mut v = vec![0f32; PSEUDO_DIM];
                unit_vector(&mut Rng::new(seed, STREAM_TOPIC, i as u64), &mut v);
                (a.id, v)
            })
            .collect();
        // A sub-area leans towards its parent.
        let by_area = grant_areas
            .iter()
            .map(|a| {
                let mut v = own[&a.id].clone();
                if let Some(p) = a.parent_id.and_then(|p| own.get(&p)) {
                    v.iter_mut()
                        .zip(p)
                        .for_each(|(x, y)| *x = 0.6 * *x + 0.8 * y);
                }
                (a.id, v)
            })
            .collect();
        Topics { mean, by_area }
    }

    /// `W_MEAN·mean + W_TOPIC·topic(areas) + W_NOISE·noise` into `out` (unnormalised).
    fn vector(&self, areas: &[Uuid], noise: &mut Rng, out: &mut [f32]) {
        unit_vector(noise, out);
        let mut topic = vec![0f32; PSEUDO_DIM];
        for a in areas {
            if let Some(t) = self.by_area.get(a) {
                topic.iter_mut().zip(t).for_each(|(x, y)| *x += y);
            }
        }
        let n = topic.iter().map(|x| x * x).sum::<f32>().sqrt();
        let (w_topic, w_noise) = if n > 0.0 {
            (W_TOPIC / n, W_NOISE)
        } else {
            (0.0, (W_TOPIC * W_TOPIC + W_NOISE * W_NOISE).sqrt())
        };
        for ((x, m), t) in out.iter_mut().zip(&self.mean).zip(&topic) {
            *x = W_MEAN * m + w_topic * t + w_noise * *x;
        }
    }
}

/// Deterministic pseudo-embeddings for `grants` (one row per grant, in order), model id
/// `pseudo/<seed>`. A grant's vector depends on the seed, its position and its areas.
pub fn pseudo_vectors(
    grants: &[Grant],
    grant_areas: &[GrantArea],
    seed: u64,
) -> Result<GrantVectors> {
    let topics = Topics::new(grant_areas, seed);
    let mut data = vec![0f32; grants.len() * PSEUDO_DIM];
    data.par_chunks_mut(PSEUDO_DIM)
        .zip(grants.par_iter())
        .enumerate()
        .with_min_len(1024)
        .for_each(|(i, (row, g))| {
            topics.vector(
                &g.grant_area_ids,
                &mut Rng::new(seed, STREAM_NOISE, i as u64),
                row,
            )
        });
    GrantVectors::from_matrix(&pseudo_model_id(seed), PSEUDO_DIM, data)
}

/// A pseudo query vector about grant area `area` (an id of `grant_areas`; `None` for no
/// topic), L2-normalised; `variant` draws different noise.
pub fn pseudo_query(
    grant_areas: &[GrantArea],
    seed: u64,
    area: Option<Uuid>,
    variant: u64,
) -> Vec<f32> {
    let topics = Topics::new(grant_areas, seed);
    let mut v = vec![0f32; PSEUDO_DIM];
    let areas: Vec<Uuid> = area.into_iter().collect();
    topics.vector(&areas, &mut Rng::new(seed, STREAM_QUERY, variant), &mut v);
    crate::vectors::normalized(&v)
}

/// The query of the ranking benchmarks: about [`BENCH_QUERY_AREA`] (or the first area).
pub fn bench_query(grant_areas: &[GrantArea], seed: u64) -> Vec<f32> {
    let area = grant_areas
        .iter()
        .find(|a| a.code == BENCH_QUERY_AREA)
        .or(grant_areas.first())
        .map(|a| a.id);
    pseudo_query(grant_areas, seed, area, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::is_valid_slug;

    fn vocab() -> CatalogueRecords {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/catalogue");
        CatalogueRecords::read_dir(&dir).expect("the shipped catalogue is valid")
    }

    #[test]
    fn generated_catalogues_are_valid_deterministic_and_marked() {
        let v = vocab();
        let dir = tempfile::tempdir().unwrap();
        let a = generate(&v, 300, 7).unwrap();
        a.write_dir(dir.path()).unwrap();
        let back = CatalogueRecords::read_dir(dir.path()).expect("valid in the import format");
        assert_eq!(back, a);
        assert_eq!(generate(&v, 300, 7).unwrap(), a);
        assert_ne!(generate(&v, 300, 8).unwrap().grants, a.grants);
        for g in &a.grants {
            assert!(g.slug.starts_with(SLUG_PREFIX) && is_valid_slug(&g.slug));
            assert!(g.attribution.as_deref().unwrap().contains("Synthetisch"));
            assert!(g.description.is_some() && g.funding_rate.is_some());
            assert!(!g.documents_needed.is_empty() && !g.eligibility_requirements.is_empty());
        }
        assert!(a
            .grant_providers
            .iter()
            .all(|p| p.provider_type == "other_type" && p.slug.starts_with(SLUG_PREFIX)));
    }

    #[test]
    fn pseudo_vectors_are_deterministic_and_shaped_like_e5() {
        let v = vocab();
        let cat = generate(&v, 400, 3).unwrap();
        let a = pseudo_vectors(&cat.grants, &cat.grant_areas, 3).unwrap();
        assert_eq!(a, pseudo_vectors(&cat.grants, &cat.grant_areas, 3).unwrap());
        assert_eq!(a.len(), 400);
        assert!(is_pseudo_model(&a.model_id));
        let q = bench_query(&cat.grant_areas, 3);
        let digital = cat
            .grant_areas
            .iter()
            .find(|x| x.code == BENCH_QUERY_AREA)
            .unwrap()
            .id;
        let (mut on, mut off) = (Vec::new(), Vec::new());
        for (i, g) in cat.grants.iter().enumerate() {
            let c = crate::vectors::dot(a.row(i), &q);
            if g.grant_area_ids.contains(&digital) {
                on.push(c);
            } else {
                off.push(c);
            }
        }
        let mean = |x: &[f32]| x.iter().sum::<f32>() / x.len() as f32;
        assert!(!on.is_empty());
        assert!(
            mean(&on) > mean(&off) + 0.05,
            "{} {}",
            mean(&on),
            mean(&off)
        );
        assert!((0.6..0.95).contains(&mean(&off)), "{}", mean(&off));
    }
}

//! Match reasons: two or three short sentences in the profile's locale, built only
//! from facts of this match (similarity band, matched keywords and areas, region
//! relation, eligibility, deadline). Programme texts are never paraphrased.

use chrono::NaiveDate;

use super::{Check, Match, RegionFit};
use crate::catalogue::Catalogue;
use crate::facts::Source;
use crate::model::{GrantType, RegionType};
use crate::profile::{Locale, ResolvedProfile};

fn list(items: &[String], max: usize) -> String {
    items
        .iter()
        .take(max)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ")
}

/// The reason of match `m` for profile `p`: the topic sentence, a sentence of the
/// facts (region relation, who may apply, a ruled-out funding type, the non-profit
/// restriction) and the deadline.
pub(crate) fn explain(
    cat: &Catalogue,
    p: &ResolvedProfile,
    m: &Match,
    fit: RegionFit,
    today: NaiveDate,
) -> String {
    let de = p.locale == Locale::De;
    let grant = &cat.grants[m.grant as usize];
    let mut s = vec![topic_sentence(cat, p, m, de)];
    let mut facts: Vec<String> = Vec::new();
    facts.extend(region_fact(cat, fit, p.regions.is_empty(), de));
    facts.extend(applicant_fact(cat, p, m, de));
    facts.extend(sector_fact(cat, p, m, de));
    facts.extend(supported_fact(cat, p, m, de));
    facts.extend(founding_fact(cat, p, m, de));
    facts.extend(farm_fact(cat, p, m, de));
    facts.extend(social_fact(cat, p, m, de));
    facts.extend(excluded_research_fact(cat, p, m, de));
    facts.extend(funding_type_fact(
        p,
        m,
        cat.facts(m.grant).grant_type.value,
        de,
    ));
    if p.is_non_profit == Some(true) && grant.non_profit_only == Some(true) {
        facts.push(if de {
            "nur für gemeinnützige Organisationen, was zu Ihnen passt".to_string()
        } else {
            "restricted to non-profit organisations, which fits you".to_string()
        });
    }
    if !facts.is_empty() {
        s.push(format!("{}.", capitalize(&facts.join("; "))));
    }
    s.push(deadline_sentence(grant, today, de));
    s.join(" ")
}

/// The sectors the programme's title restricts it to that the profile does not speak of,
/// when that makes it a misfit ([`crate::facts::sector::misfit`]).
fn sector_fact(cat: &Catalogue, p: &ResolvedProfile, m: &Match, de: bool) -> Option<String> {
    let sectors = &cat.facts(m.grant).sectors;
    if !crate::facts::sector::misfit(sectors, &p.sectors) {
        return None;
    }
    let names: Vec<&str> = sectors
        .iter()
        .filter(|s| !p.sectors.contains(s))
        .map(|s| if de { s.label_de() } else { s.label_en() })
        .collect();
    Some(if de {
        format!(
            "laut Titel ein Programm für {}, wovon in Ihren Angaben nicht die Rede ist",
            names.join(", ")
        )
    } else {
        format!(
            "its title restricts it to {}, which your profile does not mention",
            names.join(", ")
        )
    })
}

/// The farm animals the programme is for, when the profile names other animals only.
fn livestock_fact(cat: &Catalogue, p: &ResolvedProfile, m: &Match, de: bool) -> Option<String> {
    let facts = cat.facts(m.grant);
    if !facts.livestock_misfit(&p.livestock) {
        return None;
    }
    let label =
        |k: &crate::facts::livestock::Livestock| if de { k.label_de() } else { k.label_en() };
    let theirs: Vec<&str> = facts
        .livestock
        .iter()
        .flat_map(|f| &f.value)
        .map(label)
        .collect();
    let yours: Vec<&str> = p.livestock.iter().map(label).collect();
    Some(if de {
        format!(
            "laut Programmtext nur für die {}, Ihre Angaben nennen die {}",
            theirs.join(" und "),
            yours.join(" und ")
        )
    } else {
        format!(
            "according to its text it is for {} only, and your profile names {}",
            theirs.join(" and "),
            yours.join(" and ")
        )
    })
}

/// A programme for farms, when the profile does not say the organisation farms.
fn farm_fact(cat: &Catalogue, p: &ResolvedProfile, m: &Match, de: bool) -> Option<String> {
    cat.facts(m.grant).farm_misfit(p.farms).then(|| {
        if de {
            "laut Programmtext für landwirtschaftliche Betriebe, Ihre Angaben nennen keinen"
                .to_string()
        } else {
            "according to its text it is for farms, and your profile does not describe one"
                .to_string()
        }
    })
}

/// A programme for municipal and social enterprises, when the profile is neither such an
/// enterprise nor a municipality.
fn social_fact(cat: &Catalogue, p: &ResolvedProfile, m: &Match, de: bool) -> Option<String> {
    let municipal = p
        .applicant_types
        .contains(&crate::facts::ApplicantType::Municipality);
    cat.facts(m.grant)
        .social_misfit(p.social_enterprise, municipal)
        .then(|| {
            if de {
                "laut Titel für kommunale und soziale Unternehmen, Ihre Angaben beschreiben keines"
            } else {
                "according to its title it is for municipal and social enterprises, and your profile describes neither"
            }
            .to_string()
        })
}

/// A programme for those who support organisations of the profile's type.
fn supported_fact(cat: &Catalogue, p: &ResolvedProfile, m: &Match, de: bool) -> Option<String> {
    let facts = cat.facts(m.grant);
    if !facts.only_supports(&p.applicant_types) {
        return None;
    }
    let names: Vec<String> = facts.supported.as_ref().map_or(Vec::new(), |f| {
        f.value
            .iter()
            .map(|t| if de { t.plural_de() } else { t.label_en() }.to_string())
            .collect()
    });
    let names = list(&names, 2);
    Some(if de {
        format!(
            "laut Programmtext fördert es, wer {names} unterstützt, nicht deren eigene Vorhaben"
        )
    } else {
        format!("according to its text it funds those who support {names}, not their own projects")
    })
}

/// A programme for founding or taking over a business, for a profile that speaks of
/// neither.
fn founding_fact(cat: &Catalogue, p: &ResolvedProfile, m: &Match, de: bool) -> Option<String> {
    cat.facts(m.grant).founding_misfit(p.founding).then(|| {
        if de {
            "laut Programmtext für Gründungen, Übernahmen oder junge Unternehmen, wovon in Ihren Angaben nicht die Rede ist"
        } else {
            "according to its text it is for founding or taking over a business or for young companies, which your profile does not mention"
        }
        .to_string()
    })
}

/// A research call for a profile that says it does not want research ("Forschungsprojekte
/// planen wir nicht"); silence about research says nothing.
fn excluded_research_fact(
    cat: &Catalogue,
    p: &ResolvedProfile,
    m: &Match,
    de: bool,
) -> Option<String> {
    let call = cat.facts(m.grant).kind.value == crate::facts::ProgrammeKind::ResearchCall;
    let ruled_out = p
        .exclusions
        .iter()
        .any(|e| crate::profile::names_research(e));
    (call && ruled_out && !p.research_oriented).then(|| {
        if de {
            "eine Forschungsförderung, und Forschung schließen Sie laut Ihren Angaben aus"
        } else {
            "a research call, and your profile rules out research"
        }
        .to_string()
    })
}

/// The funding type when the profile rules it out or asks for it.
fn funding_type_fact(p: &ResolvedProfile, m: &Match, t: GrantType, de: bool) -> Option<String> {
    let (label_de, label_en) = (t.label_de(), t.label_en());
    match m.checks.funding_type {
        Check::Fail => Some(if de {
            format!("die Förderart ({label_de}) schließen Sie aus")
        } else {
            format!("you rule out its funding type ({label_en})")
        }),
        Check::Pass if p.accepted_grant_types.contains(&t) => Some(if de {
            format!("Förderart {label_de}, die für Sie infrage kommt")
        } else {
            format!("funding type {label_en}, which you are open to")
        }),
        Check::Pass if p.wanted_grant_types.contains(&t) => Some(if de {
            format!("Förderart {label_de}, wie von Ihnen gesucht")
        } else {
            format!("funding type {label_en}, as you are looking for")
        }),
        _ => None,
    }
}

/// Semantic component from which the reason calls the topical similarity high. Set by
/// how often the judges of the tuning sets (fresh, fresh2, fresh3) counted a returned
/// programme relevant per band: at ≥ 0.85, 69 % (until session 25 the band began at 0.75:
/// 49 %).
pub const HIGH_SIMILARITY: f32 = 0.85;
/// Semantic component from which the similarity is called good (below: partial); 37 %
/// relevant at [0.6, 0.85), 29 % below (until session 25 from 0.4: 33 % and 17 %).
pub const GOOD_SIMILARITY: f32 = 0.6;

/// The similarity band, with the keywords found in the programme text or else the
/// funding areas the profile shares with the programme.
fn topic_sentence(cat: &Catalogue, p: &ResolvedProfile, m: &Match, de: bool) -> String {
    let areas_in_common: Vec<String> = cat
        .grant_areas(m.grant)
        .iter()
        .filter(|&&a| {
            p.grant_areas
                .iter()
                .any(|&o| cat.area_within(a, o) || cat.area_within(o, a))
        })
        .map(|&a| {
            let area = &cat.grant_areas[a as usize];
            if de {
                area.name_de.clone()
            } else {
                area.name_en.clone()
            }
        })
        .collect();
    let strength = match (m.components.semantic, de) {
        (x, true) if x >= HIGH_SIMILARITY => "hohe",
        (x, true) if x >= GOOD_SIMILARITY => "gute",
        (_, true) => "teilweise",
        (x, false) if x >= HIGH_SIMILARITY => "high",
        (x, false) if x >= GOOD_SIMILARITY => "good",
        (_, false) => "partial",
    };
    let mut topic = if let Some(measure) = m.planned_measure {
        if de {
            format!("Fördert, was Sie vorhaben: {}", measure.label_de())
        } else {
            format!("Funds what you plan: {}", measure.label_en())
        }
    } else if de {
        format!("Inhaltlich {strength} Übereinstimmung mit Ihrer Beschreibung")
    } else {
        format!(
            "{} topical similarity to your description",
            capitalize(strength)
        )
    };
    if !m.matched_keywords.is_empty() {
        topic.push_str(&if de {
            format!(
                " (Stichworte im Programmtext: {})",
                list(&m.matched_keywords, 3)
            )
        } else {
            format!(
                " (keywords found in the programme text: {})",
                list(&m.matched_keywords, 3)
            )
        });
    } else if !areas_in_common.is_empty() {
        topic.push_str(&if de {
            format!(" im Förderbereich {}", list(&areas_in_common, 2))
        } else {
            format!(" in the funding area {}", list(&areas_in_common, 2))
        });
    }
    format!("{topic}.")
}

/// How the programme's region relates to the organisation's; `located`: the
/// organisation's region was read from its texts, not given as `regions`.
fn region_fact(cat: &Catalogue, fit: RegionFit, located: bool, de: bool) -> Option<String> {
    let region_name = |r: u32| {
        let region = &cat.regions[r as usize];
        if de {
            region.name_de.clone()
        } else {
            region.name_en.clone()
        }
    };
    Some(match fit {
        RegionFit::Local(r) => match (de, located) {
            (true, false) => format!(
                "Programm für {} und damit für Ihren Standort",
                region_name(r)
            ),
            (true, true) => format!(
                "Programm für {}, wo Sie laut Ihrer Beschreibung ansässig sind",
                region_name(r)
            ),
            (false, false) => format!("a programme for {}, where you are located", region_name(r)),
            (false, true) => format!(
                "a programme for {}, where your description places you",
                region_name(r)
            ),
        },
        RegionFit::Wider(r) => {
            let national = cat.regions[r as usize].region_type == RegionType::Country;
            match (de, national) {
                (true, true) => format!("bundesweites Programm ({})", region_name(r)),
                (true, false) => format!("Programm für {}", region_name(r)),
                (false, true) => format!("a nationwide programme ({})", region_name(r)),
                (false, false) => format!("a programme for {}", region_name(r)),
            }
        }
        RegionFit::Inside(r, o) => {
            if de {
                format!(
                    "Programm für {} (innerhalb Ihrer Region {})",
                    region_name(r),
                    region_name(o)
                )
            } else {
                format!(
                    "a programme for {} (within your region {})",
                    region_name(r),
                    region_name(o)
                )
            }
        }
        RegionFit::Elsewhere(r, o) => {
            if de {
                format!(
                    "Programm für {}, laut Ihrer Beschreibung sind Sie in {} ansässig",
                    region_name(r),
                    region_name(o)
                )
            } else {
                format!(
                    "a programme for {}, while your description places you in {}",
                    region_name(r),
                    region_name(o)
                )
            }
        }
        RegionFit::Unspecified => return None,
    })
}

/// Who may apply, when the check passed or failed on a fact stated by the record or read
/// from the programme text (never one guessed from neighbours).
fn applicant_fact(cat: &Catalogue, p: &ResolvedProfile, m: &Match, de: bool) -> Option<String> {
    if m.checks.applicant == Check::Fail && super::too_large_for(cat, p, m.grant) {
        let n = p.employees.unwrap_or_default();
        return Some(if de {
            format!("nur für kleine und mittlere Unternehmen (KMU), Sie haben {n} Beschäftigte")
        } else {
            format!("only for small and medium-sized enterprises (SMEs), you have {n} employees")
        });
    }
    if m.checks.applicant == Check::Fail && super::too_small_for(cat, p, m.grant) {
        let n = p.employees.unwrap_or_default();
        return Some(if de {
            format!("laut Titel nur für größere Unternehmen jenseits der KMU-Schwellen, Sie haben {n} Beschäftigte")
        } else {
            format!("according to its title only for companies larger than SMEs, you have {n} employees")
        });
    }
    if m.checks.applicant == Check::Fail {
        if let Some(s) = livestock_fact(cat, p, m, de) {
            return Some(s);
        }
    }
    if m.checks.applicant == Check::Unknown
        && super::score::founding_team_via_institution(cat, p, m.grant)
    {
        return Some(if de {
            "laut Programmtext stellt die Hochschule oder Forschungseinrichtung den Antrag für Gründungsteams wie Ihres"
        } else {
            "according to the programme text, the university or research institution applies on behalf of founding teams like yours"
        }.to_string());
    }
    let fact = cat
        .facts(m.grant)
        .applicants
        .as_ref()
        .filter(|f| f.source != Source::Derived)?;
    let label =
        |t: &crate::facts::ApplicantType| if de { t.plural_de() } else { t.label_en() }.to_string();
    let names: Vec<String> = fact.value.iter().map(label).collect();
    let own: Vec<String> = p.applicant_types.iter().map(label).collect();
    let source = match (fact.source == Source::Text, de) {
        (true, true) => "laut Programmtext ",
        (true, false) => " according to the programme text",
        (false, _) => "",
    };
    match (m.checks.applicant, de) {
        (Check::Pass, true) => Some(format!(
            "antragsberechtigt sind {source}{}",
            list(&names, 4)
        )),
        (Check::Pass, false) => Some(format!(
            "eligible applicants{source} are {}",
            list(&names, 4)
        )),
        (Check::Fail, true) => Some(format!(
            "antragsberechtigt sind {source}{}, nicht {}",
            list(&names, 4),
            list(&own, 2)
        )),
        (Check::Fail, false) => Some(format!(
            "eligible applicants{source} are {}, not {}",
            list(&names, 4),
            list(&own, 2)
        )),
        _ => None,
    }
}

/// The deadline, or that the programme is ongoing or has none known.
fn deadline_sentence(grant: &crate::model::Grant, today: NaiveDate, de: bool) -> String {
    match (grant.end_date, grant.ongoing_grant, de) {
        (Some(d), _, true) if d >= today => format!("Antragsfrist: bis {}.", d.format("%d.%m.%Y")),
        (Some(d), _, false) if d >= today => format!("Deadline: {}.", d.format("%Y-%m-%d")),
        (_, true, true) => "Laufendes Programm ohne bekannte Antragsfrist.".to_string(),
        (_, true, false) => "Ongoing programme without a known deadline.".to_string(),
        (_, false, true) => "Keine Antragsfrist bekannt.".to_string(),
        (_, false, false) => "No deadline known.".to_string(),
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

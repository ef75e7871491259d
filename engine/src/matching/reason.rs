//! Match reasons: two or three short sentences in the profile's locale, built only
//! from facts of this match (similarity band, matched keywords and areas, region
//! relation, eligibility, deadline). Programme texts are never paraphrased.

use chrono::NaiveDate;

use super::{Check, Match, RegionFit};
use crate::catalogue::Catalogue;
use crate::facts::Source;
use crate::model::RegionType;
use crate::profile::{Locale, ResolvedProfile};

fn list(items: &[String], max: usize) -> String {
    items
        .iter()
        .take(max)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ")
}

pub(crate) fn explain(
    cat: &Catalogue,
    p: &ResolvedProfile,
    m: &Match,
    fit: RegionFit,
    today: NaiveDate,
) -> String {
    let de = p.locale == Locale::De;
    let grant = &cat.grants[m.grant as usize];
    let mut s: Vec<String> = Vec::new();

    // Topic.
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
        (x, true) if x >= 0.75 => "hohe",
        (x, true) if x >= 0.4 => "gute",
        (_, true) => "teilweise",
        (x, false) if x >= 0.75 => "high",
        (x, false) if x >= 0.4 => "good",
        (_, false) => "partial",
    };
    let mut topic = if de {
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
    s.push(format!("{topic}."));

    // Region and eligibility.
    let region_name = |r: u32| {
        let region = &cat.regions[r as usize];
        if de {
            region.name_de.clone()
        } else {
            region.name_en.clone()
        }
    };
    let mut facts: Vec<String> = Vec::new();
    match fit {
        RegionFit::Local(r) => facts.push(if de {
            format!(
                "Programm für {} und damit für Ihren Standort",
                region_name(r)
            )
        } else {
            format!("a programme for {}, where you are located", region_name(r))
        }),
        RegionFit::Wider(r) => {
            let national = cat.regions[r as usize].region_type == RegionType::Country;
            facts.push(match (de, national) {
                (true, true) => format!("bundesweites Programm ({})", region_name(r)),
                (true, false) => format!("Programm für {}", region_name(r)),
                (false, true) => format!("a nationwide programme ({})", region_name(r)),
                (false, false) => format!("a programme for {}", region_name(r)),
            })
        }
        RegionFit::Inside(r, o) => facts.push(if de {
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
        }),
        RegionFit::Unspecified => {}
    }
    // Who may apply: only facts stated by the record or read from the programme text.
    if let Some(fact) = cat
        .facts(m.grant)
        .applicants
        .as_ref()
        .filter(|f| f.source != Source::Derived)
    {
        let names: Vec<String> = fact
            .value
            .iter()
            .map(|t| if de { t.plural_de() } else { t.label_en() }.to_string())
            .collect();
        let own: Vec<String> = p
            .applicant_types
            .iter()
            .map(|t| if de { t.plural_de() } else { t.label_en() }.to_string())
            .collect();
        let from_text = fact.source == Source::Text;
        match (m.checks.applicant, de) {
            (Check::Pass, true) => facts.push(format!(
                "antragsberechtigt sind {}{}",
                if from_text { "laut Programmtext " } else { "" },
                list(&names, 4)
            )),
            (Check::Pass, false) => facts.push(format!(
                "eligible applicants{} are {}",
                if from_text {
                    " according to the programme text"
                } else {
                    ""
                },
                list(&names, 4)
            )),
            (Check::Fail, true) => facts.push(format!(
                "antragsberechtigt sind {}{}, nicht {}",
                if from_text { "laut Programmtext " } else { "" },
                list(&names, 4),
                list(&own, 2)
            )),
            (Check::Fail, false) => facts.push(format!(
                "eligible applicants{} are {}, not {}",
                if from_text {
                    " according to the programme text"
                } else {
                    ""
                },
                list(&names, 4),
                list(&own, 2)
            )),
            _ => {}
        }
    }
    if m.checks.funding_type == Check::Fail {
        facts.push(if de {
            format!(
                "die Förderart ({}) schließen Sie aus",
                cat.facts(m.grant).kind.value.label_de()
            )
        } else {
            format!(
                "you rule out its funding type ({})",
                cat.facts(m.grant).kind.value.label_en()
            )
        });
    }
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

    // Deadline.
    s.push(match (grant.end_date, grant.ongoing_grant, de) {
        (Some(d), _, true) if d >= today => format!("Antragsfrist: bis {}.", d.format("%d.%m.%Y")),
        (Some(d), _, false) if d >= today => format!("Deadline: {}.", d.format("%Y-%m-%d")),
        (_, true, true) => "Laufendes Programm ohne bekannte Antragsfrist.".to_string(),
        (_, true, false) => "Ongoing programme without a known deadline.".to_string(),
        (_, false, true) => "Keine Antragsfrist bekannt.".to_string(),
        (_, false, false) => "No deadline known.".to_string(),
    });
    s.join(" ")
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

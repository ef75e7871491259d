//! Reading and validating a catalogue directory in the import format.
//!
//! Every line is parsed and checked; problems are collected (up to a cap) with file,
//! line, field and a description, so an operator can fix a whole file in one go.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use crate::error::{Error, InvalidCatalogue, RecordProblem, Result};
use crate::model::{
    EligibleEntity, Grant, GrantArea, GrantProvider, ProviderType, Region, RegionType, TargetGroup,
};

pub const REGIONS_FILE: &str = "regions.jsonl";
pub const GRANT_AREAS_FILE: &str = "grant_areas.jsonl";
pub const ELIGIBLE_ENTITIES_FILE: &str = "eligible_entities.jsonl";
pub const TARGET_GROUPS_FILE: &str = "target_groups.jsonl";
pub const GRANT_PROVIDERS_FILE: &str = "grant_providers.jsonl";
pub const GRANTS_FILE: &str = "grants.jsonl";

/// Stop collecting after this many problems: the operator has enough to fix.
const MAX_PROBLEMS: usize = 200;

/// The six record lists of a catalogue, in file order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CatalogueRecords {
    pub regions: Vec<Region>,
    pub grant_areas: Vec<GrantArea>,
    pub eligible_entities: Vec<EligibleEntity>,
    pub target_groups: Vec<TargetGroup>,
    pub grant_providers: Vec<GrantProvider>,
    pub grants: Vec<Grant>,
}

struct Problems(Vec<RecordProblem>);

impl Problems {
    fn push(&mut self, file: &str, line: usize, field: &str, problem: impl Into<String>) {
        if self.0.len() < MAX_PROBLEMS {
            self.0.push(RecordProblem {
                file: file.to_string(),
                line,
                field: field.to_string(),
                problem: problem.into(),
            });
        }
    }
}

impl CatalogueRecords {
    /// Reads and validates a catalogue directory. Either every record is valid and
    /// every reference resolves, or the error lists the problems.
    pub fn read_dir(dir: &Path) -> Result<Self> {
        if !dir.is_dir() {
            return Err(Error::InvalidInput(format!(
                "{} is not a directory",
                dir.display()
            )));
        }
        let mut problems = Problems(Vec::new());
        let records = CatalogueRecords {
            regions: read_file(dir, REGIONS_FILE, &mut problems)?,
            grant_areas: read_file(dir, GRANT_AREAS_FILE, &mut problems)?,
            eligible_entities: read_file(dir, ELIGIBLE_ENTITIES_FILE, &mut problems)?,
            target_groups: read_file(dir, TARGET_GROUPS_FILE, &mut problems)?,
            grant_providers: read_file(dir, GRANT_PROVIDERS_FILE, &mut problems)?,
            grants: read_file(dir, GRANTS_FILE, &mut problems)?,
        };
        if problems.0.is_empty() {
            records.validate(&mut problems);
        }
        if problems.0.is_empty() {
            Ok(records)
        } else {
            Err(Error::InvalidCatalogue(InvalidCatalogue(problems.0)))
        }
    }

    /// Writes the records in the import format (one file per resource).
    pub fn write_dir(&self, dir: &Path) -> Result<()> {
        fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        write_file(dir, REGIONS_FILE, &self.regions)?;
        write_file(dir, GRANT_AREAS_FILE, &self.grant_areas)?;
        write_file(dir, ELIGIBLE_ENTITIES_FILE, &self.eligible_entities)?;
        write_file(dir, TARGET_GROUPS_FILE, &self.target_groups)?;
        write_file(dir, GRANT_PROVIDERS_FILE, &self.grant_providers)?;
        write_file(dir, GRANTS_FILE, &self.grants)?;
        Ok(())
    }

    fn validate(&self, p: &mut Problems) {
        let known = self.known_ids(p);
        self.validate_regions(p);
        self.validate_areas(p);
        self.validate_vocabularies(p);
        self.validate_providers(p);
        for (i, g) in self.grants.iter().enumerate() {
            validate_grant(i + 1, g, &known, p);
        }
    }

    /// The ids of every record kind (duplicate ids, codes and slugs are problems).
    fn known_ids(&self, p: &mut Problems) -> Known {
        let known = Known {
            regions: ids_of(
                REGIONS_FILE,
                self.regions.iter().map(|r| (r.id, &r.code, &r.slug)),
                p,
            ),
            areas: ids_of(
                GRANT_AREAS_FILE,
                self.grant_areas.iter().map(|a| (a.id, &a.code, &a.slug)),
                p,
            ),
            entities: ids_of(
                ELIGIBLE_ENTITIES_FILE,
                self.eligible_entities
                    .iter()
                    .map(|e| (e.id, &e.code, &e.slug)),
                p,
            ),
            groups: ids_of(
                TARGET_GROUPS_FILE,
                self.target_groups.iter().map(|g| (g.id, &g.code, &g.slug)),
                p,
            ),
            providers: ids_of(
                GRANT_PROVIDERS_FILE,
                self.grant_providers
                    .iter()
                    .map(|g| (g.id, &g.slug, &g.slug)),
                p,
            ),
        };
        ids_of(
            GRANTS_FILE,
            self.grants.iter().map(|g| (g.id, &g.slug, &g.slug)),
            p,
        );
        known
    }

    /// Each region's parent is of the level above (continent → country → state).
    fn validate_regions(&self, p: &mut Problems) {
        let region_type: HashMap<Uuid, RegionType> =
            self.regions.iter().map(|r| (r.id, r.region_type)).collect();
        for (i, r) in self.regions.iter().enumerate() {
            let line = i + 1;
            let expected_parent = match r.region_type {
                RegionType::Continent => None,
                RegionType::Country => Some(RegionType::Continent),
                RegionType::State => Some(RegionType::Country),
            };
            match (r.parent_id, expected_parent) {
                (None, None) => {}
                (Some(_), None) => {
                    p.push(REGIONS_FILE, line, "parent_id", "a continent has no parent")
                }
                (None, Some(t)) => p.push(
                    REGIONS_FILE,
                    line,
                    "parent_id",
                    format!(
                        "required: a {} needs a {} as parent",
                        r.region_type.as_str(),
                        t.as_str()
                    ),
                ),
                (Some(pid), Some(t)) => match region_type.get(&pid) {
                    None => p.push(
                        REGIONS_FILE,
                        line,
                        "parent_id",
                        format!("unknown region {pid}"),
                    ),
                    Some(pt) if *pt != t => p.push(
                        REGIONS_FILE,
                        line,
                        "parent_id",
                        format!(
                            "the parent of a {} must be a {}, not a {}",
                            r.region_type.as_str(),
                            t.as_str(),
                            pt.as_str()
                        ),
                    ),
                    Some(_) => {}
                },
            }
            non_empty(
                REGIONS_FILE,
                line,
                &[("name_de", &r.name_de), ("name_en", &r.name_en)],
                p,
            );
        }
    }

    /// Grant areas have two levels: a parent is a top-level area.
    fn validate_areas(&self, p: &mut Problems) {
        let area_parent: HashMap<Uuid, Option<Uuid>> = self
            .grant_areas
            .iter()
            .map(|a| (a.id, a.parent_id))
            .collect();
        for (i, a) in self.grant_areas.iter().enumerate() {
            let line = i + 1;
            if let Some(pid) = a.parent_id {
                match area_parent.get(&pid) {
                    None => p.push(
                        GRANT_AREAS_FILE,
                        line,
                        "parent_id",
                        format!("unknown grant area {pid}"),
                    ),
                    Some(Some(_)) => p.push(
                        GRANT_AREAS_FILE,
                        line,
                        "parent_id",
                        "the parent must be a top-level area (two levels only)",
                    ),
                    Some(None) => {}
                }
            }
            non_empty(
                GRANT_AREAS_FILE,
                line,
                &[("name_de", &a.name_de), ("name_en", &a.name_en)],
                p,
            );
        }
    }

    /// Eligible entities and target groups: names, descriptions and aliases are not empty.
    fn validate_vocabularies(&self, p: &mut Problems) {
        for (i, e) in self.eligible_entities.iter().enumerate() {
            non_empty(
                ELIGIBLE_ENTITIES_FILE,
                i + 1,
                &[
                    ("name_de", &e.name_de),
                    ("name_en", &e.name_en),
                    ("name_plural_de", &e.name_plural_de),
                    ("name_plural_en", &e.name_plural_en),
                    ("description_de", &e.description_de),
                    ("description_en", &e.description_en),
                ],
                p,
            );
            non_empty_all(ELIGIBLE_ENTITIES_FILE, i + 1, "aliases", &e.aliases, p);
        }
        for (i, g) in self.target_groups.iter().enumerate() {
            non_empty(
                TARGET_GROUPS_FILE,
                i + 1,
                &[("name_de", &g.name_de), ("name_en", &g.name_en)],
                p,
            );
            non_empty_all(TARGET_GROUPS_FILE, i + 1, "aliases", &g.aliases, p);
        }
    }

    fn validate_providers(&self, p: &mut Problems) {
        for (i, gp) in self.grant_providers.iter().enumerate() {
            let line = i + 1;
            non_empty(GRANT_PROVIDERS_FILE, line, &[("name", &gp.name)], p);
            if ProviderType::parse(&gp.provider_type).is_none() {
                p.push(
                    GRANT_PROVIDERS_FILE,
                    line,
                    "type",
                    format!(
                        "`{}` is not a provider type (one of: {})",
                        gp.provider_type,
                        ProviderType::names().join(", ")
                    ),
                );
            }
            let opt = [
                ("description", &gp.description),
                ("website", &gp.website),
                ("email", &gp.email),
                ("phone", &gp.phone),
                ("fax", &gp.fax),
                ("city", &gp.city),
            ];
            no_empty_optionals(GRANT_PROVIDERS_FILE, line, &opt, p);
            if let Some(w) = &gp.website {
                check_url(GRANT_PROVIDERS_FILE, line, "website", w, p);
            }
        }
    }
}

/// The ids of the records a grant may refer to.
struct Known {
    regions: HashSet<Uuid>,
    areas: HashSet<Uuid>,
    entities: HashSet<Uuid>,
    groups: HashSet<Uuid>,
    providers: HashSet<Uuid>,
}

/// Optional texts, when given, are not empty.
fn no_empty_optionals(
    file: &str,
    line: usize,
    fields: &[(&str, &Option<String>)],
    p: &mut Problems,
) {
    for (field, value) in fields {
        if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
            p.push(file, line, field, "must not be empty (omit it or use null)");
        }
    }
}

/// One grant (line `line` of the grants file): its texts, then the other checks.
fn validate_grant(line: usize, g: &Grant, known: &Known, p: &mut Problems) {
    non_empty(GRANTS_FILE, line, &[("title", &g.title)], p);
    let opt = [
        ("short_description", &g.short_description),
        ("description", &g.description),
        ("end_date_description", &g.end_date_description),
        ("funding_amount", &g.funding_amount),
        ("project_duration", &g.project_duration),
        ("funding_rate", &g.funding_rate),
        ("funding_goal", &g.funding_goal),
        ("target_group_description", &g.target_group_description),
        ("company_size", &g.company_size),
        ("application_level", &g.application_level),
        ("attribution", &g.attribution),
    ];
    no_empty_optionals(GRANTS_FILE, line, &opt, p);
    grant_references(line, g, known, p);
    grant_values(line, g, p);
    grant_lists_and_links(line, g, p);
}

/// The provider, regions (at least one), areas, target groups and entities exist.
fn grant_references(line: usize, g: &Grant, known: &Known, p: &mut Problems) {
    if let Some(pid) = g.grant_provider_id {
        if !known.providers.contains(&pid) {
            p.push(
                GRANTS_FILE,
                line,
                "grant_provider_id",
                format!("unknown grant provider {pid}"),
            );
        }
    }
    if g.region_ids.is_empty() {
        p.push(
            GRANTS_FILE,
            line,
            "region_ids",
            "at least one region is required",
        );
    }
    refs(
        line,
        "region_ids",
        &g.region_ids,
        &known.regions,
        "region",
        p,
    );
    refs(
        line,
        "grant_area_ids",
        &g.grant_area_ids,
        &known.areas,
        "grant area",
        p,
    );
    refs(
        line,
        "target_group_ids",
        &g.target_group_ids,
        &known.groups,
        "target group",
        p,
    );
    refs(
        line,
        "eligible_entity_ids",
        &g.eligible_entity_ids,
        &known.entities,
        "eligible entity",
        p,
    );
}

/// The amount is a non-negative number, the end not before the start, the
/// classification one of two.
fn grant_values(line: usize, g: &Grant, p: &mut Problems) {
    if let Some(m) = g.max_funding_amount {
        if !(m.is_finite() && m >= 0.0) {
            p.push(
                GRANTS_FILE,
                line,
                "max_funding_amount",
                "must be a non-negative number",
            );
        }
    }
    if let (Some(s), Some(e)) = (g.start_date, g.end_date) {
        if e < s {
            p.push(
                GRANTS_FILE,
                line,
                "end_date",
                format!("{e} is before start_date {s}"),
            );
        }
    }
    if let Some(c) = &g.classification {
        if c != "labelled" && c != "derived" {
            p.push(
                GRANTS_FILE,
                line,
                "classification",
                "must be `labelled` or `derived`",
            );
        }
    }
}

/// List items are not empty; links are URLs.
fn grant_lists_and_links(line: usize, g: &Grant, p: &mut Problems) {
    let lists = [
        ("eligibility_requirements", &g.eligibility_requirements),
        ("eligible_expenditures", &g.eligible_expenditures),
        ("non_eligible_expenditures", &g.non_eligible_expenditures),
        (
            "eligible_expenditure_categories",
            &g.eligible_expenditure_categories,
        ),
        ("evaluation_criteria", &g.evaluation_criteria),
        ("documents_needed", &g.documents_needed),
    ];
    for (field, values) in lists {
        non_empty_all(GRANTS_FILE, line, field, values, p);
    }
    let links = [
        ("application_links", &g.application_links),
        ("guideline_links", &g.guideline_links),
        ("reporting_and_claims_links", &g.reporting_and_claims_links),
    ];
    for (field, values) in links {
        for v in values {
            check_url(GRANTS_FILE, line, field, v, p);
        }
    }
}

fn refs(
    line: usize,
    field: &str,
    ids: &[Uuid],
    known: &HashSet<Uuid>,
    what: &str,
    p: &mut Problems,
) {
    for id in ids {
        if !known.contains(id) {
            p.push(GRANTS_FILE, line, field, format!("unknown {what} {id}"));
        }
    }
}

fn non_empty(file: &str, line: usize, fields: &[(&str, &String)], p: &mut Problems) {
    for (field, value) in fields {
        if value.trim().is_empty() {
            p.push(file, line, field, "must not be empty");
        }
    }
}

fn non_empty_all(file: &str, line: usize, field: &str, values: &[String], p: &mut Problems) {
    if values.iter().any(|v| v.trim().is_empty()) {
        p.push(file, line, field, "must not contain empty strings");
    }
}

fn check_url(file: &str, line: usize, field: &str, value: &str, p: &mut Problems) {
    let ok = (value.starts_with("https://") || value.starts_with("http://"))
        && value.len() > "https://".len()
        && !value.chars().any(char::is_whitespace);
    if !ok {
        p.push(
            file,
            line,
            field,
            format!("`{value}` is not an http(s) URL"),
        );
    }
}

/// True when `s` is a valid slug: lower-case ASCII letters and digits in groups joined by `-`.
pub fn is_valid_slug(s: &str) -> bool {
    !s.is_empty()
        && s.split('-').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

/// Collects the ids of a file, reporting duplicate ids, codes and slugs and invalid slugs.
fn ids_of<'a>(
    file: &str,
    items: impl Iterator<Item = (Uuid, &'a String, &'a String)>,
    p: &mut Problems,
) -> HashSet<Uuid> {
    let mut ids = HashSet::new();
    let mut codes = HashSet::new();
    let mut slugs = HashSet::new();
    for (i, (id, code, slug)) in items.enumerate() {
        let line = i + 1;
        if !ids.insert(id) {
            p.push(file, line, "id", format!("duplicate id {id}"));
        }
        if code.trim().is_empty() {
            p.push(file, line, "code", "must not be empty");
        } else if code != slug && !codes.insert(code.clone()) {
            p.push(file, line, "code", format!("duplicate code `{code}`"));
        }
        if !is_valid_slug(slug) {
            p.push(
                file,
                line,
                "slug",
                format!("`{slug}` is not a slug (lower-case letters and digits joined by `-`)"),
            );
        } else if !slugs.insert(slug.clone()) {
            p.push(file, line, "slug", format!("duplicate slug `{slug}`"));
        }
    }
    ids
}

fn read_file<T: DeserializeOwned>(dir: &Path, name: &str, p: &mut Problems) -> Result<Vec<T>> {
    let path = dir.join(name);
    let file = match fs::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            p.push(name, 0, "", "file is missing");
            return Ok(Vec::new());
        }
        Err(e) => return Err(Error::io(&path, e)),
    };
    let mut out = Vec::new();
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let lineno = i + 1;
        let line = match line {
            Ok(l) => l,
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                p.push(name, lineno, "", "not valid UTF-8");
                continue;
            }
            Err(e) => return Err(Error::io(&path, e)),
        };
        if line.trim().is_empty() {
            p.push(
                name,
                lineno,
                "",
                "blank line (one JSON object per line expected)",
            );
            continue;
        }
        let value: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                p.push(name, lineno, "", format!("invalid JSON: {e}"));
                continue;
            }
        };
        if !value.is_object() {
            p.push(name, lineno, "", "expected a JSON object");
            continue;
        }
        match serde_path_to_error::deserialize::<_, T>(value) {
            Ok(record) => out.push(record),
            Err(e) => {
                let path = e.path().to_string();
                let inner = e.into_inner().to_string();
                // serde reports unknown and missing fields at the record level; name them.
                let field = if path == "." {
                    field_from_message(&inner).unwrap_or_default()
                } else {
                    path
                };
                p.push(name, lineno, &field, inner);
            }
        }
    }
    Ok(out)
}

fn field_from_message(msg: &str) -> Option<String> {
    let start = msg.find('`')? + 1;
    let len = msg[start..].find('`')?;
    Some(msg[start..start + len].to_string())
}

fn write_file<T: Serialize>(dir: &Path, name: &str, records: &[T]) -> Result<()> {
    let path = dir.join(name);
    let file = fs::File::create(&path).map_err(|e| Error::io(&path, e))?;
    let mut w = std::io::BufWriter::new(file);
    for r in records {
        serde_json::to_writer(&mut w, r).map_err(|e| Error::Corrupt(e.to_string()))?;
        w.write_all(b"\n").map_err(|e| Error::io(&path, e))?;
    }
    let file = w
        .into_inner()
        .map_err(|e| Error::io(&path, e.into_error()))?;
    file.sync_all().map_err(|e| Error::io(&path, e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        assert!(is_valid_slug("foerderung-2"));
        assert!(!is_valid_slug("Foerderung"));
        assert!(!is_valid_slug("a--b"));
        assert!(!is_valid_slug("-a"));
        assert!(!is_valid_slug(""));
    }

    #[test]
    fn field_named_in_serde_messages() {
        assert_eq!(
            field_from_message("missing field `title`").as_deref(),
            Some("title")
        );
    }
}

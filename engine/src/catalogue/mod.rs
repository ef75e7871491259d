//! The catalogue: its record types ([`model`]), the import format and its validation
//! ([`records`]), the import use-case ([`import`]), atomic on-disk snapshots ([`store`]),
//! and here the in-memory catalogue: the validated records plus the indices every query
//! needs (id and slug lookups, the region and grant-area hierarchies, per-grant links).

pub mod import;
pub mod model;
pub mod records;
pub mod store;

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use uuid::Uuid;

use crate::facts::{self, GrantFacts};
use crate::model::{EligibleEntity, Grant, GrantArea, GrantProvider, Region, TargetGroup};
use crate::records::CatalogueRecords;
use crate::text::compound::Compounds;
use crate::text::{analyze, fold_name};

/// Position of a record in its list.
pub type Idx = u32;

#[derive(Debug, Default)]
pub struct Catalogue {
    pub regions: Vec<Region>,
    pub grant_areas: Vec<GrantArea>,
    pub eligible_entities: Vec<EligibleEntity>,
    pub target_groups: Vec<TargetGroup>,
    pub grant_providers: Vec<GrantProvider>,
    pub grants: Vec<Grant>,

    region_by_id: HashMap<Uuid, Idx>,
    area_by_id: HashMap<Uuid, Idx>,
    entity_by_id: HashMap<Uuid, Idx>,
    group_by_id: HashMap<Uuid, Idx>,
    provider_by_id: HashMap<Uuid, Idx>,
    provider_by_slug: HashMap<String, Idx>,
    grant_by_id: HashMap<Uuid, Idx>,
    grant_by_slug: HashMap<String, Idx>,

    /// Ancestors of each region, nearest first (not including the region itself).
    region_ancestors: Vec<Vec<Idx>>,
    region_children: Vec<Vec<Idx>>,
    area_parent: Vec<Option<Idx>>,
    area_children: Vec<Vec<Idx>>,

    pub(crate) grant_regions: Vec<Vec<Idx>>,
    pub(crate) grant_areas_of: Vec<Vec<Idx>>,
    pub(crate) grant_groups: Vec<Vec<Idx>>,
    pub(crate) grant_entities: Vec<Vec<Idx>>,
    pub(crate) grant_provider: Vec<Option<Idx>>,
    /// Analysed terms of each grant's title and texts, computed on first use.
    grant_text_terms: Vec<OnceLock<HashSet<String>>>,
    /// The compound splitter of the grants' texts, built on first use.
    compounds: OnceLock<Compounds>,
    /// Facts of each grant (who may apply, kind, terms) with source and evidence; from
    /// labels and texts at construction, refined by embeddings ([`Catalogue::set_facts`]).
    facts: Vec<GrantFacts>,
}

/// Characters of each description read for keyword matching.
const TEXT_TERMS_HEAD: usize = 3000;

fn index_by<T>(items: &[T], key: impl Fn(&T) -> Uuid) -> HashMap<Uuid, Idx> {
    items
        .iter()
        .enumerate()
        .map(|(i, t)| (key(t), i as Idx))
        .collect()
}

impl Catalogue {
    /// Builds the indices over validated records (see [`CatalogueRecords::read_dir`]).
    /// References that do not resolve are skipped, so callers must validate first.
    pub fn new(records: CatalogueRecords) -> Self {
        let CatalogueRecords {
            regions,
            grant_areas,
            eligible_entities,
            target_groups,
            grant_providers,
            grants,
        } = records;
        let region_by_id = index_by(&regions, |r| r.id);
        let area_by_id = index_by(&grant_areas, |a| a.id);
        let entity_by_id = index_by(&eligible_entities, |e| e.id);
        let group_by_id = index_by(&target_groups, |g| g.id);
        let provider_by_id = index_by(&grant_providers, |p| p.id);
        let grant_by_id = index_by(&grants, |g| g.id);
        let provider_by_slug = grant_providers
            .iter()
            .enumerate()
            .map(|(i, p)| (p.slug.clone(), i as Idx))
            .collect();
        let grant_by_slug = grants
            .iter()
            .enumerate()
            .map(|(i, g)| (g.slug.clone(), i as Idx))
            .collect();

        let region_parent: Vec<Option<Idx>> = regions
            .iter()
            .map(|r| r.parent_id.and_then(|p| region_by_id.get(&p).copied()))
            .collect();
        let region_ancestors = (0..regions.len())
            .map(|i| {
                let mut chain = Vec::new();
                let mut cur = region_parent[i];
                while let Some(p) = cur {
                    if chain.contains(&p) || chain.len() > 8 {
                        break;
                    }
                    chain.push(p);
                    cur = region_parent[p as usize];
                }
                chain
            })
            .collect();
        let mut region_children = vec![Vec::new(); regions.len()];
        for (i, p) in region_parent.iter().enumerate() {
            if let Some(p) = p {
                region_children[*p as usize].push(i as Idx);
            }
        }
        let area_parent: Vec<Option<Idx>> = grant_areas
            .iter()
            .map(|a| a.parent_id.and_then(|p| area_by_id.get(&p).copied()))
            .collect();
        let mut area_children = vec![Vec::new(); grant_areas.len()];
        for (i, p) in area_parent.iter().enumerate() {
            if let Some(p) = p {
                area_children[*p as usize].push(i as Idx);
            }
        }

        let resolve = |ids: &[Uuid], map: &HashMap<Uuid, Idx>| -> Vec<Idx> {
            ids.iter().filter_map(|id| map.get(id).copied()).collect()
        };
        let grant_regions = grants
            .iter()
            .map(|g| resolve(&g.region_ids, &region_by_id))
            .collect();
        let grant_areas_of = grants
            .iter()
            .map(|g| resolve(&g.grant_area_ids, &area_by_id))
            .collect();
        let grant_groups = grants
            .iter()
            .map(|g| resolve(&g.target_group_ids, &group_by_id))
            .collect();
        let grant_entities = grants
            .iter()
            .map(|g| resolve(&g.eligible_entity_ids, &entity_by_id))
            .collect();
        let grant_provider = grants
            .iter()
            .map(|g| {
                g.grant_provider_id
                    .and_then(|p| provider_by_id.get(&p).copied())
            })
            .collect();

        let n_grants = grants.len();
        let mut cat = Catalogue {
            regions,
            grant_areas,
            eligible_entities,
            target_groups,
            grant_providers,
            grants,
            region_by_id,
            area_by_id,
            entity_by_id,
            group_by_id,
            provider_by_id,
            provider_by_slug,
            grant_by_id,
            grant_by_slug,
            region_ancestors,
            region_children,
            area_parent,
            area_children,
            grant_regions,
            grant_areas_of,
            grant_groups,
            grant_entities,
            grant_provider,
            grant_text_terms: (0..n_grants).map(|_| OnceLock::new()).collect(),
            compounds: OnceLock::new(),
            facts: Vec::new(),
        };
        cat.facts = facts::derive(&cat, None);
        cat
    }

    /// The facts of grant `g`.
    pub fn facts(&self, g: Idx) -> &GrantFacts {
        &self.facts[g as usize]
    }

    /// The facts of every grant, catalogue order.
    pub fn all_facts(&self) -> &[GrantFacts] {
        &self.facts
    }

    /// Replaces the facts (e.g. by [`facts::derive`] with the grant vectors).
    pub fn set_facts(&mut self, facts: Vec<GrantFacts>) {
        assert_eq!(facts.len(), self.grants.len(), "one set of facts per grant");
        self.facts = facts;
    }

    /// The analysed terms ([`crate::text::analyze`]) of a grant's title, short
    /// description and description (the first 3,000 characters of each), with the parts
    /// of their compounds ([`Catalogue::compounds`]): what a profile keyword must find.
    /// Computed once per grant, on first use; the catalogue never changes, so neither do
    /// they.
    pub fn grant_text_terms(&self, g: Idx) -> &HashSet<String> {
        self.grant_text_terms[g as usize].get_or_init(|| {
            let grant = &self.grants[g as usize];
            let mut terms = analyze(&grant.title);
            for part in [&grant.short_description, &grant.description]
                .into_iter()
                .flatten()
            {
                let head: String = part.chars().take(TEXT_TERMS_HEAD).collect();
                terms.extend(analyze(&head));
            }
            self.compounds().expand(&terms).into_iter().collect()
        })
    }

    /// The German compound splitter of this catalogue: parts are terms of the grants'
    /// titles and texts, by their document frequencies. Built on first use.
    pub fn compounds(&self) -> &Compounds {
        self.compounds.get_or_init(|| {
            Compounds::from_documents(self.grants.iter().map(|g| {
                let mut terms = analyze(&g.title);
                for part in [&g.short_description, &g.description].into_iter().flatten() {
                    terms.extend(analyze(part));
                }
                terms
            }))
        })
    }

    pub fn region_idx(&self, id: &Uuid) -> Option<Idx> {
        self.region_by_id.get(id).copied()
    }
    pub fn area_idx(&self, id: &Uuid) -> Option<Idx> {
        self.area_by_id.get(id).copied()
    }
    pub fn entity_idx(&self, id: &Uuid) -> Option<Idx> {
        self.entity_by_id.get(id).copied()
    }
    pub fn group_idx(&self, id: &Uuid) -> Option<Idx> {
        self.group_by_id.get(id).copied()
    }
    pub fn provider_idx(&self, id: &Uuid) -> Option<Idx> {
        self.provider_by_id.get(id).copied()
    }
    pub fn provider_by_slug(&self, slug: &str) -> Option<Idx> {
        self.provider_by_slug.get(slug).copied()
    }
    /// The grant at arena index `g` (an index handed out by this catalogue).
    pub fn grant(&self, g: Idx) -> &Grant {
        &self.grants[g as usize]
    }
    pub fn grant_idx(&self, id: &Uuid) -> Option<Idx> {
        self.grant_by_id.get(id).copied()
    }
    pub fn grant_by_slug(&self, slug: &str) -> Option<Idx> {
        self.grant_by_slug.get(slug).copied()
    }

    /// Ancestors of a region, nearest first.
    pub fn region_ancestors(&self, r: Idx) -> &[Idx] {
        &self.region_ancestors[r as usize]
    }
    pub fn region_children(&self, r: Idx) -> &[Idx] {
        &self.region_children[r as usize]
    }
    pub fn region_parent(&self, r: Idx) -> Option<Idx> {
        self.region_ancestors[r as usize].first().copied()
    }
    pub fn area_parent(&self, a: Idx) -> Option<Idx> {
        self.area_parent[a as usize]
    }
    pub fn area_children(&self, a: Idx) -> &[Idx] {
        &self.area_children[a as usize]
    }

    /// `inner` is `outer` or lies inside it.
    pub fn region_within(&self, inner: Idx, outer: Idx) -> bool {
        inner == outer || self.region_ancestors[inner as usize].contains(&outer)
    }
    /// `inner` is `outer` or one of its sub-areas.
    pub fn area_within(&self, inner: Idx, outer: Idx) -> bool {
        inner == outer || self.area_parent[inner as usize] == Some(outer)
    }

    pub fn grant_regions(&self, g: Idx) -> &[Idx] {
        &self.grant_regions[g as usize]
    }
    pub fn grant_areas(&self, g: Idx) -> &[Idx] {
        &self.grant_areas_of[g as usize]
    }
    pub fn grant_target_groups(&self, g: Idx) -> &[Idx] {
        &self.grant_groups[g as usize]
    }
    pub fn grant_entities(&self, g: Idx) -> &[Idx] {
        &self.grant_entities[g as usize]
    }
    pub fn grant_provider(&self, g: Idx) -> Option<Idx> {
        self.grant_provider[g as usize]
    }

    /// Resolves a region given as UUID, slug, code or German/English name (case- and
    /// umlaut-insensitive), in that order of precedence.
    pub fn find_region(&self, value: &str) -> Option<Idx> {
        if let Ok(id) = Uuid::parse_str(value.trim()) {
            return self.region_idx(&id);
        }
        let folded = fold_name(value);
        let slugged = folded.replace(' ', "-");
        let code = value.trim().to_ascii_uppercase();
        let continent_code = format!("continent:{code}");
        first_match(
            &self.regions,
            &[
                &|r: &Region| r.slug == slugged,
                &|r: &Region| r.code == code || r.code == continent_code,
                &|r: &Region| fold_name(&r.name_de) == folded || fold_name(&r.name_en) == folded,
            ],
        )
    }

    /// Resolves a grant area given as UUID, slug, code or German/English name, in that
    /// order of precedence; a name shared by a parent and a sub-area means the parent.
    pub fn find_area(&self, value: &str) -> Option<Idx> {
        if let Ok(id) = Uuid::parse_str(value.trim()) {
            return self.area_idx(&id);
        }
        let folded = fold_name(value);
        let slugged = folded.replace(' ', "-");
        let code = value.trim();
        let name =
            |a: &GrantArea| fold_name(&a.name_de) == folded || fold_name(&a.name_en) == folded;
        first_match(
            &self.grant_areas,
            &[
                &|a: &GrantArea| a.slug == slugged,
                &|a: &GrantArea| a.code == code,
                &|a: &GrantArea| a.parent_id.is_none() && name(a),
                &name,
            ],
        )
    }

    /// The grant areas a topic word or phrase that is no area's name stands for: every
    /// area whose German or English name has, for each word of `value` (of at least four
    /// letters), a word starting with it ("Energie" → "Energieeffizienz & Erneuerbare
    /// Energien" and its research and consulting sub-areas; "health" → "Health & Social
    /// Affairs", "Health & Medicine"). Empty when the value has no such word or no area
    /// matches.
    pub fn areas_named_by(&self, value: &str) -> Vec<Idx> {
        let words: Vec<String> = fold_name(value)
            .split(' ')
            .filter(|w| w.chars().count() >= 4)
            .map(str::to_string)
            .collect();
        if words.is_empty() {
            return Vec::new();
        }
        let names_all = |name: &str| {
            let name = fold_name(name);
            words
                .iter()
                .all(|w| name.split(' ').any(|n| n.starts_with(w.as_str())))
        };
        (0..self.grant_areas.len() as Idx)
            .filter(|&a| {
                let area = &self.grant_areas[a as usize];
                names_all(&area.name_de) || names_all(&area.name_en)
            })
            .collect()
    }

    /// Resolves an eligible entity given as UUID, slug, code, name, plural or alias.
    pub fn find_entity(&self, value: &str) -> Option<Idx> {
        find_named(
            value,
            |id| self.entity_idx(id),
            &self.eligible_entities,
            |e| Named {
                slug: &e.slug,
                code: &e.code,
                names: [&e.name_de, &e.name_en, &e.name_plural_de, &e.name_plural_en]
                    .into_iter()
                    .chain(e.aliases.iter())
                    .collect(),
            },
        )
    }

    /// Resolves a target group given as UUID, slug, code, name or alias.
    pub fn find_target_group(&self, value: &str) -> Option<Idx> {
        find_named(
            value,
            |id| self.group_idx(id),
            &self.target_groups,
            |g| Named {
                slug: &g.slug,
                code: &g.code,
                names: [&g.name_de, &g.name_en]
                    .into_iter()
                    .chain(g.aliases.iter())
                    .collect(),
            },
        )
    }
}

/// How a vocabulary record can be named.
struct Named<'a> {
    slug: &'a str,
    code: &'a str,
    names: Vec<&'a String>,
}

/// The record `value` names: by UUID, else by slug, code, or any of its names (case-
/// and umlaut-insensitive), in that order of precedence.
fn find_named<T>(
    value: &str,
    by_id: impl Fn(&Uuid) -> Option<Idx>,
    items: &[T],
    named: impl Fn(&T) -> Named<'_>,
) -> Option<Idx> {
    if let Ok(id) = Uuid::parse_str(value.trim()) {
        return by_id(&id);
    }
    let folded = fold_name(value);
    let slugged = folded.replace(' ', "-");
    let code = value.trim();
    first_match(
        items,
        &[
            &|t: &T| named(t).slug == slugged,
            &|t: &T| named(t).code == code,
            &|t: &T| named(t).names.iter().any(|n| fold_name(n) == folded),
        ],
    )
}

/// The first record matching the first rule that matches any record.
fn first_match<T>(items: &[T], rules: &[&dyn Fn(&T) -> bool]) -> Option<Idx> {
    rules
        .iter()
        .find_map(|rule| items.iter().position(rule))
        .map(|i| i as Idx)
}

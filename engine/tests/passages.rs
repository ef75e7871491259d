//! What a grant is embedded from, and the leave-one-out evaluation that must not see a
//! labelled grant's own labels in its stored vector.

use std::path::Path;
use std::sync::OnceLock;

use grantmatch_engine::catalogue::Idx;
use grantmatch_engine::classify::{leave_one_out_predictions, predict};
use grantmatch_engine::facts::is_labelled;
use grantmatch_engine::facts::neighbours::{self, Neighbours};
use grantmatch_engine::records::CatalogueRecords;
use grantmatch_engine::vectors::{grant_text, normalized, passage_text};
use grantmatch_engine::{Engine, GrantVectors};

/// The shipped catalogue without vectors.
fn real() -> &'static Engine {
    static E: OnceLock<Engine> = OnceLock::new();
    E.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/catalogue");
        Engine::from_records(CatalogueRecords::read_dir(&dir).unwrap()).unwrap()
    })
}

fn grant(slug: &str) -> Idx {
    real()
        .catalogue
        .grant_by_slug(slug)
        .unwrap_or_else(|| panic!("{slug}"))
}

#[test]
fn a_labelled_grant_is_embedded_with_the_names_of_its_source_areas() {
    let cat = &real().catalogue;
    // A title-only record of the Förderdatenbank with its Förderbereiche.
    let g = grant("ausfallbuergschaften-bbb-fit-bay");
    assert!(is_labelled(cat, g));
    assert_eq!(
        passage_text(cat, g),
        "Ausfallbürgschaften der Bürgschaftsbank Bayern - Sonderprogramm BBB fit\n\
         Förderbereich: Existenzgründung & -festigung, Unternehmensfinanzierung"
    );
    assert_eq!(
        grant_text(cat.grant(g)),
        "Ausfallbürgschaften der Bürgschaftsbank Bayern - Sonderprogramm BBB fit"
    );
}

#[test]
fn a_grant_with_derived_areas_is_embedded_from_its_own_text_alone() {
    let cat = &real().catalogue;
    let derived: Vec<Idx> = (0..cat.grants.len() as Idx)
        .filter(|&g| !is_labelled(cat, g))
        .collect();
    assert!(
        derived.len() > 1000,
        "the shipped catalogue derives most labels"
    );
    let with_areas = derived
        .iter()
        .filter(|&&g| !cat.grant_areas(g).is_empty())
        .count();
    assert!(
        with_areas > 1000,
        "derived grants carry areas: {with_areas}"
    );
    for g in derived {
        assert_eq!(passage_text(cat, g), grant_text(cat.grant(g)));
    }
}

/// Seeded vectors around one direction (like e5's narrow cone).
fn vectors(n: usize) -> GrantVectors {
    let mut s: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    };
    let base: Vec<f32> = (0..16).map(|_| next()).collect();
    let rows = (0..n)
        .map(|_| base.iter().map(|b| b + 0.5 * next()).collect())
        .collect();
    GrantVectors::from_rows("test/passages", 16, rows).unwrap()
}

#[test]
fn leave_one_out_looks_each_grant_up_by_its_query_vector() {
    let cat = &real().catalogue;
    let stored = vectors(cat.grants.len());
    let labelled = neighbours::labelled(cat);
    let (x, y) = (labelled[0], labelled[1]);

    // The query of x is y's stored vector: y is x's nearest labelled grant, at cosine 1.
    let near = Neighbours::of_vector(&stored, &labelled, x, stored.row(y as usize));
    let slug_y = &cat.grant(y).slug;
    assert!(
        near.evidence(cat)
            .starts_with(&format!("nearest labelled programmes: {slug_y} (1.00)")),
        "{}",
        near.evidence(cat)
    );
    // Never x itself, even when its query is its stored row.
    let own = Neighbours::of_vector(&stored, &labelled, x, stored.row(x as usize));
    assert!(!own
        .evidence(cat)
        .contains(&format!(" {} (", cat.grant(x).slug)));

    // With the stored vectors as queries the evaluation predicts as the import does.
    let same = leave_one_out_predictions(cat, &stored, &stored);
    assert!(same.len() > 250);
    for (g, p) in same.iter().take(40) {
        assert_eq!(p, &predict(cat, &stored, &labelled, *g));
    }

    // Moving the query of x leaves every other prediction as it was.
    let rows: Vec<Vec<f32>> = (0..stored.len())
        .map(|i| {
            let from = if i == x as usize { y as usize } else { i };
            normalized(stored.row(from))
        })
        .collect();
    let queries = GrantVectors::from_rows("test/passages", 16, rows).unwrap();
    let moved = leave_one_out_predictions(cat, &stored, &queries);
    assert_eq!(moved.len(), same.len());
    for ((g, p), (g2, q)) in same.iter().zip(&moved) {
        assert_eq!(g, g2);
        if *g != x {
            assert_eq!(p, q, "grant {g}");
        }
    }
}

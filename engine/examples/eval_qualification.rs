//! Measures custom categories and AI qualification on the real catalogue.
//!
//! ```sh
//! cargo run --release -p grantmatch-engine --example eval_qualification -- DATA_DIR [MODEL_DIR]
//! ```
//!
//! (a) Categories equal to Förderbereiche (name and English name only, no description or
//! keywords) are assigned by [`categorize`] to the labelled programmes; precision and
//! recall against their source grant areas (the area or one of its sub-areas). The
//! programmes are embedded from their own texts for this, without the grant areas their
//! stored vectors carry (since session 35).
//! (b) Qualification: `fixtures/eval/qualification.json` holds prompts with programmes
//! labelled by reading them (`{"prompts": [{"prompt": ..., "labels": {slug: bool}}]}`);
//! accuracy of `ai_qualified`.
//! (c) `fixtures/eval/qualification_v2.json`: six long partner prompts, 60 programmes
//! each, labelled by reading, split into a tuning and a held-out half; F1 per prompt.
//! `qualification_v3.json`: two shorter prompts written later (session 16), 60
//! programmes each, all held out; read for tuning since session 17 (its figure is no
//! longer unseen). `qualification_v4.json`: three prompts written in session 17, 60
//! programmes each, all held out. `qualification_v5.json`: three prompts written in
//! session 18 (SMEs in NRW, Kommunen in Brandenburg, founders in Thüringen), 60
//! programmes each, all held out; v4 and v5 are read for tuning since session 23.
//! `qualification_v6.json`: three prompts written in session 23 (culture and sports
//! organisations in Baden-Württemberg, tourism businesses in Bayern, research-intensive
//! SMEs in Sachsen), 60 programmes each, all held out (never tuned on).
//! `qualification_v7.json`: three prompts written in session 28 (Kommunen in Thüringen,
//! craft businesses in Rheinland-Pfalz, care providers in Sachsen), 60 programmes each,
//! a tuning set (every item `tune`).
//! (d) `fixtures/eval/categories_v2.json`: three category sets of five categories with
//! descriptions, 110 programmes each, same split; F1 per category; and
//! `categories_v2_en.json`: sets A and B written in English, on the same programmes.

use std::path::PathBuf;

use grantmatch_engine::classify::is_heldout;
use grantmatch_engine::embed::{Embedder, ModelConfig, ModelVariant};
use grantmatch_engine::qualify::{categorize, qualify, CustomCategory, QualificationPrompt};
use grantmatch_engine::vectors::GrantVectors;
use grantmatch_engine::{Engine, Idx};

const AREAS: &[&str] = &[
    "digitalisierung",
    "energieeffizienz-erneuerbare-energien",
    "existenzgruendung-festigung",
    "gesundheit-soziales",
    "kultur-medien-sport",
    "landwirtschaft-laendliche-entwicklung",
];

fn main() {
    let mut args = std::env::args().skip(1);
    let data = PathBuf::from(
        args.next()
            .expect("usage: eval_qualification DATA_DIR [MODEL_DIR]"),
    );
    let model_dir = args
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| grantmatch_engine::embed::default_model_dir(std::env::var_os));
    let engine = Engine::open(&data).expect("engine");
    let embedder = Embedder::load(&ModelConfig {
        dir: model_dir,
        variant: ModelVariant::default(),
        threads: None,
    })
    .expect("model");
    let cat = &engine.catalogue;
    let labelled: Vec<Idx> = (0..cat.grants.len() as Idx)
        .filter(|&g| cat.grants[g as usize].classification.as_deref() == Some("labelled"))
        .collect();

    // (a) categories
    let areas: Vec<Idx> = AREAS
        .iter()
        .map(|s| cat.find_area(s).unwrap_or_else(|| panic!("area {s}")))
        .collect();
    let cats: Vec<CustomCategory> = areas
        .iter()
        .map(|&a| {
            let area = &cat.grant_areas[a as usize];
            CustomCategory {
                id: area.id,
                name: area.name_de.clone(),
                name_en: area.name_en.clone(),
                description: None,
                keywords: vec![],
            }
        })
        .collect();
    // The labelled programmes' vectors embed their grant areas (`vectors::passage_text`),
    // the truth here: categorised by the vectors of their own texts instead.
    let stored = engine.vectors().expect("the catalogue has embeddings");
    let own_text =
        GrantVectors::own_text(cat, &embedder, stored).expect("embed the programmes' own texts");
    let text_engine = Engine::open(&data)
        .and_then(|e| e.with_vectors(own_text))
        .expect("engine");
    let out = categorize(&text_engine, &embedder, &cats, &labelled).expect("categorize");
    let (mut tp, mut fp, mut fn_) = (0usize, 0usize, 0usize);
    println!(
        "categories = Förderbereiche, {} labelled programmes",
        labelled.len()
    );
    println!("| category | truth | assigned | precision | recall |");
    println!("|---|---|---|---|---|");
    for (c, &a) in cats.iter().zip(&areas) {
        let (mut t, mut f, mut n) = (0, 0, 0);
        for (g, ids) in &out {
            let truth = cat.grant_areas(*g).iter().any(|&x| cat.area_within(x, a));
            let pred = ids.contains(&c.id);
            match (truth, pred) {
                (true, true) => t += 1,
                (false, true) => f += 1,
                (true, false) => n += 1,
                _ => {}
            }
        }
        println!(
            "| {} | {} | {} | {:.3} | {:.3} |",
            c.name,
            t + n,
            t + f,
            t as f64 / (t + f).max(1) as f64,
            t as f64 / (t + n).max(1) as f64
        );
        tp += t;
        fp += f;
        fn_ += n;
    }
    let p = tp as f64 / (tp + fp).max(1) as f64;
    let r = tp as f64 / (tp + fn_).max(1) as f64;
    println!(
        "| micro | {} | {} | {p:.3} | {r:.3} | F1 {:.3}",
        tp + fn_,
        tp + fp,
        2.0 * p * r / (p + r).max(f64::EPSILON)
    );
    // The same micro-F1 on each half of the programmes (the split of the classifier's
    // evaluation, `classify::is_heldout`).
    for (half, heldout) in [("tune", false), ("heldout", true)] {
        let (mut t, mut f, mut n) = (0usize, 0usize, 0usize);
        for (g, ids) in out
            .iter()
            .filter(|(g, _)| is_heldout(&cat.grants[*g as usize].slug) == heldout)
        {
            for (c, &a) in cats.iter().zip(&areas) {
                let truth = cat.grant_areas(*g).iter().any(|&x| cat.area_within(x, a));
                let pred = ids.contains(&c.id);
                t += (truth && pred) as usize;
                f += (!truth && pred) as usize;
                n += (truth && !pred) as usize;
            }
        }
        let (p, r, f1) = prf(t, f, n);
        println!(
            "| micro {half} | {} | {} | {p:.3} | {r:.3} | F1 {f1:.3}",
            t + n,
            t + f
        );
    }

    qualification_set(&engine, &embedder, "v2");
    qualification_set(&engine, &embedder, "v3");
    qualification_set(&engine, &embedder, "v4");
    qualification_set(&engine, &embedder, "v5");
    qualification_set(&engine, &embedder, "v6");
    qualification_set(&engine, &embedder, "v7");
    qualification_en(&engine, &embedder);
    categories_v2(&engine, &embedder);

    // (b) qualification
    let file =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/eval/qualification.json");
    let Ok(text) = std::fs::read_to_string(&file) else {
        println!("no {} — qualification not measured", file.display());
        return;
    };
    let v: serde_json::Value = serde_json::from_str(&text).expect("qualification.json");
    for p in v["prompts"].as_array().expect("prompts") {
        let text = p["prompt"].as_str().unwrap();
        let prompt = QualificationPrompt::parse(cat, text);
        let labels = p["labels"].as_object().unwrap();
        let ids: Vec<Idx> = labels
            .keys()
            .map(|s| cat.grant_by_slug(s).unwrap_or_else(|| panic!("grant {s}")))
            .collect();
        let out = qualify(&engine, &embedder, &prompt, &ids).expect("qualify");
        let (mut ok, mut tp, mut fp, mut fn_) = (0, 0, 0, 0);
        for (g, q) in &out {
            let truth = labels[&cat.grants[*g as usize].slug].as_bool().unwrap();
            ok += (truth == q.qualified) as usize;
            tp += (truth && q.qualified) as usize;
            fp += (!truth && q.qualified) as usize;
            fn_ += (truth && !q.qualified) as usize;
            if truth != q.qualified && std::env::var_os("VERBOSE").is_some() {
                println!(
                    "  miss {} truth={truth}: {}",
                    cat.grants[*g as usize].slug, q.reasoning
                );
            }
        }
        println!(
            "prompt {text:?}: accuracy {:.3} ({ok}/{}), {} labelled qualified; precision {:.3}, recall {:.3}",
            ok as f64 / out.len() as f64,
            out.len(),
            tp + fn_,
            tp as f64 / (tp + fp).max(1) as f64,
            tp as f64 / (tp + fn_).max(1) as f64
        );
    }
}

/// Precision, recall and F1 from counts.
fn prf(tp: usize, fp: usize, fn_: usize) -> (f64, f64, f64) {
    let p = tp as f64 / (tp + fp).max(1) as f64;
    let r = tp as f64 / (tp + fn_).max(1) as f64;
    (p, r, 2.0 * p * r / (p + r).max(f64::EPSILON))
}

/// Qualification sets whose held-out items are read while tuning (since session 17): their
/// figures are reported but are no longer evidence of generalisation.
const READ_FOR_TUNING: [&str; 3] = ["v3", "v4", "v5"];

/// (c) `fixtures/eval/qualification_v2.json` (`name` "v2"): long partner prompts,
/// programmes labelled by reading, a fixed tune/held-out split; F1 per prompt and split,
/// macro-F1. `qualification_v3.json` … `_v6.json`: later prompts, every item held out;
/// `_v7.json`: every item for tuning.
fn qualification_set(engine: &Engine, embedder: &Embedder, name: &str) {
    let Some(v) = read_set(&format!("qualification_{name}.json")) else {
        return;
    };
    println!("\nqualification {name} (fixtures/eval/qualification_{name}.json)");
    qualification_prompts(
        engine,
        embedder,
        name,
        v["prompts"].as_array().expect("prompts"),
    );
}

/// `fixtures/eval/qualification_en.json`: the German prompts of v2, v3, v5 and v7 written
/// in English, each on the items of the prompt it translates (`of`); the items of a set
/// read for tuning (v3, v5; v7 is all tuning) count as tuning items.
fn qualification_en(engine: &Engine, embedder: &Embedder) {
    let Some(prompts) = translated("qualification_en.json", "prompts", |t| {
        let set = t["of"]["set"].as_str().expect("of.set");
        let source = read_set(&format!("qualification_{set}.json")).expect("translated set");
        let mut p = source["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == t["of"]["id"])
            .unwrap_or_else(|| panic!("{} translates no prompt", t["id"]))
            .clone();
        p["id"] = t["id"].clone();
        p["prompt"] = t["prompt"].clone();
        if READ_FOR_TUNING.contains(&set) {
            for i in p["items"].as_array_mut().unwrap() {
                i["split"] = "tune".into();
            }
        }
        p
    }) else {
        return;
    };
    println!("\nqualification in English (fixtures/eval/qualification_en.json)");
    qualification_prompts(engine, embedder, "en", &prompts);
}

/// The entries under `key` of a file of sets written in English, each made a full entry
/// by `with_source` (which looks up the set or prompt it translates, `of`).
fn translated(
    file: &str,
    key: &str,
    with_source: impl Fn(&serde_json::Value) -> serde_json::Value,
) -> Option<Vec<serde_json::Value>> {
    let en = read_set(file)?;
    Some(
        en[key]
            .as_array()
            .unwrap_or_else(|| panic!("{file}: no {key}"))
            .iter()
            .map(with_source)
            .collect(),
    )
}

/// A JSON file of `fixtures/eval`, or `None` (with a note) when it is missing.
fn read_set(name: &str) -> Option<serde_json::Value> {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/eval")
        .join(name);
    let Ok(text) = std::fs::read_to_string(&file) else {
        println!("no {} — not measured", file.display());
        return None;
    };
    Some(serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}")))
}

/// F1 per prompt and split, and macro-F1, of qualification prompts (`id`, `prompt`,
/// `items` with `slug`, `split`, `qualified`).
fn qualification_prompts(
    engine: &Engine,
    embedder: &Embedder,
    name: &str,
    prompts: &[serde_json::Value],
) {
    let cat = &engine.catalogue;
    println!("| prompt | split | items | qualified (truth) | qualified (system) | precision | recall | F1 |");
    println!("|---|---|---|---|---|---|---|---|");
    let mut macro_f1: std::collections::BTreeMap<&str, Vec<f64>> = Default::default();
    for p in prompts {
        let prompt = QualificationPrompt::parse(cat, p["prompt"].as_str().unwrap());
        let items = p["items"].as_array().unwrap();
        let ids: Vec<Idx> = items
            .iter()
            .map(|i| {
                let s = i["slug"].as_str().unwrap();
                cat.grant_by_slug(s).unwrap_or_else(|| panic!("grant {s}"))
            })
            .collect();
        let out = qualify(engine, embedder, &prompt, &ids).expect("qualify");
        let decided: std::collections::HashMap<Idx, bool> =
            out.iter().map(|(g, q)| (*g, q.qualified)).collect();
        // QUAL_DEBUG=P3 prints the reading and the tuning errors of one prompt: the
        // tuning half's, and every item of a set read for tuning (`READ_FOR_TUNING`).
        // QUAL_DEBUG=all prints every such item of every prompt, right or wrong.
        let dump_all = std::env::var("QUAL_DEBUG").ok().as_deref() == Some("all");
        if dump_all {
            let readable =
                |i: &serde_json::Value| i["split"] == "tune" || READ_FOR_TUNING.contains(&name);
            for ((i, g), (_, q)) in items.iter().zip(&ids).zip(&out) {
                if readable(i) {
                    println!(
                        "  item {} {} truth={} system={}: {}",
                        p["id"].as_str().unwrap_or("?"),
                        cat.grants[*g as usize].slug,
                        i["qualified"],
                        q.qualified,
                        q.reasoning
                    );
                }
            }
        }
        if std::env::var("QUAL_DEBUG").ok().as_deref() == p["id"].as_str() {
            println!("{}", serde_json::to_string_pretty(&prompt).unwrap());
            let readable =
                |i: &serde_json::Value| i["split"] == "tune" || READ_FOR_TUNING.contains(&name);
            for ((i, g), (_, q)) in items.iter().zip(&ids).zip(&out) {
                if readable(i) && i["qualified"].as_bool() != Some(q.qualified) {
                    println!(
                        "  miss {} truth={}: {}",
                        cat.grants[*g as usize].slug, i["qualified"], q.reasoning
                    );
                }
            }
        }
        for split in ["tune", "heldout"] {
            let (mut tp, mut fp, mut fn_, mut n, mut truth_n, mut sys_n) = (0, 0, 0, 0, 0, 0);
            for (i, g) in items.iter().zip(&ids) {
                if i["split"] != split {
                    continue;
                }
                let truth = i["qualified"].as_bool().unwrap();
                let sys = decided[g];
                n += 1;
                truth_n += truth as usize;
                sys_n += sys as usize;
                tp += (truth && sys) as usize;
                fp += (!truth && sys) as usize;
                fn_ += (truth && !sys) as usize;
            }
            if n == 0 {
                continue;
            }
            let (pr, re, f1) = prf(tp, fp, fn_);
            macro_f1.entry(split).or_default().push(f1);
            println!(
                "| {} | {split} | {n} | {truth_n} | {sys_n} | {pr:.3} | {re:.3} | {f1:.3} |",
                p["id"].as_str().unwrap()
            );
        }
    }
    for (split, f) in macro_f1 {
        println!(
            "macro-F1 {split}: {:.3}",
            f.iter().sum::<f64>() / f.len().max(1) as f64
        );
    }
}

/// (d) `fixtures/eval/categories_v2.json`: three category sets with descriptions,
/// programmes labelled by reading, a fixed split; F1 per category and split. Then the
/// same for `categories_v2_en.json`: sets A and B written in English, each set's items
/// taken from the set it translates (`of`).
fn categories_v2(engine: &Engine, embedder: &Embedder) {
    let Some(v) = read_set("categories_v2.json") else {
        return;
    };
    category_sets(
        engine,
        embedder,
        "categories v2",
        v["sets"].as_array().expect("sets"),
    );
    let Some(sets) = translated("categories_v2_en.json", "sets", |t| {
        let of = v["sets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == t["of"])
            .unwrap_or_else(|| panic!("set {} translates no set", t["id"]));
        let mut set = t.clone();
        set["items"] = of["items"].clone();
        set
    }) else {
        return;
    };
    category_sets(engine, embedder, "categories v2 in English", &sets);
}

/// F1 per category and split of category sets (`id`, `categories`, `items`).
fn category_sets(engine: &Engine, embedder: &Embedder, title: &str, sets: &[serde_json::Value]) {
    let cat = &engine.catalogue;
    println!("\n{title}");
    println!("| set | category | split | truth | assigned | precision | recall | F1 |");
    println!("|---|---|---|---|---|---|---|---|");
    for set in sets {
        let defs = set["categories"].as_array().unwrap();
        let cats: Vec<CustomCategory> = defs
            .iter()
            .map(|c| {
                let keywords: Vec<String> = c["keywords"]
                    .as_array()
                    .map(|k| {
                        k.iter()
                            .filter_map(|x| x.as_str().map(String::from))
                            .collect()
                    })
                    .unwrap_or_default();
                CustomCategory::new(
                    uuid::Uuid::new_v5(
                        &uuid::Uuid::NAMESPACE_OID,
                        c["id"].as_str().unwrap().as_bytes(),
                    ),
                    c["name"].as_str().unwrap(),
                    c["name_en"].as_str().unwrap(),
                    c["description"].as_str(),
                    &keywords,
                )
                .expect("category")
            })
            .collect();
        let items = set["items"].as_array().unwrap();
        let ids: Vec<Idx> = items
            .iter()
            .map(|i| {
                let s = i["slug"].as_str().unwrap();
                cat.grant_by_slug(s).unwrap_or_else(|| panic!("grant {s}"))
            })
            .collect();
        let out = categorize(engine, embedder, &cats, &ids).expect("categorize");
        let assigned: std::collections::HashMap<Idx, Vec<uuid::Uuid>> = out.into_iter().collect();
        for split in ["tune", "heldout"] {
            let mut f1s = Vec::new();
            for (def, c) in defs.iter().zip(&cats) {
                let cid = def["id"].as_str().unwrap();
                let (mut tp, mut fp, mut fn_) = (0, 0, 0);
                for (i, g) in items.iter().zip(&ids) {
                    if i["split"] != split {
                        continue;
                    }
                    let truth = i["categories"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|x| x.as_str() == Some(cid));
                    let sys = assigned[g].contains(&c.id);
                    // CAT_DEBUG=C5 prints the tuning-half errors of one category.
                    if split == "tune"
                        && truth != sys
                        && std::env::var("CAT_DEBUG").ok().as_deref() == Some(cid)
                    {
                        let grant = &cat.grants[*g as usize];
                        println!(
                            "  {} {} ({:?}): {}",
                            if truth { "missed" } else { "wrong" },
                            grant.slug,
                            cat.facts(*g).kind.value,
                            grant.title
                        );
                    }
                    tp += (truth && sys) as usize;
                    fp += (!truth && sys) as usize;
                    fn_ += (truth && !sys) as usize;
                }
                let (pr, re, f1) = prf(tp, fp, fn_);
                f1s.push(f1);
                println!(
                    "| {} | {cid} {} | {split} | {} | {} | {pr:.3} | {re:.3} | {f1:.3} |",
                    set["id"].as_str().unwrap(),
                    c.name,
                    tp + fn_,
                    tp + fp
                );
            }
            println!(
                "| {} | macro-F1 | {split} | | | | | {:.3} |",
                set["id"].as_str().unwrap(),
                f1s.iter().sum::<f64>() / f1s.len().max(1) as f64
            );
        }
    }
}

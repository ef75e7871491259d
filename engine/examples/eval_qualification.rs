//! Measures custom categories and AI qualification on the real catalogue.
//!
//! ```sh
//! cargo run --release -p grantmatch-engine --example eval_qualification -- DATA_DIR [MODEL_DIR]
//! ```
//!
//! (a) Categories equal to Förderbereiche (name and English name only, no description or
//! keywords) are assigned by [`categorize`] to the labelled programmes; precision and
//! recall against their source grant areas (the area or one of its sub-areas).
//! (b) Qualification: `fixtures/eval/qualification.json` holds prompts with programmes
//! labelled by reading them (`{"prompts": [{"prompt": ..., "labels": {slug: bool}}]}`);
//! accuracy of `ai_qualified`.

use std::path::PathBuf;

use grantmatch_engine::embed::{Embedder, ModelConfig, ModelVariant};
use grantmatch_engine::qualify::{categorize, qualify, CustomCategory, QualificationPrompt};
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
        .unwrap_or_else(grantmatch_engine::embed::default_model_dir);
    let engine = Engine::open(&data).expect("engine");
    let embedder = Embedder::load(&ModelConfig {
        dir: model_dir,
        variant: ModelVariant::Fp32,
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
    let out = categorize(&engine, &embedder, &cats, &labelled).expect("categorize");
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

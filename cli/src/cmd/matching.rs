//! `grantmatch match` and `grantmatch eval`.

use std::collections::HashMap;

use grantmatch_engine::metrics::{parse_qrels_tsv, score_ranking, Judged, RECALL_AT};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};
use grantmatch_engine::embed::{Embedder, ModelConfig};
use grantmatch_engine::matching::passes_filters;
use grantmatch_engine::profile::Locale;
use grantmatch_engine::views::MatchView;
use grantmatch_engine::{Engine, MatchInput, MatchOptions, ResolvedScope};
use serde_json::{json, Value};

pub fn load_options(path: Option<&Path>) -> Result<MatchOptions> {
    match path {
        None => Ok(MatchOptions::default()),
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read {}", p.display()))?;
            serde_json::from_str(&text)
                .with_context(|| format!("{}: not valid match options", p.display()))
        }
    }
}

fn today() -> chrono::NaiveDate {
    chrono::Utc::now().date_naive()
}

pub fn run_match(
    data_dir: &Path,
    model: &ModelConfig,
    profile: &Path,
    locale: Option<&str>,
    options: &MatchOptions,
) -> Result<()> {
    let engine = Engine::open(data_dir)?;
    let embedder = Embedder::load(model)?;
    let text = std::fs::read_to_string(profile)
        .with_context(|| format!("cannot read {}", profile.display()))?;
    let value: Value = serde_json::from_str(&text)
        .with_context(|| format!("{}: invalid JSON", profile.display()))?;
    let mut input = MatchInput::from_value(value)?;
    if let Some(l) = locale {
        Locale::parse(l).ok_or_else(|| anyhow!("--locale must be de or en"))?;
        input
            .organization_profile
            .get_or_insert_with(Default::default)
            .locale = Some(l.to_string());
    }
    let scope = ResolvedScope::unrestricted(&engine.catalogue);
    let (_, matches) = engine.match_profile(&embedder, &scope, &input, options, today())?;
    let cat = &engine.catalogue;
    let results: Vec<Value> = matches
        .iter()
        .map(|m| {
            let mut v = json!(MatchView::new(cat, m));
            v["slug"] = json!(cat.grant(m.grant).slug);
            v["components"] = json!(m.components);
            v
        })
        .collect();
    println!(
        "{}",
        serde_json::to_string_pretty(
            &json!({ "results_count": results.len(), "results": results })
        )?
    );
    Ok(())
}

struct EvalProfile {
    id: String,
    /// `tune` or `heldout`, fixed before tuning (`fixtures/eval/README.md`).
    split: String,
    input: MatchInput,
}

/// Graded judgements: profile id → grant slug → grade.
type Qrels = HashMap<String, Judged>;

fn load_eval(dir: &Path) -> Result<(Vec<EvalProfile>, Qrels)> {
    let path = dir.join("profiles.json");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let raw: Vec<Value> = serde_json::from_str(&text)?;
    let mut profiles = Vec::new();
    for p in raw {
        let id = p["id"]
            .as_str()
            .ok_or_else(|| anyhow!("profile without id"))?
            .to_string();
        let input = MatchInput::from_value(p["request"].clone())
            .with_context(|| format!("profile {id}"))?;
        let split = p["split"].as_str().unwrap_or("tune").to_string();
        profiles.push(EvalProfile { id, split, input });
    }
    let path = dir.join("qrels.tsv");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let qrels = parse_qrels_tsv(&text).with_context(|| path.display().to_string())?;
    Ok((profiles, qrels))
}

/// What `grantmatch eval` evaluates, and how it prints.
pub struct EvalArgs {
    /// The set: `profiles.json` and `qrels.tsv`.
    pub dir: PathBuf,
    pub options: MatchOptions,
    /// JSON instead of a table.
    pub json: bool,
    /// Every profile's `regions` left out.
    pub without_regions: bool,
    /// Every profile's `keywords` left out.
    pub without_keywords: bool,
}

pub fn run_eval(data_dir: &Path, model: &ModelConfig, args: &EvalArgs) -> Result<()> {
    let (options, json_out) = (&args.options, args.json);
    let engine = Engine::open(data_dir)?;
    let embedder = Embedder::load(model)?;
    let (mut profiles, qrels) = load_eval(&args.dir)?;
    for p in &mut profiles {
        if let Some(op) = p.input.organization_profile.as_mut() {
            if args.without_regions {
                op.regions.clear();
            }
            if args.without_keywords {
                op.keywords.clear();
            }
        }
    }
    let scope = ResolvedScope::unrestricted(&engine.catalogue);
    let cat = &engine.catalogue;
    let day = today();
    let mut rows = Vec::new();
    // Scores of returned programmes by judged grade (0 = unjudged), for the bands.
    let mut by_grade: [Vec<f64>; 4] = Default::default();
    for p in &profiles {
        let judged = qrels.get(&p.id).cloned().unwrap_or_default();
        let (resolved, matches, score) =
            engine.evaluate_profile(&embedder, &scope, &p.input, &judged, options, day, 10)?;
        for m in &matches {
            let grade = judged
                .get(&cat.grant(m.grant).slug)
                .copied()
                .unwrap_or(0)
                .min(3);
            by_grade[grade as usize].push(f64::from(m.relevance_score));
        }
        let baseline: Vec<String> = engine
            .bm25_rank(&scope, &resolved.query_text, usize::MAX)?
            .into_iter()
            .filter(|&g| passes_filters(cat, &resolved, g, day))
            .take(RECALL_AT)
            .map(|g| cat.grant(g).slug.clone())
            .collect();
        let (n, r) = (score.ndcg, score.recall);
        let bm25 = score_ranking(baseline, &judged, 10);
        let (bn, br) = (bm25.ndcg, bm25.recall);
        let locale = if resolved.locale == Locale::En {
            "en"
        } else {
            "de"
        };
        rows.push(json!({ "profile": p.id, "split": p.split, "locale": locale, "ndcg@10": n, "recall@25": r, "bm25_ndcg@10": bn, "bm25_recall@25": br }));
    }
    let mean = |keep: &dyn Fn(&Value) -> bool, key: &str| -> (f64, usize) {
        let v: Vec<f64> = rows
            .iter()
            .filter(|r| keep(r))
            .filter_map(|r| r[key].as_f64())
            .collect();
        (v.iter().sum::<f64>() / v.len().max(1) as f64, v.len())
    };
    let mut groups = Vec::new();
    for split in ["all", "tune", "heldout"] {
        for locale in ["all", "de", "en"] {
            let keep = |r: &Value| {
                (split == "all" || r["split"] == split)
                    && (locale == "all" || r["locale"] == locale)
            };
            let (n, count) = mean(&keep, "ndcg@10");
            // A set without one split (every profile held out) prints no empty rows.
            if count == 0 {
                continue;
            }
            groups.push(json!({
                "split": split,
                "locale": locale,
                "profiles": count,
                "ndcg@10": n,
                "recall@25": mean(&keep, "recall@25").0,
                "bm25_ndcg@10": mean(&keep, "bm25_ndcg@10").0,
                "bm25_recall@25": mean(&keep, "bm25_recall@25").0,
            }));
        }
    }
    let median = |v: &mut Vec<f64>| -> Option<f64> {
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        Some(v[v.len() / 2])
    };
    let bands: Vec<Value> = (0..4)
        .rev()
        .map(|g| {
            let below_50 = by_grade[g].iter().filter(|&&s| s < 50.0).count();
            json!({
                "grade": g,
                "returned": by_grade[g].len(),
                "median_score": median(&mut by_grade[g].clone()),
                "share_below_50": below_50 as f64 / by_grade[g].len().max(1) as f64,
            })
        })
        .collect();
    if json_out {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "summary": {
                    "profiles": profiles.len(),
                    "model": embedder.model_id(),
                    "ndcg@10": groups[0]["ndcg@10"],
                    "recall@25": groups[0]["recall@25"],
                    "bm25_ndcg@10": groups[0]["bm25_ndcg@10"],
                    "bm25_recall@25": groups[0]["bm25_recall@25"],
                },
                "model": embedder.model_id(),
                "groups": groups,
                "scores_by_grade": bands,
                "per_profile": rows,
            }))?
        );
    } else {
        println!("profile\tsplit\tlocale\tnDCG@10\tRecall@25\tBM25 nDCG@10\tBM25 Recall@25");
        for r in &rows {
            println!(
                "{}\t{}\t{}\t{:.3}\t{:.3}\t{:.3}\t{:.3}",
                r["profile"].as_str().unwrap_or(""),
                r["split"].as_str().unwrap_or(""),
                r["locale"].as_str().unwrap_or(""),
                r["ndcg@10"].as_f64().unwrap_or(0.0),
                r["recall@25"].as_f64().unwrap_or(0.0),
                r["bm25_ndcg@10"].as_f64().unwrap_or(0.0),
                r["bm25_recall@25"].as_f64().unwrap_or(0.0)
            );
        }
        println!("\nsplit\tlocale\tprofiles\tnDCG@10\tRecall@25\tBM25 nDCG@10\tBM25 Recall@25");
        for g in &groups {
            println!(
                "{}\t{}\t{}\t{:.3}\t{:.3}\t{:.3}\t{:.3}",
                g["split"].as_str().unwrap_or(""),
                g["locale"].as_str().unwrap_or(""),
                g["profiles"],
                g["ndcg@10"].as_f64().unwrap_or(0.0),
                g["recall@25"].as_f64().unwrap_or(0.0),
                g["bm25_ndcg@10"].as_f64().unwrap_or(0.0),
                g["bm25_recall@25"].as_f64().unwrap_or(0.0)
            );
        }
        println!(
            "\ngrade\treturned\tmedian score\tshare below 50\t({})",
            embedder.model_id()
        );
        for b in &bands {
            println!(
                "{}\t{}\t{}\t{:.2}",
                b["grade"],
                b["returned"],
                b["median_score"],
                b["share_below_50"].as_f64().unwrap_or(0.0)
            );
        }
    }
    Ok(())
}

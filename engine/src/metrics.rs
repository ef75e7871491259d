//! Ranking quality measures and the scoring of one profile's ranking against graded
//! judgements: the evaluation shared by `grantmatch eval` and the Python `evaluate`
//! (the ranking itself is [`crate::Engine::evaluate_profile`]).

use std::collections::HashMap;

use crate::error::{Error, Result};

/// Depth of Recall: the number of matches a request returns.
pub const RECALL_AT: usize = 25;

/// Graded judgements of one profile: grant slug → grade (0–3).
pub type Judged = HashMap<String, u32>;

/// One profile's ranking scored against its judgements.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileScore {
    /// Grant slugs, best first.
    pub ranked: Vec<String>,
    /// nDCG at the depth asked for.
    pub ndcg: f64,
    /// Recall@[`RECALL_AT`].
    pub recall: f64,
    /// Judged grants, and those judged relevant (grade ≥ 1).
    pub judged: usize,
    pub relevant: usize,
}

/// Scores `ranked` (slugs, best first) against `judged`: nDCG@`k` and Recall@25.
pub fn score_ranking(ranked: Vec<String>, judged: &Judged, k: usize) -> ProfileScore {
    ProfileScore {
        ndcg: ndcg(&ranked, judged, k),
        recall: recall(&ranked, judged, RECALL_AT),
        judged: judged.len(),
        relevant: judged.values().filter(|g| **g >= 1).count(),
        ranked,
    }
}

/// Parses graded judgements in the TSV of `fixtures/eval/qrels.tsv`: a header line, then
/// `profile_id<TAB>grant_slug<TAB>grade`.
pub fn parse_qrels_tsv(text: &str) -> Result<HashMap<String, Judged>> {
    let mut qrels: HashMap<String, Judged> = HashMap::new();
    for line in text.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        let grade = match cols[..] {
            [_, _, g] => g.trim().parse::<u32>().ok(),
            _ => None,
        }
        .ok_or_else(|| Error::InvalidInput(format!("qrels: malformed line `{line}`")))?;
        qrels
            .entry(cols[0].to_string())
            .or_default()
            .insert(cols[1].to_string(), grade);
    }
    Ok(qrels)
}

/// nDCG@k with gains 2^grade − 1; `judged` maps item → grade (absent = 0).
pub fn ndcg(ranked: &[String], judged: &HashMap<String, u32>, k: usize) -> f64 {
    let gain = |g: u32| 2f64.powi(g as i32) - 1.0;
    let dcg: f64 = ranked
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, s)| gain(*judged.get(s).unwrap_or(&0)) / ((i + 2) as f64).log2())
        .sum();
    let mut ideal: Vec<u32> = judged.values().copied().collect();
    ideal.sort_unstable_by(|a, b| b.cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, g)| gain(*g) / ((i + 2) as f64).log2())
        .sum();
    if idcg == 0.0 {
        0.0
    } else {
        dcg / idcg
    }
}

/// Share of the judged-relevant items (grade ≥ 1) among the first `k`.
pub fn recall(ranked: &[String], judged: &HashMap<String, u32>, k: usize) -> f64 {
    let relevant = judged.values().filter(|g| **g >= 1).count();
    if relevant == 0 {
        return 0.0;
    }
    let hits = ranked
        .iter()
        .take(k)
        .filter(|s| judged.get(*s).is_some_and(|g| *g >= 1))
        .count();
    hits as f64 / relevant as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ndcg_and_recall() {
        let judged: HashMap<String, u32> = [("a".to_string(), 3), ("b".to_string(), 1)].into();
        assert!((ndcg(&["a".into(), "b".into()], &judged, 10) - 1.0).abs() < 1e-9);
        assert!(ndcg(&["b".into(), "a".into()], &judged, 10) < 1.0);
        assert_eq!(ndcg(&["x".into()], &judged, 10), 0.0);
        assert_eq!(recall(&["a".into(), "x".into()], &judged, 25), 0.5);
        assert_eq!(recall(&["a".into()], &HashMap::new(), 25), 0.0);
        let s = score_ranking(vec!["b".into(), "a".into()], &judged, 1);
        assert_eq!((s.judged, s.relevant, s.recall), (2, 2, 1.0));
        assert!(s.ndcg < 0.5);
    }

    #[test]
    fn qrels_parse_and_malformed_lines_are_named() {
        let q = parse_qrels_tsv("profile_id\tgrant_slug\tgrade\np1\ta\t3\np1\tb\t1\n").unwrap();
        assert_eq!(q["p1"]["a"], 3);
        assert_eq!(q["p1"].len(), 2);
        let e = parse_qrels_tsv("h\np1\ta\n").unwrap_err().to_string();
        assert!(e.contains("p1\ta"), "{e}");
        assert!(parse_qrels_tsv("h\np1\ta\tx\n").is_err());
    }
}

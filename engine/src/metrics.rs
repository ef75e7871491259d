//! Ranking quality measures used by `grantmatch eval` and the Python `evaluate`.

use std::collections::HashMap;

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
    }
}

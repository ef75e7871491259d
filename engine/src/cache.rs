//! A bounded, thread-safe cache of values computed from a text, keyed by the text's
//! SHA-256: the query vectors of the embedder, and the resolved profiles (by the
//! request's JSON) and lexical (BM25) scores of matching. Full means cleared: simple and cheap, and a partner's repeated profile is
//! cached again by its next request.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

/// SHA-256 of a text (cache keys for query and passage embeddings).
pub fn text_hash(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

/// Values by text, at most `capacity` of them.
pub struct TextCache<V: ?Sized> {
    map: Mutex<HashMap<[u8; 32], Arc<V>>>,
    capacity: usize,
}

impl<V: ?Sized> TextCache<V> {
    pub fn new(capacity: usize) -> Self {
        TextCache {
            map: Mutex::new(HashMap::new()),
            capacity: capacity.max(1),
        }
    }

    /// The value cached for `text`.
    pub fn get(&self, text: &str) -> Option<Arc<V>> {
        self.get_hashed(&text_hash(text))
    }

    /// The value cached for a text of hash `key`.
    pub fn get_hashed(&self, key: &[u8; 32]) -> Option<Arc<V>> {
        self.lock().get(key).cloned()
    }

    /// Caches `value` for `text` (clearing the cache first when it is full).
    pub fn insert(&self, text: &str, value: Arc<V>) {
        let mut map = self.lock();
        if map.len() >= self.capacity {
            map.clear();
        }
        map.insert(text_hash(text), value);
    }

    /// The value for `text`: cached, else computed by `make` and cached. Two threads
    /// asking for the same new text may both compute it; both get an equal value.
    pub fn get_or_try_insert<E>(
        &self,
        text: &str,
        make: impl FnOnce() -> Result<Arc<V>, E>,
    ) -> Result<Arc<V>, E> {
        if let Some(v) = self.get(text) {
            return Ok(v);
        }
        let v = make()?;
        self.insert(text, v.clone());
        Ok(v)
    }

    /// True when a value for `text` is cached.
    pub fn contains(&self, text: &str) -> bool {
        self.lock().contains_key(&text_hash(text))
    }

    /// Number of cached values.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Arc<V>>> {
        // A panic while holding the lock leaves a consistent map (insert/clear only).
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caches_by_text_and_clears_when_full() {
        let cache: TextCache<[f32]> = TextCache::new(2);
        let mut calls = 0;
        let mut get = |t: &str| {
            cache
                .get_or_try_insert(t, || {
                    calls += 1;
                    Ok::<_, ()>(Arc::from(vec![t.len() as f32]))
                })
                .unwrap()
        };
        assert_eq!(&*get("ab"), &[2.0]);
        assert_eq!(&*get("ab"), &[2.0]);
        assert_eq!(&*get("abc"), &[3.0]);
        // Full (2): the third text clears the cache, so "ab" is computed again.
        assert_eq!(&*get("abcd"), &[4.0]);
        assert_eq!(&*get("ab"), &[2.0]);
        assert_eq!(calls, 4);
        assert_eq!(cache.len(), 2);
        assert!(cache.contains("ab") && cache.contains("abcd") && !cache.contains("abc"));
    }

    #[test]
    fn an_error_caches_nothing() {
        let cache: TextCache<str> = TextCache::new(4);
        assert!(cache
            .get_or_try_insert("x", || Err::<Arc<str>, _>("failed"))
            .is_err());
        assert!(cache.is_empty());
    }
}

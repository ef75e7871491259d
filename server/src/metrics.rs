//! Prometheus metrics: `GET /metrics` in the OpenMetrics text format (prometheus-client).
//!
//! Counted as requests pass the API's tracking middleware: requests by endpoint label
//! (`GET /api/v1/grants/{id}`, route templates only, never ids or partners) and status,
//! their latency, and rate-limit refusals. Read from the state when scraped: matching
//! requests in progress, the model's state, and the usage ledger's backlog (rows
//! waiting for the next batch write and the age of the oldest).

use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

use crate::views::ModelState;
use crate::AppState;

/// The content type of the OpenMetrics text format.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    endpoint: String,
    status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EndpointLabels {
    endpoint: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ModelLabels {
    state: String,
}

/// Latency buckets from 0.25 ms to about 8 s.
fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.000_25, 2.0, 16))
}

pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<EndpointLabels, Histogram, fn() -> Histogram>,
    refusals: Family<EndpointLabels, Counter>,
    matching_in_progress: Gauge,
    model: Family<ModelLabels, Gauge>,
    ledger_backlog: Gauge,
    ledger_lag: Gauge<f64, AtomicU64>,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut m = Metrics {
            registry: Registry::with_prefix("grantmatch"),
            requests: Family::default(),
            latency: Family::new_with_constructor(latency_histogram),
            refusals: Family::default(),
            matching_in_progress: Gauge::default(),
            model: Family::default(),
            ledger_backlog: Gauge::default(),
            ledger_lag: Gauge::default(),
        };
        let r = &mut m.registry;
        r.register(
            "http_requests",
            "API requests by endpoint label and status",
            m.requests.clone(),
        );
        r.register(
            "http_request_duration_seconds",
            "API request latency by endpoint label (POST /api/v1/matching is the matching latency)",
            m.latency.clone(),
        );
        r.register(
            "rate_limit_refusals",
            "Requests refused with 429 by the per-token, per-partner or matching rate limit",
            m.refusals.clone(),
        );
        r.register(
            "matching_in_progress",
            "Matching requests computed or waiting for the model (the queue's depth)",
            m.matching_in_progress.clone(),
        );
        r.register(
            "model_state",
            "1 for the embedding model's current state (loading, loaded, failed)",
            m.model.clone(),
        );
        r.register(
            "ledger_backlog_rows",
            "Usage ledger rows waiting for the next batch write",
            m.ledger_backlog.clone(),
        );
        r.register(
            "ledger_flush_lag_seconds",
            "Age of the oldest usage ledger row not yet written (0 when none waits)",
            m.ledger_lag.clone(),
        );
        m
    }
}

impl Metrics {
    /// Counts one API request (called by the tracking middleware).
    pub fn observe_request(&self, endpoint: &str, status: u16, seconds: f64) {
        self.requests
            .get_or_create(&RequestLabels {
                endpoint: endpoint.to_string(),
                status: status.to_string(),
            })
            .inc();
        let endpoint = EndpointLabels {
            endpoint: endpoint.to_string(),
        };
        self.latency.get_or_create(&endpoint).observe(seconds);
        if status == 429 {
            self.refusals.get_or_create(&endpoint).inc();
        }
    }

    /// The exposition: state-derived gauges are read now.
    pub fn render(&self, state: &AppState) -> String {
        self.matching_in_progress
            .set(state.matcher.in_progress() as i64);
        let current = state.matcher.model_state();
        for s in ModelState::ALL {
            self.model
                .get_or_create(&ModelLabels {
                    state: s.as_str().into(),
                })
                .set(i64::from(s == current));
        }
        let (rows, oldest) = state.store.ledger().backlog();
        self.ledger_backlog.set(rows as i64);
        let lag = oldest.map_or(0.0, |t| {
            (state.clock.now() - t).num_milliseconds().max(0) as f64 / 1000.0
        });
        self.ledger_lag.set(lag);
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

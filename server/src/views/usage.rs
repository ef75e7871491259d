//! Usage responses: request statistics of a period and the fair-use quota.

use std::collections::BTreeMap;

use chrono::{DateTime, NaiveDate, Utc};
use serde::Serialize;
use utoipa::ToSchema;

/// Reporting period (UTC; weeks start on Monday).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Period {
    Day,
    Week,
    Month,
    Quarter,
    Year,
}

impl Period {
    pub const ALL: [Period; 5] = [
        Self::Day,
        Self::Week,
        Self::Month,
        Self::Quarter,
        Self::Year,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Day => "day",
            Self::Week => "week",
            Self::Month => "month",
            Self::Quarter => "quarter",
            Self::Year => "year",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == s)
    }
}

/// Partner tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Starter,
    Standard,
    Enterprise,
}

impl Tier {
    pub const ALL: [Tier; 3] = [Self::Starter, Self::Standard, Self::Enterprise];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Starter => "starter",
            Self::Standard => "standard",
            Self::Enterprise => "enterprise",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// Traffic of one day.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UsageDay {
    pub date: NaiveDate,
    pub requests: u64,
    pub matching_requests: u64,
}

/// Request statistics of the partner (all its tokens) since the start of the period.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UsageStats {
    pub total_requests: u64,
    /// 2xx responses.
    pub successful_requests: u64,
    /// 4xx and 5xx responses.
    pub failed_requests: u64,
    /// Answered (2xx) matching requests.
    pub matching_requests: u64,
    /// `GET /grants` and `GET /grants/{id}`.
    pub grants_requests: u64,
    /// Distinct organisations with an answered matching request.
    pub active_organizations: u64,
    /// Mean latency, rounded to whole milliseconds (the spec's integer).
    pub average_response_time_ms: u64,
    /// The same mean with one decimal (extra field): sub-millisecond traffic does not
    /// read as 0.
    pub average_response_time_ms_precise: f64,
    /// Endpoint label (`GET /api/v1/grants/{id}`) → request count.
    pub by_endpoint: BTreeMap<String, u64>,
    /// Only days with traffic, ascending.
    pub by_day: Vec<UsageDay>,
}

impl UsageStats {
    /// The totals by their field names, in the order of the response (dashboard, CSV).
    pub fn figures(&self) -> [(&'static str, u64); 7] {
        [
            ("total_requests", self.total_requests),
            ("successful_requests", self.successful_requests),
            ("failed_requests", self.failed_requests),
            ("matching_requests", self.matching_requests),
            ("grants_requests", self.grants_requests),
            ("active_organizations", self.active_organizations),
            ("average_response_time_ms", self.average_response_time_ms),
        ]
    }
}

/// Name and tier of the calling partner.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PartnerInfo {
    pub name: String,
    pub tier: Tier,
}

/// `GET /usage/stats`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UsageStatsResponse {
    pub stats: UsageStats,
    pub period: Period,
    /// First instant of the period (UTC).
    pub period_start: DateTime<Utc>,
    pub partner: PartnerInfo,
}

/// Usage of one limit.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QuotaCounter {
    pub current: u64,
    pub limit: u64,
    pub percentage: f64,
}

/// `ok` below 90 %, `warning` from 90 % to 100 %, `exceeded` above 100 %.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum QuotaStatus {
    Ok,
    Warning,
    Exceeded,
}

/// The fair-use quota of the current quarter. Quotas never block requests.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Quota {
    /// `YYYY-Qn`.
    #[schema(pattern = "^[0-9]{4}-Q[1-4]$")]
    pub quarter: String,
    pub tier: Tier,
    pub active_organizations: QuotaCounter,
    pub matching_requests: QuotaCounter,
    pub status: QuotaStatus,
    /// true at 90 % or more of a limit.
    pub warning: bool,
    /// true when a limit is exceeded.
    pub exceeded: bool,
}

/// `GET /usage/quota`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QuotaResponse {
    pub quota: Quota,
}

//! Grant provider responses.

use grantmatch_engine::views::GrantProviderView;
use serde::Serialize;
use utoipa::ToSchema;

use super::PageMeta;

/// Paging metadata of the providers list: both shapes shown by the spec.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ProviderPageMeta {
    #[serde(flatten)]
    pub meta: PageMeta,
    /// Same as `current_page`.
    #[schema(minimum = 1)]
    pub page: u64,
    /// Same as `total_count`.
    #[schema(minimum = 0)]
    pub total: u64,
}

impl From<PageMeta> for ProviderPageMeta {
    fn from(meta: PageMeta) -> Self {
        ProviderPageMeta {
            page: meta.current_page,
            total: meta.total_count,
            meta,
        }
    }
}

/// `GET /grant_providers`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GrantProviderListResponse {
    pub grant_providers: Vec<GrantProviderView>,
    pub meta: ProviderPageMeta,
}

/// `GET /grant_providers/{id}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GrantProviderDetailResponse {
    pub grant_provider: GrantProviderView,
}

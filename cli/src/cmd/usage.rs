//! `grantmatch usage`: a partner's statistics and quota, as `GET /usage/stats` and
//! `/usage/quota` report them, with the fair-use e-mails sent.

use crate::config::Store;
use anyhow::{anyhow, Result};
use grantmatch_server::usage::{outbox, parse_period, period_start, stats, QuotaPolicy, QuotaView};

use super::find_partner;

pub fn run(store: &Store, partner: &str, period: &str, quota_quarter_share: f64) -> Result<()> {
    let db = store.open()?;
    let p = find_partner(&db, partner)?;
    let period = parse_period(Some(period))?;
    let now = chrono::Utc::now();
    let since = period_start(period, now).ok_or_else(|| anyhow!("bad period"))?;
    let policy = QuotaPolicy {
        quarter_share: quota_quarter_share,
    };
    let quota = QuotaView::compute(&db, &p, now, &policy)?;
    let mails: Vec<serde_json::Value> = outbox(&db, false)?
        .into_iter()
        .filter(|m| m.partner_id == p.id.to_string())
        .map(|m| serde_json::json!({ "quarter": m.quarter, "kind": m.kind, "recipient": m.recipient, "subject": m.subject, "sent": m.sent }))
        .collect();
    let out = serde_json::json!({
        "partner": { "id": p.id, "name": p.name, "tier": p.tier },
        "period": period,
        "period_start": since,
        "stats": stats(&db, p.id, since)?,
        "quota": quota.view()?,
        "warning_emails": mails,
    });
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

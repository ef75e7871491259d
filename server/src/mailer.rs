//! Sends queued quota-warning e-mails from the outbox over SMTP (when configured).
//! Without SMTP the e-mails stay in the outbox (`grantmatch usage` lists them).

use std::sync::Arc;
use std::time::Duration;

use lettre::message::Mailbox;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use crate::AppState;

/// SMTP settings: `smtp://host:port` (plain SMTP to a local relay) and the sender.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmtpConfig {
    pub host: String,
    pub port: u16,
    pub from: String,
}

impl SmtpConfig {
    /// Parses `smtp://host[:port]`.
    pub fn parse(url: &str, from: &str) -> Result<Self, String> {
        let rest = url
            .strip_prefix("smtp://")
            .ok_or("the SMTP URL must start with smtp://")?;
        let (host, port) = match rest.trim_end_matches('/').rsplit_once(':') {
            Some((h, p)) => (
                h.to_string(),
                p.parse().map_err(|_| format!("bad SMTP port `{p}`"))?,
            ),
            None => (rest.trim_end_matches('/').to_string(), 25),
        };
        if host.is_empty() {
            return Err("the SMTP URL has no host".into());
        }
        from.parse::<Mailbox>()
            .map_err(|e| format!("bad sender address `{from}`: {e}"))?;
        Ok(SmtpConfig {
            host,
            port,
            from: from.to_string(),
        })
    }
}

async fn send_pending(state: &Arc<AppState>, cfg: &SmtpConfig) {
    let mails = match state.store.outbox(true).await {
        Ok(m) => m,
        Err(e) => {
            tracing::error!(error = %e, "cannot read the e-mail outbox");
            return;
        }
    };
    let transport = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&cfg.host)
        .port(cfg.port)
        .timeout(Some(Duration::from_secs(10)))
        .build();
    for m in mails {
        let Some(to) = m.recipient.as_deref() else {
            tracing::warn!(partner = %m.partner_id, "quota warning e-mail has no recipient (no contact e-mail); kept in the outbox");
            continue;
        };
        // Several replicas may read the same unsent e-mail: only the one whose claim
        // succeeds sends it.
        let (id, now) = (m.id, state.clock.now());
        match state.store.claim_mail(id, now).await {
            Ok(true) => {}
            Ok(false) => continue,
            Err(e) => {
                tracing::error!(error = %e, "cannot claim an outbox e-mail");
                continue;
            }
        }
        let result = async {
            let msg = Message::builder()
                .from(cfg.from.parse::<Mailbox>().map_err(|e| e.to_string())?)
                .to(to.parse::<Mailbox>().map_err(|e| e.to_string())?)
                .subject(m.subject.clone())
                .body(m.body.clone())
                .map_err(|e| e.to_string())?;
            transport
                .send(msg)
                .await
                .map(|_| ())
                .map_err(|e| e.to_string())
        }
        .await;
        if let Err(e) = &result {
            tracing::warn!(error = %e, "quota warning e-mail not sent; will retry");
        }
        let (id, now) = (m.id, state.clock.now());
        if let Err(e) = state.store.mark_sent(id, result, now).await {
            tracing::error!(error = %e, "cannot update the e-mail outbox");
        }
    }
}

/// Sends outbox e-mails when woken and once a minute (retries).
pub fn spawn(state: Arc<AppState>, cfg: SmtpConfig) {
    tokio::spawn(async move {
        loop {
            send_pending(&state, &cfg).await;
            tokio::select! {
                _ = state.mail_wakeup.notified() => {}
                _ = tokio::time::sleep(Duration::from_secs(60)) => {}
            }
        }
    });
}

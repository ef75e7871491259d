//! TLS to PostgreSQL (issue #14: "TLS possible"): rustls with the ring provider, through
//! tokio-postgres-rustls, chosen by the URL's `sslmode` as libpq chooses:
//!
//! | `sslmode` | `sslrootcert` | connection |
//! |---|---|---|
//! | unset, `disable`, `prefer` | — | no TLS (as before: sockets and loopback unchanged) |
//! | `require` | unset | TLS; the server's certificate is not verified (libpq's `require`) |
//! | `require` or `verify-ca` | `PATH` | TLS; the certificate chain must lead to a certificate of the PEM file `PATH`; the host name is not checked |
//! | `verify-full` | `PATH` | TLS; chain as above, and the certificate must name the host of the URL (DNS name or IP address) |
//!
//! `verify-ca` and `verify-full` without `sslrootcert` are refused (there are no
//! system roots to fall back on). tokio-postgres itself knows only `disable`, `prefer`
//! and `require` and no `sslrootcert`: [`target`] takes them out of the URL first.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, Error as TlsError, RootCertStore,
    SignatureScheme,
};

use crate::error::ServerError;

/// How a connection is secured (see the module's table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TlsMode {
    /// No TLS.
    Off,
    /// TLS without verifying the server's certificate.
    Require,
    /// TLS; the chain is verified against the roots in this PEM file, the host name not.
    VerifyCa(PathBuf),
    /// TLS; the chain and the host name are verified (roots in this PEM file).
    VerifyFull(PathBuf),
}

/// A PostgreSQL URL split into what tokio-postgres reads and the TLS mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The URL (or key=value string) for tokio-postgres: `sslrootcert` removed,
    /// `verify-ca` / `verify-full` given as `require`.
    pub url: String,
    pub tls: TlsMode,
}

fn invalid(message: String) -> ServerError {
    ServerError::Invalid(message)
}

/// Reads `sslmode` and `sslrootcert` of a `postgres://` URL (query parameters) or a
/// key=value connection string.
pub fn target(url: &str) -> Result<Target, ServerError> {
    let is_url = url.starts_with("postgres://") || url.starts_with("postgresql://");
    let (base, params, sep): (&str, Vec<&str>, &str) = if is_url {
        match url.split_once('?') {
            Some((base, query)) => (base, query.split('&').collect(), "&"),
            None => (url, Vec::new(), "&"),
        }
    } else {
        ("", url.split_whitespace().collect(), " ")
    };
    let decode = |s: &str| -> String {
        if is_url {
            form_urlencoded::parse(format!("v={s}").as_bytes())
                .next()
                .map(|(_, v)| v.into_owned())
                .unwrap_or_default()
        } else {
            s.trim_matches('\'').to_string()
        }
    };
    let (mut mode, mut root) = (None::<String>, None::<PathBuf>);
    let mut kept = Vec::new();
    for p in params.iter().filter(|p| !p.is_empty()) {
        match p.split_once('=') {
            Some(("sslmode", v)) => mode = Some(decode(v)),
            Some(("sslrootcert", v)) => root = Some(PathBuf::from(decode(v))),
            _ => kept.push(p.to_string()),
        }
    }
    let tls = match (mode.as_deref(), root) {
        (None | Some("disable" | "prefer"), _) => TlsMode::Off,
        (Some("require"), None) => TlsMode::Require,
        (Some("require" | "verify-ca"), Some(root)) => TlsMode::VerifyCa(root),
        (Some("verify-full"), Some(root)) => TlsMode::VerifyFull(root),
        (Some(m @ ("verify-ca" | "verify-full")), None) => {
            return Err(invalid(format!(
                "database URL: sslmode={m} needs sslrootcert=PATH (a PEM file of the trusted certificates)"
            )))
        }
        (Some(other), _) => {
            return Err(invalid(format!(
                "database URL: unknown sslmode `{other}` (disable, prefer, require, verify-ca or verify-full)"
            )))
        }
    };
    // tokio-postgres gets the mode it knows.
    match (&tls, mode.as_deref()) {
        (TlsMode::Off, Some(m)) => kept.push(format!("sslmode={m}")),
        (TlsMode::Off, None) => {}
        _ => kept.push("sslmode=require".to_string()),
    }
    let url = match (is_url, kept.is_empty()) {
        (true, true) => base.to_string(),
        (true, false) => format!("{base}?{}", kept.join(sep)),
        (false, _) => kept.join(sep),
    };
    Ok(Target { url, tls })
}

/// The rustls client configuration of `mode` (`None`: no TLS).
pub fn client_config(mode: &TlsMode) -> Result<Option<ClientConfig>, ServerError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| ServerError::Database(format!("TLS: {e}")))?;
    let config = match mode {
        TlsMode::Off => return Ok(None),
        TlsMode::Require => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerification(provider)))
            .with_no_client_auth(),
        TlsMode::VerifyCa(path) => {
            let roots = Arc::new(roots(path)?);
            let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider)
                .build()
                .map_err(|e| ServerError::Database(format!("TLS: {e}")))?;
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyName(webpki)))
                .with_no_client_auth()
        }
        TlsMode::VerifyFull(path) => builder
            .with_root_certificates(roots(path)?)
            .with_no_client_auth(),
    };
    Ok(Some(config))
}

/// The certificates of a PEM file.
fn roots(path: &std::path::Path) -> Result<RootCertStore, ServerError> {
    let bad = |e: &dyn std::fmt::Display| invalid(format!("sslrootcert {}: {e}", path.display()));
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(path).map_err(|e| bad(&e))? {
        roots.add(cert.map_err(|e| bad(&e))?).map_err(|e| bad(&e))?;
    }
    if roots.is_empty() {
        return Err(bad(&"no certificate in the file"));
    }
    Ok(roots)
}

/// A connection's driver future (whatever its stream type).
pub type Driver = Pin<Box<dyn Future<Output = Result<(), tokio_postgres::Error>> + Send>>;

/// Connects with `config` over TLS as `tls` says.
pub async fn connect(
    config: &tokio_postgres::Config,
    tls: Option<ClientConfig>,
) -> Result<(tokio_postgres::Client, Driver), tokio_postgres::Error> {
    match tls {
        None => {
            let (client, conn) = config.connect(tokio_postgres::NoTls).await?;
            Ok((client, Box::pin(conn)))
        }
        Some(tls) => {
            let make = tokio_postgres_rustls::MakeRustlsConnect::new(tls);
            let (client, conn) = config.connect(make).await?;
            Ok((client, Box::pin(conn)))
        }
    }
}

/// `require` without roots: any certificate (the handshake's signatures are still
/// checked, so the connection is encrypted to whoever holds the certificate's key).
#[derive(Debug)]
struct NoVerification(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain verified, any host name accepted.
#[derive(Debug)]
struct AnyName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        {
            Err(TlsError::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_chooses_the_tls_mode_and_tokio_postgres_gets_what_it_knows() {
        let t = |u: &str| target(u).unwrap();
        // Unchanged defaults: no TLS.
        assert_eq!(
            t("postgres://gm@127.0.0.1:5432/gm"),
            Target {
                url: "postgres://gm@127.0.0.1:5432/gm".into(),
                tls: TlsMode::Off
            }
        );
        assert_eq!(
            t("postgres://gm@%2Ftmp%2Fpg/gm?sslmode=prefer").tls,
            TlsMode::Off
        );
        assert_eq!(
            t("postgres://gm@db/gm?sslmode=disable&options=-c%20x%3Dy").url,
            "postgres://gm@db/gm?options=-c%20x%3Dy&sslmode=disable"
        );
        // require: TLS, unverified unless a root certificate is named.
        assert_eq!(
            t("postgres://gm@db/gm?sslmode=require"),
            Target {
                url: "postgres://gm@db/gm?sslmode=require".into(),
                tls: TlsMode::Require
            }
        );
        assert_eq!(
            t("postgresql://gm@db/gm?sslrootcert=%2Fetc%2Fca.pem&sslmode=require").tls,
            TlsMode::VerifyCa("/etc/ca.pem".into())
        );
        assert_eq!(
            t("postgres://gm@db/gm?sslmode=verify-full&sslrootcert=/etc/ca.pem&application_name=gm"),
            Target {
                url: "postgres://gm@db/gm?application_name=gm&sslmode=require".into(),
                tls: TlsMode::VerifyFull("/etc/ca.pem".into())
            }
        );
        assert_eq!(
            t("host=db user=gm sslmode=verify-ca sslrootcert=/etc/ca.pem"),
            Target {
                url: "host=db user=gm sslmode=require".into(),
                tls: TlsMode::VerifyCa("/etc/ca.pem".into())
            }
        );
        // What tokio-postgres gets parses.
        for u in [
            "postgres://gm@db/gm?sslmode=verify-full&sslrootcert=/etc/ca.pem",
            "host=db user=gm sslmode=verify-ca sslrootcert=/etc/ca.pem",
        ] {
            let c: tokio_postgres::Config = t(u).url.parse().unwrap();
            assert_eq!(c.get_ssl_mode(), tokio_postgres::config::SslMode::Require);
        }
        // Verification without roots, or an unknown mode: refused.
        let err = target("postgres://gm@db/gm?sslmode=verify-full").unwrap_err();
        assert!(err.to_string().contains("sslrootcert"), "{err}");
        let err = target("postgres://gm@db/gm?sslmode=allow").unwrap_err();
        assert!(err.to_string().contains("unknown sslmode"), "{err}");
    }

    #[test]
    fn a_root_file_without_certificates_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let err = client_config(&TlsMode::VerifyFull(empty)).unwrap_err();
        assert!(err.to_string().contains("no certificate"), "{err}");
        let err = client_config(&TlsMode::VerifyCa(dir.path().join("missing.pem"))).unwrap_err();
        assert!(err.to_string().contains("missing.pem"), "{err}");
        assert!(client_config(&TlsMode::Off).unwrap().is_none());
        assert!(client_config(&TlsMode::Require).unwrap().is_some());
    }
}

//! TLS for the bundled HTTP client ([`super::WebTaskApi`], so `ares run --supervisor
//! https://…` and the Python package's `ar.connect("https://…")`): the one place where the
//! client's trust store is built. rustls 0.23 with ring, the same the web API serves with.
//!
//! The certificates trusted, in this order:
//!
//! 1. **`SSL_CERT_FILE`** (environment, a PEM bundle), when set and not empty: it *replaces*
//!    the system's roots, as it does for OpenSSL, curl and Python. A file that cannot be read
//!    or holds no certificate is an error naming it, never a silent fallback.
//! 2. Otherwise **the system's bundle**: the first of [`SYSTEM_BUNDLES`] that exists and
//!    holds certificates (Debian/Ubuntu/Alpine, Fedora/RHEL, openSUSE, macOS ports).
//! 3. Otherwise the **Mozilla roots compiled in** (`webpki-roots`), so a host without a
//!    bundle still reaches a supervisor with a public certificate.
//!
//! and, **added** to those, the explicit CA file (`--ca-file PATH`, `ca_file=`): a PEM file
//! with the supervisor's own self-signed certificate or the CA that signed it. A missing or
//! unreadable file, or one without a PEM certificate, is a [`TlsError`] naming the path.
//!
//! There is no switch to skip verification. A certificate that no trusted root vouches for
//! fails the first request with one line saying what to do ([`TlsError::Untrusted`]); a
//! certificate that does not name the host dialled (its `subjectAltName`; rustls ignores the
//! CN) fails with [`TlsError::WrongName`]. These are not connection errors: the client's
//! retry-until-`wait` loop does not retry them.

use rustls::pki_types::CertificateDer;
use rustls::{CertificateError, RootCertStore};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use thiserror::Error;

/// The system CA bundles looked for, first found wins (when `SSL_CERT_FILE` is not set).
pub const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/ssl/cert.pem",
];

/// The fix named in every "not trusted" message.
pub const TRUST_HINT: &str = "pass --ca-file / ca_file= or set SSL_CERT_FILE";

#[derive(Debug, Error)]
pub enum TlsError {
    /// A CA file (`--ca-file`, `ca_file=`, `SSL_CERT_FILE`) that cannot be read. (The I/O
    /// error is in the message, not a `source`, so that `{:#}` says it once.)
    #[error("{what} {}: {error}", path.display())]
    Read {
        what: &'static str,
        path: PathBuf,
        error: std::io::Error,
    },
    /// A CA file without a usable PEM certificate.
    #[error("{what} {}: {detail}", path.display())]
    NoCertificate {
        what: &'static str,
        path: PathBuf,
        detail: String,
    },
    /// The server's certificate chains to no trusted root.
    #[error("{addr}: certificate not trusted: {TRUST_HINT} ({detail})")]
    Untrusted { addr: String, detail: String },
    /// The server's certificate does not name the host dialled.
    #[error("{addr}: certificate not valid for this host (its subjectAltName must name the host or IP dialled): {detail}")]
    WrongName { addr: String, detail: String },
    /// Any other TLS failure (expired certificate, handshake refused, …).
    #[error("{addr}: TLS: {detail}")]
    Other { addr: String, detail: String },
}

/// The client configuration for `https://` with the trust store of the module docs, plus
/// `ca_file` if given.
pub fn client_config(ca_file: Option<&Path>) -> Result<Arc<rustls::ClientConfig>, TlsError> {
    let mut roots = RootCertStore::empty();
    match std::env::var_os("SSL_CERT_FILE").filter(|v| !v.is_empty()) {
        Some(path) => add_pem_file(&mut roots, Path::new(&path), "SSL_CERT_FILE")?,
        None => {
            let system = SYSTEM_BUNDLES
                .iter()
                .map(Path::new)
                .find(|p| p.is_file() && add_pem_file(&mut roots, p, "system CA bundle").is_ok());
            if system.is_none() {
                roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            }
        }
    }
    if let Some(path) = ca_file {
        add_pem_file(&mut roots, path, "CA file")?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring supports TLS 1.2 and 1.3")
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// Adds every certificate of the PEM file `path` to `roots`; an error if there is none that
/// rustls takes as a trust anchor.
fn add_pem_file(
    roots: &mut RootCertStore,
    path: &Path,
    what: &'static str,
) -> Result<(), TlsError> {
    let read = |error| TlsError::Read {
        what,
        path: path.to_path_buf(),
        error,
    };
    let file = std::fs::File::open(path).map_err(read)?;
    let certs: Vec<CertificateDer<'static>> =
        rustls_pemfile::certs(&mut std::io::BufReader::new(file))
            .collect::<Result<_, _>>()
            .map_err(read)?;
    let none = |detail: String| TlsError::NoCertificate {
        what,
        path: path.to_path_buf(),
        detail,
    };
    if certs.is_empty() {
        return Err(none(
            "no PEM certificate (-----BEGIN CERTIFICATE-----) in it".into(),
        ));
    }
    let (added, ignored) = roots.add_parsable_certificates(certs);
    if added == 0 {
        return Err(none(format!(
            "none of its {ignored} certificate(s) could be parsed"
        )));
    }
    Ok(())
}

/// The TLS error in a failed request's error chain, if any, as a [`TlsError`] about `addr`.
pub(crate) fn classify(addr: &str, err: &(dyn std::error::Error + 'static)) -> Option<TlsError> {
    let mut next = Some(err);
    while let Some(e) = next {
        let rustls_err = e.downcast_ref::<rustls::Error>().or_else(|| {
            e.downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
                .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        });
        if let Some(r) = rustls_err {
            let (addr, detail) = (addr.to_string(), r.to_string());
            return Some(match r {
                rustls::Error::InvalidCertificate(
                    CertificateError::NotValidForName
                    | CertificateError::NotValidForNameContext { .. },
                ) => TlsError::WrongName { addr, detail },
                rustls::Error::InvalidCertificate(
                    CertificateError::UnknownIssuer
                    | CertificateError::BadSignature
                    | CertificateError::Other(_),
                ) => TlsError::Untrusted { addr, detail },
                _ => TlsError::Other { addr, detail },
            });
        }
        next = e.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_ca_file_is_an_error_naming_it() {
        let e = client_config(Some(Path::new("/nonexistent/ca.pem"))).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/ca.pem"), "{e}");
    }

    #[test]
    fn a_file_without_certificates_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty.pem");
        std::fs::write(&path, "not a certificate\n").unwrap();
        let e = client_config(Some(&path)).unwrap_err();
        assert!(
            matches!(e, TlsError::NoCertificate { .. }) && e.to_string().contains("empty.pem"),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_issuer_names_the_fix() {
        let io = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer),
        );
        let e = classify("https://h:1", &io).unwrap();
        assert!(
            matches!(e, TlsError::Untrusted { .. }) && e.to_string().contains("--ca-file"),
            "{e}"
        );
    }
}

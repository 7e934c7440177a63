//! HTTPS for the web API: `web.tls_cert` (PEM certificate chain) and `web.tls_key` (PEM
//! private key) give a rustls server configuration (ring provider, TLS 1.2 and 1.3). Nothing
//! here is hand-written crypto.
//!
//! Loaded by `web::prepare` before the supervisor starts any actor, so a bad file (a key
//! that is not the certificate's, say) is a one-line startup error naming both files, not a
//! panic while half-started actors are torn down.

use std::io::BufReader;
use std::path::Path;
use std::sync::Arc;

fn invalid(what: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidInput, what)
}

/// Reads the certificate chain and key into a server configuration.
pub fn server_config(cert: &Path, key: &Path) -> std::io::Result<rustls::ServerConfig> {
    let open = |p: &Path| {
        std::fs::File::open(p)
            .map(BufReader::new)
            .map_err(|e| invalid(format!("{}: {e}", p.display())))
    };
    let certs = rustls_pemfile::certs(&mut open(cert)?)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid(format!("web.tls_cert {}: {e}", cert.display())))?;
    if certs.is_empty() {
        return Err(invalid(format!(
            "web.tls_cert {}: no certificate found",
            cert.display()
        )));
    }
    let key_path = key;
    let key = rustls_pemfile::private_key(&mut open(key)?)
        .map_err(|e| invalid(format!("web.tls_key {}: {e}", key.display())))?
        .ok_or_else(|| {
            invalid(format!(
                "web.tls_key {}: no private key found",
                key.display()
            ))
        })?;
    rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| invalid(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| match e {
            rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch) => {
                invalid(format!(
                    "web.tls_key {} is not the private key of the certificate in web.tls_cert {}",
                    key_path.display(),
                    cert.display()
                ))
            }
            e => invalid(format!(
                "web.tls_cert {} / web.tls_key {}: {e}",
                cert.display(),
                key_path.display()
            )),
        })
}

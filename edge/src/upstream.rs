//! How `vexil-edge serve` reaches its control planes: the gRPC channel to an upstream URL (`https://`
//! verified against `--upstream-ca`, or against the bundled webpki roots without it) and the edge token that
//! every call carries as `authorization: Bearer <secret>` metadata (`--token`). The subscriber and the usage
//! reporter connect through the same [`UpstreamAccess`].

use std::path::Path;

use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};

/// A channel whose calls carry the edge token.
pub type AuthorizedChannel = InterceptedService<Channel, EdgeToken>;

/// Puts the edge token (if any) in each call's `authorization` metadata. Its value is marked sensitive, so
/// debug output never shows it.
#[derive(Clone)]
pub struct EdgeToken(Option<MetadataValue<Ascii>>);

impl tonic::service::Interceptor for EdgeToken {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(value) = &self.0 {
            request
                .metadata_mut()
                .insert("authorization", value.clone());
        }
        Ok(request)
    }
}

/// The edge token and the TLS roots for the upstreams.
pub struct UpstreamAccess {
    token: EdgeToken,
    tls: ClientTlsConfig,
}

impl UpstreamAccess {
    /// From `--token` (none: calls carry no token, for a control plane with `--auth-type none`) and
    /// `--upstream-ca` (a PEM file of the CA certificates to trust for `https://` upstreams; none: the
    /// bundled webpki roots). Checks both now, so that a bad one stops the edge at start.
    pub fn new(token: Option<&str>, ca_file: Option<&Path>) -> Result<UpstreamAccess, String> {
        let token = token
            .map(str::trim)
            .filter(|token| !token.is_empty())
            .map(|token| {
                let not_ascii = || "the edge token (--token) must be printable ASCII".to_owned();
                if !token.bytes().all(|byte| byte.is_ascii_graphic()) {
                    return Err(not_ascii());
                }
                let mut value =
                    MetadataValue::try_from(format!("Bearer {token}")).map_err(|_| not_ascii())?;
                value.set_sensitive(true);
                Ok::<_, String>(value)
            })
            .transpose()?;
        let tls = match ca_file {
            Some(path) => {
                let pem = std::fs::read(path).map_err(|error| {
                    format!("cannot read the upstream CA {}: {error}", path.display())
                })?;
                ClientTlsConfig::new().ca_certificate(Certificate::from_pem(pem))
            }
            None => ClientTlsConfig::new().with_webpki_roots(),
        };
        // Builds the TLS connector once (it parses the certificates) to fail now rather than at each connect.
        Endpoint::from_static("https://localhost")
            .tls_config(tls.clone())
            .map_err(|error| format!("the upstream CA is not usable: {error}"))?;
        Ok(UpstreamAccess {
            token: EdgeToken(token),
            tls,
        })
    }

    /// Connects to `url` (`http://` or `https://`), with `configure`'s timeouts, as a channel whose calls
    /// carry the edge token.
    pub async fn connect(
        &self,
        url: &str,
        configure: impl FnOnce(Endpoint) -> Endpoint,
    ) -> Result<AuthorizedChannel, String> {
        let mut endpoint =
            Endpoint::from_shared(url.to_owned()).map_err(|error| error.to_string())?;
        if endpoint.uri().scheme_str() == Some("https") {
            endpoint = endpoint
                .tls_config(self.tls.clone())
                .map_err(|error| error.to_string())?;
        }
        let channel = configure(endpoint)
            .connect()
            .await
            .map_err(|error| error_chain(&error))?;
        Ok(InterceptedService::new(channel, self.token.clone()))
    }
}

/// An error and its sources, `: `-separated (a TLS failure is only named in a source).
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use tonic::service::Interceptor;

    #[test]
    fn the_token_goes_in_the_authorization_metadata_and_stays_out_of_debug_output() {
        let access = UpstreamAccess::new(Some(" *:*.secret "), None).unwrap();
        let mut token = access.token.clone();
        let request = token.call(tonic::Request::new(())).unwrap();
        let value = request.metadata().get("authorization").expect("the token");
        assert_eq!(value.to_str().unwrap(), "Bearer *:*.secret");
        assert!(!format!("{:?}", request.metadata()).contains("secret"));

        let mut none = UpstreamAccess::new(None, None).unwrap().token;
        let request = none.call(tonic::Request::new(())).unwrap();
        assert!(request.metadata().get("authorization").is_none());
        assert!(UpstreamAccess::new(Some("tøken"), None).is_err());
    }

    #[test]
    fn a_missing_or_bad_ca_file_stops_the_edge_at_start() {
        let dir = std::env::temp_dir().join(format!("vexil-upstream-ca-{}", fastrand::u64(..)));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = dir.join("missing.pem");
        assert!(UpstreamAccess::new(None, Some(&missing)).is_err());
        let bad = dir.join("bad.pem");
        std::fs::write(
            &bad,
            "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        assert!(UpstreamAccess::new(None, Some(&bad)).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

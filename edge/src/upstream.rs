//! How `vexil-edge serve` reaches its control planes: the gRPC channel to an upstream URL and the edge token
//! that every call carries as `authorization: Bearer <secret>` metadata (`--token`). The subscriber and the
//! usage reporter connect through the same [`UpstreamAccess`].

use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};

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

/// The edge token for the upstreams.
pub struct UpstreamAccess {
    token: EdgeToken,
}

impl UpstreamAccess {
    /// From `--token` (none: calls carry no token, for a control plane with `--auth-type none`). Checks it
    /// now, so that a bad one stops the edge at start.
    pub fn new(token: Option<&str>) -> Result<UpstreamAccess, String> {
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
        Ok(UpstreamAccess {
            token: EdgeToken(token),
        })
    }

    /// Connects to `url`, with `configure`'s timeouts, as a channel whose calls carry the edge token.
    pub async fn connect(
        &self,
        url: &str,
        configure: impl FnOnce(Endpoint) -> Endpoint,
    ) -> Result<AuthorizedChannel, String> {
        let endpoint = Endpoint::from_shared(url.to_owned()).map_err(|error| error.to_string())?;
        let channel = configure(endpoint)
            .connect()
            .await
            .map_err(|error| error_chain(&error))?;
        Ok(InterceptedService::new(channel, self.token.clone()))
    }
}

/// An error and its sources, `: `-separated (the cause is often only named in a source).
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
        let access = UpstreamAccess::new(Some(" *:*.secret ")).unwrap();
        let mut token = access.token.clone();
        let request = token.call(tonic::Request::new(())).unwrap();
        let value = request.metadata().get("authorization").expect("the token");
        assert_eq!(value.to_str().unwrap(), "Bearer *:*.secret");
        assert!(!format!("{:?}", request.metadata()).contains("secret"));

        let mut none = UpstreamAccess::new(None).unwrap().token;
        let request = none.call(tonic::Request::new(())).unwrap();
        assert!(request.metadata().get("authorization").is_none());
        assert!(UpstreamAccess::new(Some("tøken")).is_err());
    }
}

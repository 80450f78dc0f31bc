//! Where webhooks may be sent. A webhook is written by an Admin, but its delivery log is read by Viewers:
//! a webhook aimed inside the control plane's network would let them probe it (which ports answer, how).
//! So link-local addresses (169.254.0.0/16, fe80::/10, where clouds keep their metadata services) and the
//! known metadata addresses elsewhere are never targets, nor are multicast or broadcast ones; loopback,
//! private and unspecified addresses are targets only with `--allow-private-webhook-targets`. The check runs
//! when an addon is written (a literal address, or every address its name resolves to then) and again at
//! each delivery, on the addresses the connection is made to (DNS can change).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use vexil_shared::ApiError;

/// The flag that lets webhooks target loopback, private and unspecified addresses.
pub const ALLOW_PRIVATE_FLAG: &str = "--allow-private-webhook-targets";

/// The longest a name's lookup may take when an addon is written; one that does not resolve by then is
/// taken, and checked at each delivery.
const RESOLVE_TIMEOUT: Duration = Duration::from_secs(2);

/// Cloud metadata services outside the link-local ranges: Alibaba Cloud's, AWS's over IPv6.
const METADATA: [IpAddr; 2] = [
    IpAddr::V4(Ipv4Addr::new(100, 100, 100, 200)),
    IpAddr::V6(Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254)),
];

/// Which addresses webhooks may target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WebhookTargets {
    /// `--allow-private-webhook-targets`.
    pub allow_private: bool,
}

/// Why an address is not a webhook target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Link-local or a cloud metadata service: never.
    LinkLocal,
    /// Multicast, broadcast or reserved: never.
    NotUnicast,
    /// Only with `--allow-private-webhook-targets`.
    Loopback,
    Private,
    Unspecified,
}

impl Refusal {
    fn kind(self) -> &'static str {
        match self {
            Refusal::LinkLocal => "a link-local or cloud metadata address",
            Refusal::NotUnicast => "a multicast, broadcast or reserved address",
            Refusal::Loopback => "a loopback address",
            Refusal::Private => "a private address",
            Refusal::Unspecified => "an unspecified address",
        }
    }

    fn never(self) -> bool {
        matches!(self, Refusal::LinkLocal | Refusal::NotUnicast)
    }

    /// What the delivery log records (without the address: Viewers read it).
    pub fn delivery_message(self) -> &'static str {
        match self {
            Refusal::LinkLocal => {
                "Refused: the receiver's address is a link-local or cloud metadata address, which no webhook may target"
            }
            Refusal::NotUnicast => {
                "Refused: the receiver's address is a multicast, broadcast or reserved address, which no webhook may target"
            }
            Refusal::Loopback => {
                "Refused: the receiver's address is a loopback address, which webhooks may target only when the control plane runs with --allow-private-webhook-targets"
            }
            Refusal::Private => {
                "Refused: the receiver's address is a private address, which webhooks may target only when the control plane runs with --allow-private-webhook-targets"
            }
            Refusal::Unspecified => {
                "Refused: the receiver's address is an unspecified address, which webhooks may target only when the control plane runs with --allow-private-webhook-targets"
            }
        }
    }

    /// The 400 of an addon write whose URL's host is (or resolves to) `address`.
    fn error(self, host: &str, address: IpAddr) -> ApiError {
        let is = if host.trim_start_matches('[').trim_end_matches(']') == address.to_string() {
            format!("{host} is {}", self.kind())
        } else {
            format!("{host} resolves to {address}, {}", self.kind())
        };
        if self.never() {
            ApiError::validation(format!("parameters.url: {is}, which no webhook may target"))
        } else {
            ApiError::validation(format!(
                "parameters.url: {is}, which webhooks may target only when the control plane runs with {ALLOW_PRIVATE_FLAG}"
            ))
        }
    }
}

/// What kind of address `address` is, if not a public unicast one.
fn classify(address: IpAddr) -> Option<Refusal> {
    if METADATA.contains(&address) {
        return Some(Refusal::LinkLocal);
    }
    match address {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => {
            // An IPv4 address written as IPv6 (mapped, or NAT64's well-known prefix) is that IPv4 address.
            let segments = v6.segments();
            if let Some(v4) = v6.to_ipv4_mapped() {
                return classify(IpAddr::V4(v4));
            }
            if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                let [.., a, b, c, d] = v6.octets();
                return classify(IpAddr::V4(Ipv4Addr::new(a, b, c, d)));
            }
            if v6.is_loopback() {
                Some(Refusal::Loopback)
            } else if v6.is_unspecified() {
                Some(Refusal::Unspecified)
            } else if segments[0] & 0xffc0 == 0xfe80 {
                Some(Refusal::LinkLocal)
            } else if segments[0] & 0xfe00 == 0xfc00 {
                Some(Refusal::Private)
            } else if v6.is_multicast() {
                Some(Refusal::NotUnicast)
            } else {
                None
            }
        }
    }
}

fn classify_v4(v4: Ipv4Addr) -> Option<Refusal> {
    let [a, b, ..] = v4.octets();
    if v4.is_link_local() {
        Some(Refusal::LinkLocal)
    } else if v4.is_loopback() {
        Some(Refusal::Loopback)
    } else if a == 0 {
        // 0.0.0.0/8: "this host" (connecting to 0.0.0.0 reaches the machine itself).
        Some(Refusal::Unspecified)
    } else if v4.is_private() || (a == 100 && (64..128).contains(&b)) {
        // RFC 1918, and the carrier-grade NAT range 100.64.0.0/10.
        Some(Refusal::Private)
    } else if v4.is_multicast() || v4.is_broadcast() || a >= 240 {
        Some(Refusal::NotUnicast)
    } else {
        None
    }
}

impl WebhookTargets {
    /// Why `address` may not be targeted, if it may not.
    pub fn refusal(self, address: IpAddr) -> Option<Refusal> {
        classify(address).filter(|refusal| refusal.never() || !self.allow_private)
    }

    /// The check of an addon write: the URL's host, a literal address or every address its name resolves
    /// to now. A name that does not resolve (yet) is taken: each delivery checks it again.
    pub async fn check_url(self, url: &url::Url) -> Result<(), ApiError> {
        let Some(host) = url.host() else {
            return Ok(());
        };
        let text = host.to_string();
        let addresses: Vec<IpAddr> = match host {
            url::Host::Ipv4(v4) => vec![IpAddr::V4(v4)],
            url::Host::Ipv6(v6) => vec![IpAddr::V6(v6)],
            url::Host::Domain(name) => {
                let lookup =
                    tokio::net::lookup_host((name, url.port_or_known_default().unwrap_or(80)));
                match tokio::time::timeout(RESOLVE_TIMEOUT, lookup).await {
                    Ok(Ok(found)) => found.map(|socket| socket.ip()).collect(),
                    Ok(Err(_)) | Err(_) => Vec::new(),
                }
            }
        };
        for address in addresses {
            if let Some(refusal) = self.refusal(address) {
                return Err(refusal.error(&text, address));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(allow_private: bool, address: &str) -> Option<Refusal> {
        WebhookTargets { allow_private }.refusal(address.parse().unwrap())
    }

    #[test]
    fn link_local_and_metadata_addresses_are_never_targets() {
        for address in [
            "169.254.169.254",
            "169.254.0.1",
            "fe80::1",
            "febf::1",
            "fd00:ec2::254",
            "100.100.100.200",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
        ] {
            assert_eq!(
                refusal(true, address),
                Some(Refusal::LinkLocal),
                "{address}"
            );
            assert_eq!(
                refusal(false, address),
                Some(Refusal::LinkLocal),
                "{address}"
            );
        }
        for address in ["224.0.0.1", "255.255.255.255", "240.0.0.1", "ff02::1"] {
            assert_eq!(
                refusal(true, address),
                Some(Refusal::NotUnicast),
                "{address}"
            );
        }
    }

    #[test]
    fn private_addresses_need_the_flag() {
        for (address, kind) in [
            ("127.0.0.1", Refusal::Loopback),
            ("127.255.0.9", Refusal::Loopback),
            ("::1", Refusal::Loopback),
            ("::ffff:127.0.0.1", Refusal::Loopback),
            ("0.0.0.0", Refusal::Unspecified),
            ("::", Refusal::Unspecified),
            ("10.0.0.1", Refusal::Private),
            ("172.16.0.1", Refusal::Private),
            ("172.31.255.255", Refusal::Private),
            ("192.168.0.1", Refusal::Private),
            ("100.64.0.1", Refusal::Private),
            ("fc00::1", Refusal::Private),
            ("fdff::1", Refusal::Private),
        ] {
            assert_eq!(refusal(false, address), Some(kind), "{address}");
            assert_eq!(refusal(true, address), None, "{address}");
        }
        for public in [
            "93.184.215.14",
            "172.32.0.1",
            "100.128.0.1",
            "2001:db8::1",
            "fec0::1",
        ] {
            assert_eq!(refusal(false, public), None, "{public}");
        }
    }
}

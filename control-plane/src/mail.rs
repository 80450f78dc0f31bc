//! E-mail: password reset and welcome links sent through an SMTP server (`--smtp-url`, `--smtp-from`), with
//! the `lettre` crate (its SMTP client on tokio, TLS by rustls with ring and the webpki roots, as the rest of
//! the binary). Without `--smtp-url` nothing is sent: the admin sees the link and passes it on, and
//! `emailEnabled` is false in `/api/admin/ui-config`.
//!
//! Links in e-mail use `--public-url`, never the request's `Host` (a stranger asking for a reset of someone
//! else's account must not choose where its link points), so `--smtp-url` requires it.

use lettre::message::header::ContentType;
use lettre::message::Mailbox;
use lettre::transport::smtp::AsyncSmtpTransport;
use lettre::{AsyncTransport, Message, Tokio1Executor};
use std::time::Duration;

/// How long one SMTP conversation may take.
const SMTP_TIMEOUT: Duration = Duration::from_secs(15);

/// E-mail settings: flags of the control plane (`#[command(flatten)]`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct MailSettings {
    /// The SMTP server that sends reset and welcome e-mails: `smtp://host:port` (plain),
    /// `smtp://host:587?tls=required` (STARTTLS), `smtps://host` (TLS); credentials as
    /// `smtp://user:password@host`. Needs `--smtp-from` and `--public-url`.
    #[arg(long, env = "SMTP_URL", hide_env_values = true, requires_all = ["smtp_from", "public_url"])]
    pub smtp_url: Option<String>,
    /// The sender of those e-mails, e.g. `Vexil <flags@example.com>`.
    #[arg(long, env = "SMTP_FROM")]
    pub smtp_from: Option<String>,
}

/// Why the mailer cannot be set up (at start: the process does not start).
#[derive(Debug, thiserror::Error)]
pub enum MailSetupError {
    #[error("--smtp-url is not a usable SMTP URL: {0}")]
    Url(String),
    #[error("--smtp-from is not an e-mail address: {0}")]
    From(String),
}

/// One e-mail to send.
#[derive(Debug, Clone)]
pub struct Mail {
    pub to: String,
    pub subject: String,
    pub body: String,
}

/// Sends e-mail through the configured SMTP server.
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl Mailer {
    /// The mailer of `settings`, `None` without `--smtp-url`.
    pub fn from_settings(settings: &MailSettings) -> Result<Option<Mailer>, MailSetupError> {
        let Some(url) = &settings.smtp_url else {
            return Ok(None);
        };
        let from = settings.smtp_from.as_deref().unwrap_or_default();
        let from: Mailbox = from
            .parse()
            .map_err(|error: lettre::address::AddressError| {
                MailSetupError::From(error.to_string())
            })?;
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .map_err(|error| MailSetupError::Url(error.to_string()))?
            .timeout(Some(SMTP_TIMEOUT))
            .build();
        Ok(Some(Mailer { transport, from }))
    }

    /// Sends `mail`; false (logged, without the body: it holds a link) when it could not be sent.
    pub async fn send(&self, mail: Mail) -> bool {
        let to: Mailbox = match mail.to.parse() {
            Ok(to) => to,
            Err(error) => {
                tracing::warn!(%error, "an e-mail's recipient is not an address; not sent");
                return false;
            }
        };
        let message = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(mail.subject)
            .header(ContentType::TEXT_PLAIN)
            .body(mail.body);
        let message = match message {
            Ok(message) => message,
            Err(error) => {
                tracing::warn!(%error, "cannot build an e-mail; not sent");
                return false;
            }
        };
        match self.transport.send(message).await {
            Ok(_) => true,
            Err(error) => {
                tracing::warn!(%error, "the SMTP server did not take an e-mail");
                false
            }
        }
    }
}

/// The e-mail with a password reset link.
pub fn reset_mail(to: &str, link: &str) -> Mail {
    Mail {
        to: to.to_owned(),
        subject: "Reset your Vexil password".to_owned(),
        body: format!(
            "Someone asked to reset the password of your Vexil account.\n\n\
             Set a new password here (the link works once, for {hours} hours):\n\n{link}\n\n\
             If it was not you, ignore this e-mail: your password stays as it is.\n",
            hours = crate::domain::password_resets::RESET_HOURS,
        ),
    }
}

/// The e-mail that welcomes a new user with the link where they set their password.
pub fn welcome_mail(to: &str, name: Option<&str>, link: &str) -> Mail {
    let greeting = match name {
        Some(name) => format!("Hello {name},"),
        None => "Hello,".to_owned(),
    };
    Mail {
        to: to.to_owned(),
        subject: "Your Vexil account".to_owned(),
        body: format!(
            "{greeting}\n\nAn account on Vexil, the feature-flag service, was made for you.\n\n\
             Choose your password here (the link works once, for {days} days):\n\n{link}\n",
            days = crate::domain::password_resets::WELCOME_HOURS / 24,
        ),
    }
}

//! Where an evaluation reads a context value from: a field of the context (by its slot in the evaluation's
//! table of fields), and the stickiness setting that names one.

use super::slots::EvalSlots;

/// Where a constraint or a stickiness setting reads its value from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ContextField {
    UserId,
    SessionId,
    RemoteAddress,
    Environment,
    AppName,
    CurrentTime,
    /// A property, by its slot in the snapshot's [`EvalSlots`].
    Property(u32),
}

impl ContextField {
    /// Slots of an evaluation's field table: the six top-level fields, then the snapshot's properties.
    pub(crate) const FIRST_PROPERTY_SLOT: usize = 6;

    pub(crate) fn slot(&self) -> usize {
        match self {
            ContextField::UserId => 0,
            ContextField::SessionId => 1,
            ContextField::RemoteAddress => 2,
            ContextField::Environment => 3,
            ContextField::AppName => 4,
            ContextField::CurrentTime => 5,
            ContextField::Property(slot) => Self::FIRST_PROPERTY_SLOT + *slot as usize,
        }
    }

    pub(crate) fn parse(name: &str, properties: &mut EvalSlots) -> Self {
        match name {
            "userId" => ContextField::UserId,
            "sessionId" => ContextField::SessionId,
            "remoteAddress" => ContextField::RemoteAddress,
            "environment" => ContextField::Environment,
            "appName" => ContextField::AppName,
            "currentTime" => ContextField::CurrentTime,
            other => ContextField::Property(properties.slot(other)),
        }
    }
}

/// Which context value decides a bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stickiness {
    /// userId, then sessionId, then random (for rollouts and variants alike, as the reference engine does).
    Default,
    Random,
    Field(ContextField),
}

impl Stickiness {
    pub(crate) fn parse(name: Option<&str>, properties: &mut EvalSlots) -> Self {
        match name.map(str::trim) {
            None | Some("") | Some("default") => Stickiness::Default,
            Some("random") => Stickiness::Random,
            Some(field) => Stickiness::Field(ContextField::parse(field, properties)),
        }
    }
}

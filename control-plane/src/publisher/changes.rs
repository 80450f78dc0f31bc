//! What a range of revisions changed, as far as the edges are concerned, worked out from the audit events
//! those revisions recorded (every committed write records at least one, stamped with its revision). The
//! publisher then re-reads only that: the named flags, the tokens, the settings — or everything when an
//! event's effect is wider than a flag (segments, projects, environments) or unknown.

use std::collections::BTreeSet;

use crate::domain::events::EventType;
use crate::store::events::RevisionEvent;

/// Beyond this many events (or flags) in one refresh, re-reading everything is as cheap as re-reading
/// each flag on its own.
pub const MAX_EVENTS: usize = 256;

/// What to re-read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Changed {
    Everything,
    Parts {
        /// In every environment.
        flags: BTreeSet<String>,
        tokens: bool,
        settings: bool,
    },
}

impl Changed {
    /// What the `events` of the revisions `after < revision <= upto` changed. Everything when they do not
    /// account for every one of those revisions (a write without events would be a bug elsewhere; this
    /// keeps the edges right regardless) or when there are more than [`MAX_EVENTS`].
    pub fn of(events: &[RevisionEvent], after: i64, upto: i64) -> Changed {
        let revisions: BTreeSet<i64> = events.iter().map(|e| e.revision).collect();
        if events.len() > MAX_EVENTS
            || revisions.len() as i64 != upto - after
            || revisions.iter().any(|r| *r <= after || *r > upto)
        {
            return Changed::Everything;
        }
        let (mut flags, mut tokens, mut settings) = (BTreeSet::new(), false, false);
        for event in events {
            match scope_of(&event.event_type) {
                Scope::Flag => match &event.feature_name {
                    Some(name) => {
                        flags.insert(name.clone());
                    }
                    None => return Changed::Everything,
                },
                Scope::Tokens => tokens = true,
                Scope::Settings => settings = true,
                Scope::Nothing => {}
                Scope::Everything => return Changed::Everything,
            }
        }
        Changed::Parts {
            flags,
            tokens,
            settings,
        }
    }
}

/// What one event type can change of what the edges hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// The named flag, in any environment.
    Flag,
    Tokens,
    Settings,
    /// Nothing the edges hold (users, groups, favourites, addons, change-request bookkeeping: an applied change
    /// request's writes record their own events; tag types and a tag no flag carries yet).
    Nothing,
    Everything,
}

fn scope_of(event_type: &str) -> Scope {
    EventType::ALL
        .iter()
        .find(|t| t.as_str() == event_type)
        .map_or(Scope::Everything, |t| scope(*t))
}

/// Exhaustive on purpose: a new event type does not compile until it says what it changes.
fn scope(event_type: EventType) -> Scope {
    use EventType::*;
    match event_type {
        FeatureCreated
        | FeatureMetadataUpdated
        | FeatureTypeUpdated
        | FeatureStaleOn
        | FeatureStaleOff
        | FeatureArchived
        | FeatureRevived
        | FeatureDeleted
        | FeatureEnvironmentEnabled
        | FeatureEnvironmentDisabled
        | FeatureStrategyAdd
        | FeatureStrategyUpdate
        | FeatureStrategyRemove
        | StrategyOrderChanged
        | FeatureEnvironmentVariantsUpdated
        | FeatureTagged
        | FeatureUntagged
        | FeatureDependencyAdded
        | FeatureDependencyRemoved
        | FeatureDependenciesRemoved => Scope::Flag,
        ApiTokenCreated | ApiTokenUpdated | ApiTokenDeleted => Scope::Tokens,
        SettingCreated | SettingUpdated => Scope::Settings,
        UserCreated
        | UserUpdated
        | UserDeleted
        | PatCreated
        | PatDeleted
        | ServiceAccountCreated
        | ServiceAccountUpdated
        | ServiceAccountDeleted
        | PublicSignupTokenCreated
        | PublicSignupTokenUpdated
        | PublicSignupTokenUserAdded
        | GroupCreated
        | ProjectAccessAdded
        | ProjectAccessUpdated
        | ProjectAccessUserRolesUpdated
        | ProjectAccessGroupRolesUpdated
        | ProjectAccessUserRolesDeleted
        | ProjectAccessGroupRolesDeleted
        | RoleCreated
        | RoleUpdated
        | RoleDeleted
        | GroupUpdated
        | GroupDeleted
        | GroupUserAdded
        | GroupUserRemoved
        | FeatureFavorited
        | FeatureUnfavorited
        | ProjectFavorited
        | ProjectUnfavorited
        // A flag's lifecycle and potentially-stale mark: not in what the SDKs get.
        | FeatureCompleted
        | FeatureUncompleted
        | FeaturePotentiallyStaleOn
        // A project environment's default strategy: used when a flag is next switched on there.
        | DefaultStrategyUpdated
        // Banners: the admin UI's only.
        | BannerCreated
        | BannerUpdated
        | BannerDeleted
        | ChangeRequestConfigurationUpdated
        | ChangeRequestCreated
        | ChangeRequestDiscarded
        | ChangeAdded
        | ChangeEdited
        | ChangeDiscarded
        | ChangeRequestSentToReview
        | ChangeRequestApprovalAdded
        | ChangeRequestApproved
        | ChangeRequestRejected
        | ChangeRequestCancelled
        | ChangeRequestApplied
        | ChangeRequestScheduled
        | ChangeRequestScheduledApplicationSuccess
        | ChangeRequestScheduledApplicationFailure
        | ChangeRequestScheduleSuspended
        | AddonConfigCreated
        | AddonConfigUpdated
        | AddonConfigDeleted
        | TagTypeCreated
        | TagTypeUpdated
        | TagCreated
        // Release plans: starting a milestone records the strategy events of the flag it changes.
        | ReleasePlanTemplateCreated
        | ReleasePlanTemplateUpdated
        | ReleasePlanTemplateDeleted
        | ReleasePlanTemplateArchived
        | ReleasePlanAdded
        | ReleasePlanRemoved
        | ReleasePlanMilestoneStarted
        | ReleasePlanProgressionsPaused
        | ReleasePlanProgressionsResumed
        | MilestoneProgressionCreated
        | MilestoneProgressionUpdated
        | MilestoneProgressionDeleted
        // Signals and actions: an action's change records its own event.
        | SignalEndpointCreated
        | SignalEndpointUpdated
        | SignalEndpointDeleted
        | SignalEndpointTokenCreated
        | SignalEndpointTokenUpdated
        | SignalEndpointTokenDeleted
        | ActionsCreated
        | ActionsUpdated
        | ActionsDeleted
        // An import's summary: each flag it changed has its own event.
        | FeaturesImported
        | FeaturesExported
        | ApplicationCreated => Scope::Nothing,
        ProjectCreated
        | ProjectUpdated
        | ProjectDeleted
        | ProjectArchived
        | ProjectRevived
        // A flag moved: the project-scoped tokens that see it change.
        | FeatureProjectChange
        | ProjectEnvironmentAdded
        | ProjectEnvironmentRemoved
        | EnvironmentCreated
        | EnvironmentUpdated
        | EnvironmentDeleted
        | SegmentCreated
        | SegmentUpdated
        | SegmentDeleted
        | StrategyCreated
        | StrategyUpdated
        | StrategyDeleted
        | StrategyDeprecated
        | StrategyReactivated
        | ContextFieldCreated
        | ContextFieldUpdated
        | ContextFieldDeleted
        | TagTypeDeleted
        | TagDeleted => Scope::Everything,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(revision: i64, event_type: &str, flag: Option<&str>) -> RevisionEvent {
        RevisionEvent {
            revision,
            event_type: event_type.to_owned(),
            feature_name: flag.map(str::to_owned),
        }
    }

    #[test]
    fn flag_events_name_their_flags() {
        let events = [
            event(4, "feature-environment-enabled", Some("a")),
            event(5, "feature-strategy-update", Some("b")),
            event(5, "feature-strategy-update", Some("a")),
            event(6, "api-token-created", None),
            event(7, "user-created", None),
        ];
        assert_eq!(
            Changed::of(&events, 3, 7),
            Changed::Parts {
                flags: ["a".to_owned(), "b".to_owned()].into(),
                tokens: true,
                settings: false,
            }
        );
    }

    #[test]
    fn wider_or_unknown_events_mean_everything() {
        for wide in [
            "segment-updated",
            "project-deleted",
            "environment-created",
            "no-such-type",
        ] {
            let events = [event(2, "feature-created", Some("a")), event(3, wide, None)];
            assert_eq!(Changed::of(&events, 1, 3), Changed::Everything, "{wide}");
        }
        let nameless = [event(2, "feature-archived", None)];
        assert_eq!(Changed::of(&nameless, 1, 2), Changed::Everything);
    }

    #[test]
    fn a_revision_without_events_means_everything() {
        let events = [event(2, "feature-created", Some("a"))];
        assert_eq!(Changed::of(&events, 1, 3), Changed::Everything);
        assert_eq!(Changed::of(&[], 1, 2), Changed::Everything);
    }

    #[test]
    fn too_many_events_mean_everything() {
        let events: Vec<RevisionEvent> = (0..=MAX_EVENTS as i64)
            .map(|i| event(i + 1, "feature-created", Some("a")))
            .collect();
        assert_eq!(
            Changed::of(&events, 0, MAX_EVENTS as i64 + 1),
            Changed::Everything
        );
    }

    #[test]
    fn every_event_type_is_known_by_its_name() {
        let names: BTreeSet<&str> = EventType::ALL.iter().map(|t| t.as_str()).collect();
        assert_eq!(names.len(), EventType::ALL.len(), "names are distinct");
        for t in EventType::ALL {
            assert_eq!(scope_of(t.as_str()), scope(t));
        }
    }

    #[test]
    fn settings_events_reread_the_settings() {
        let events = [event(9, "setting-updated", None)];
        assert_eq!(
            Changed::of(&events, 8, 9),
            Changed::Parts {
                flags: BTreeSet::new(),
                tokens: false,
                settings: true,
            }
        );
    }
}

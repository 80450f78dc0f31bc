//! The state machine of a change request (API.md §3.6) as plain data: [`transition`] decides what a requested
//! state means for a request ([`Facts`] in, [`Transition`] out) and [`after_change`] what editing a request
//! does to its state. No I/O: the operations read the facts, call these and write the outcome.

use crate::model::change_request::ChangeRequestState;
use vexil_shared::{ApiError, ErrorKind};

/// The range `requiredApprovals` is clamped into.
pub const APPROVALS_RANGE: (i64, i64) = (1, 10);

/// What [`transition`] needs to know about a request and its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    pub id: i64,
    pub state: ChangeRequestState,
    pub changes: usize,
    /// Approvals recorded so far (the caller's not included: they have none when they may approve).
    pub approvals: usize,
    pub min_approvals: i64,
    pub caller_is_author: bool,
    pub caller_has_approved: bool,
}

/// What a permitted `PUT …/state` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transition {
    /// Draft → In review.
    SendToReview,
    /// Records the caller's approval; `approved`: the request reaches Approved with it.
    AddApproval {
        approved: bool,
    },
    Reject,
    /// Approved or Scheduled → Applied: every change, in one transaction.
    Apply,
    /// Approved → Scheduled, or Scheduled → Scheduled at a new time (also after it failed or was
    /// suspended): the control plane applies it then.
    Schedule,
    Cancel,
}

fn illegal(facts: &Facts, requested: ChangeRequestState, why: &str) -> ApiError {
    ApiError::validation(format!(
        "Change request {} is {}: it cannot move to {}{why}",
        facts.id,
        facts.state.as_str(),
        requested.as_str()
    ))
}

/// The state machine of API.md §3.6: what `requested` means for a request in `facts.state`, or why not
/// (400 naming the current state; 403 when the author approves their own request).
pub fn transition(facts: &Facts, requested: ChangeRequestState) -> Result<Transition, ApiError> {
    use ChangeRequestState::*;
    if facts.state.is_final() {
        return Err(illegal(facts, requested, " (it is final)"));
    }
    match (facts.state, requested) {
        (_, Cancelled) => Ok(Transition::Cancel),
        (Draft, InReview) if facts.changes == 0 => {
            Err(illegal(facts, requested, " while it holds no change"))
        }
        (Draft, InReview) => Ok(Transition::SendToReview),
        (InReview, Approved) if facts.caller_is_author => Err(ApiError::new(
            ErrorKind::NoAccess,
            format!("Change request {}: its author cannot approve it", facts.id),
        )),
        (InReview, Approved) if facts.caller_has_approved => Err(ApiError::validation(format!(
            "Change request {}: you have already approved it",
            facts.id
        ))),
        (InReview, Approved) => {
            let approvals = i64::try_from(facts.approvals + 1).unwrap_or(i64::MAX);
            Ok(Transition::AddApproval {
                approved: facts.changes > 0 && approvals >= facts.min_approvals,
            })
        }
        (InReview | Approved | Scheduled, Rejected) => Ok(Transition::Reject),
        (Approved | Scheduled, Applied) => Ok(Transition::Apply),
        (Approved | Scheduled, Scheduled) => Ok(Transition::Schedule),
        _ => Err(illegal(facts, requested, "")),
    }
}

/// The state of a request after one of its changes is added, edited or discarded: a Draft stays a Draft,
/// a request under review (Approved and Scheduled included) goes back to In review and loses its approvals
/// (and its schedule); a final one cannot change (400).
pub fn after_change(id: i64, state: ChangeRequestState) -> Result<ChangeRequestState, ApiError> {
    match state {
        ChangeRequestState::Draft => Ok(ChangeRequestState::Draft),
        ChangeRequestState::InReview
        | ChangeRequestState::Approved
        | ChangeRequestState::Scheduled => Ok(ChangeRequestState::InReview),
        final_state => Err(ApiError::validation(format!(
            "Change request {id} is {}: its changes can no longer change",
            final_state.as_str()
        ))),
    }
}

/// `requiredApprovals` into 1..10.
pub fn clamp_approvals(requested: i64) -> i64 {
    requested.clamp(APPROVALS_RANGE.0, APPROVALS_RANGE.1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ChangeRequestState::*;

    fn facts(state: ChangeRequestState) -> Facts {
        Facts {
            id: 7,
            state,
            changes: 1,
            approvals: 0,
            min_approvals: 2,
            caller_is_author: false,
            caller_has_approved: false,
        }
    }

    #[test]
    fn draft_goes_to_review_only_with_changes() {
        assert_eq!(
            transition(&facts(Draft), InReview).unwrap(),
            Transition::SendToReview
        );
        let empty = Facts {
            changes: 0,
            ..facts(Draft)
        };
        let error = transition(&empty, InReview).unwrap_err();
        assert_eq!(error.kind, ErrorKind::Validation);
        assert!(error.message.contains("is Draft"), "{}", error.message);
        for requested in [Draft, Approved, Scheduled, Applied, Rejected] {
            assert!(
                transition(&facts(Draft), requested).is_err(),
                "{requested:?}"
            );
        }
        assert_eq!(
            transition(&facts(Draft), Cancelled).unwrap(),
            Transition::Cancel
        );
    }

    #[test]
    fn approvals_count_towards_the_threshold() {
        assert_eq!(
            transition(&facts(InReview), Approved).unwrap(),
            Transition::AddApproval { approved: false }
        );
        let one = Facts {
            approvals: 1,
            ..facts(InReview)
        };
        assert_eq!(
            transition(&one, Approved).unwrap(),
            Transition::AddApproval { approved: true }
        );
        let no_change = Facts { changes: 0, ..one };
        assert_eq!(
            transition(&no_change, Approved).unwrap(),
            Transition::AddApproval { approved: false }
        );
        let author = Facts {
            caller_is_author: true,
            ..facts(InReview)
        };
        assert_eq!(
            transition(&author, Approved).unwrap_err().kind,
            ErrorKind::NoAccess
        );
        let twice = Facts {
            caller_has_approved: true,
            ..facts(InReview)
        };
        assert_eq!(
            transition(&twice, Approved).unwrap_err().kind,
            ErrorKind::Validation
        );
        assert!(transition(&facts(InReview), Applied).is_err());
        assert!(transition(&facts(InReview), Scheduled).is_err());
        assert!(transition(&facts(InReview), Draft).is_err());
        assert!(transition(&facts(InReview), InReview).is_err());
        assert_eq!(
            transition(&facts(InReview), Rejected).unwrap(),
            Transition::Reject
        );
    }

    #[test]
    fn approved_applies_rejects_or_cancels() {
        assert_eq!(
            transition(&facts(Approved), Applied).unwrap(),
            Transition::Apply
        );
        assert_eq!(
            transition(&facts(Approved), Rejected).unwrap(),
            Transition::Reject
        );
        assert_eq!(
            transition(&facts(Approved), Cancelled).unwrap(),
            Transition::Cancel
        );
        for requested in [Draft, InReview, Approved] {
            let error = transition(&facts(Approved), requested).unwrap_err();
            assert!(error.message.contains("is Approved"), "{}", error.message);
        }
    }

    #[test]
    fn approved_is_scheduled_and_scheduled_moves_applies_rejects_or_cancels() {
        assert_eq!(
            transition(&facts(Approved), Scheduled).unwrap(),
            Transition::Schedule
        );
        for (requested, expected) in [
            (Scheduled, Transition::Schedule),
            (Applied, Transition::Apply),
            (Rejected, Transition::Reject),
            (Cancelled, Transition::Cancel),
        ] {
            assert_eq!(transition(&facts(Scheduled), requested).unwrap(), expected);
        }
        // As in Unleash, a scheduled request does not go back to Approved (or earlier).
        for requested in [Draft, InReview, Approved] {
            let error = transition(&facts(Scheduled), requested).unwrap_err();
            assert!(error.message.contains("is Scheduled"), "{}", error.message);
        }
        assert_eq!(after_change(7, Scheduled).unwrap(), InReview);
    }

    #[test]
    fn final_states_never_move() {
        for state in [Applied, Cancelled, Rejected] {
            for requested in ChangeRequestState::ALL {
                let error = transition(&facts(state), requested).unwrap_err();
                assert_eq!(error.kind, ErrorKind::Validation);
                assert!(error.message.contains(state.as_str()), "{}", error.message);
            }
            assert!(after_change(7, state).is_err());
        }
    }

    #[test]
    fn a_change_sends_an_approved_request_back_to_review() {
        assert_eq!(after_change(7, Draft).unwrap(), Draft);
        assert_eq!(after_change(7, InReview).unwrap(), InReview);
        assert_eq!(after_change(7, Approved).unwrap(), InReview);
    }

    #[test]
    fn required_approvals_are_clamped() {
        assert_eq!(clamp_approvals(0), 1);
        assert_eq!(clamp_approvals(-5), 1);
        assert_eq!(clamp_approvals(3), 3);
        assert_eq!(clamp_approvals(11), 10);
    }
}

//! What a new store holds: environments `development` and `production`, and project `default` using both,
//! created by the first write ever (revision 1) with their audit events.

use super::environments::{self, CreateEnvironment};
use super::limits::Limits;
use super::projects::{self, CreateProject, DEFAULT_PROJECT};
use crate::store::{Actor, Store};
use vexil_shared::ApiError;

/// Seeds a new store; does nothing on a store that has seen any write. Safe for replicas starting together:
/// only the write that takes revision 1 seeds. The seed is within the default limits whatever is configured.
pub async fn seed(store: &Store) -> Result<(), ApiError> {
    let mut tx = store.begin_write(&Actor::system()).await?;
    if tx.revision() != 1 {
        return Ok(()); // Dropped: rolled back, the revision is unchanged.
    }
    for (sort_order, name) in [(1, "development"), (2, "production")] {
        let environment = CreateEnvironment {
            name: name.to_owned(),
            environment_type: name.to_owned(),
            enabled: Some(true),
            sort_order: Some(sort_order),
        };
        environments::create(&mut tx, environment, &Limits::default()).await?;
    }
    let project = CreateProject {
        id: Some(DEFAULT_PROJECT.to_owned()),
        name: "Default".to_owned(),
        description: Some("Default project".to_owned()),
        mode: None,
        default_stickiness: None,
        environments: None,
    };
    projects::create(&mut tx, project, &Limits::default()).await?;
    tx.commit().await?;
    Ok(())
}

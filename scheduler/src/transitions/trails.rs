//! Which of a group commit's events the instance rows hold instead of writing them (the happy
//! path's trail in the row, see [`crate::model::trail`]).

use std::collections::HashMap;

use crate::model::{Instance, InstanceEvent};

/// Which of a batch's events (`drafts`, of the instances in `rows`) the rows hold instead of
/// writing them (see [`crate::model::trail`]); returns the events to write. An instance's events
/// are held when they continue its row's happy-path trail and the row says them exactly; otherwise
/// (or with `on` false) the events the row held when it was read are written first, then the new
/// ones, and the row's trail bits are cleared (the row joins `changed` to write that). A changed
/// row without events that no longer says what it held writes it too.
pub(super) fn hold_trails(
    rows: &mut HashMap<i64, Instance>,
    drafts: Vec<InstanceEvent>,
    changed: &mut std::collections::BTreeSet<i64>,
    on: bool,
) -> Vec<InstanceEvent> {
    use crate::model::trail;
    let mut order: Vec<i64> = Vec::new();
    let mut by_id: HashMap<i64, Vec<InstanceEvent>> = HashMap::new();
    let mut out = Vec::new();
    for e in drafts {
        if !rows.contains_key(&e.instance_id) {
            // Not a row of this batch: nothing held to compare with.
            out.push(e);
            continue;
        }
        if !by_id.contains_key(&e.instance_id) {
            order.push(e.instance_id);
        }
        by_id.entry(e.instance_id).or_default().push(e);
    }
    for id in changed.iter() {
        if rows.get(id).is_some_and(|i| i.trail.bits != 0) && !by_id.contains_key(id) {
            order.push(*id);
            by_id.insert(*id, Vec::new());
        }
    }
    for id in order {
        let (Some(row), Some(new)) = (rows.get_mut(&id), by_id.remove(&id)) else { continue };
        if on {
            let bits = new.iter().try_fold(row.trail.bits, |b, e| trail::bit_of(e.from, e.to).map(|n| b | n));
            if let Some(bits) = bits {
                let expected: Vec<InstanceEvent> = row.trail.held.iter().chain(&new).cloned().collect();
                if trail::implied(row, bits) == expected {
                    if bits != row.trail.bits {
                        changed.insert(id);
                    }
                    row.trail.bits = bits;
                    continue;
                }
            }
        }
        out.extend(row.trail.held.iter().cloned());
        out.extend(new);
        if row.trail.bits != 0 {
            row.trail.bits = 0;
            changed.insert(id);
        }
    }
    out
}

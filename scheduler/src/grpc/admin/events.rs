//! AdminService PublishEvent: an event creates one instance of each task of its app subscribed to
//! its name whose filter holds (`birth::events`).

use super::*;
use crate::birth::events::{Event, check, publish, subscribers};

impl AdminApi {
    pub(super) async fn publish_event_(
        &self,
        req: &Request<pb::PublishEventRequest>,
        n: &mut Note,
    ) -> Result<pb::PublishEventResponse> {
        let r = req.get_ref();
        let grant = self.caller(req, Access::Operate, n)?;
        validate::app("app", &r.app)?;
        n.app = r.app.clone();
        grant.app(&r.app)?;
        validate::event_name("name", &r.name)?;
        let payload = if r.payload.is_empty() { "{}" } else { r.payload.as_str() };
        let payload = validate::params("payload", payload)?;
        let serde_json::Value::Object(payload) =
            serde_json::from_str(&payload).map_err(|e| Error::invalid("payload", e.to_string()))?
        else {
            return Err(Error::invalid("payload", "must be a JSON object"));
        };
        let id = if r.id.is_empty() {
            format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..))
        } else {
            validate::idempotency_key("id", &r.id)?;
            r.id.clone()
        };
        let subscribed = self.core.pools.admin.conn().await?.tasks().subscribed_tasks(&r.app, &r.name).await?;
        let (chosen, filtered_out) = subscribers(&subscribed, &payload);
        for t in &chosen {
            check(t, &payload).map_err(|why| Error::invalid("payload", why))?;
        }
        let actor = grant.identity.actor();
        let event = Event { name: &r.name, id: &id, payload: &payload, actor: &actor };
        let core = &self.core;
        let (instances, created) =
            publish(&core.pools.admin, &chosen, &event, self.now(), &core.scheduler_id, &core.traces).await?;
        if created {
            core.signals.dispatch.notify_one();
        }
        let ids: Vec<String> = instances.iter().map(|i| i.id.to_string()).collect();
        n.detail = format!(
            "event {} id {}: {} instance(s) {} ({}){}",
            clip(&r.name),
            clip(&id),
            instances.len(),
            if created { "created" } else { "existing" },
            ids.join(", "),
            if filtered_out.is_empty() {
                String::new()
            } else {
                format!("; filtered out: {}", filtered_out.join(", "))
            }
        );
        Ok(pb::PublishEventResponse {
            instances: instances.iter().map(convert::instance_to_pb).collect(),
            created,
            id,
            filtered_out,
        })
    }
}

//! AdminService calls on instances: list, get, cancel, retry, logs.

use super::*;
use crate::store::TagFilter;

/// Most tags one filter names.
pub(super) const MAX_TAG_FILTERS: usize = 8;

impl AdminApi {
    pub(super) async fn list_instances_(
        &self,
        req: &Request<pb::ListInstancesRequest>,
        n: &mut Note,
    ) -> Result<pb::ListInstancesResponse> {
        let grant = self.caller(req, Access::Read, n)?;
        let r = req.get_ref();
        let limit = page_size("page_size", r.page_size, 50)?;
        if !r.task_name.is_empty() {
            validate::task_name("task_name", &r.task_name)?;
        }
        let before_id = before_id(&r.page_token)?;
        let since = r.start_time.as_ref().map(|t| convert::ts_from_pb("start_time", t)).transpose()?;
        let until = r.end_time.as_ref().map(|t| convert::ts_from_pb("end_time", t)).transpose()?;
        if let (Some(a), Some(b)) = (since, until)
            && a > b
        {
            return Err(Error::invalid("end_time", "is before start_time"));
        }
        let tags = self.tag_filters("", &r.tags, &r.params).await?;
        let filter = InstanceFilter {
            tags,
            task_name: (!r.task_name.is_empty()).then(|| r.task_name.clone()),
            status: convert::status_from_pb("status", r.status)?,
            apps: grant.apps(),
            triggered_since: since,
            triggered_before: until,
            before_id,
            limit,
        };
        let list = self.core.pools.admin.list_instances(&filter).await.map_err(Error::from)?;
        let next_page_token = next_page_token(&list, limit, |i| i.id);
        let instances = self.with_tags(&list).await?;
        Ok(pb::ListInstancesResponse { instances, next_page_token })
    }

    /// The proto form of instances with their tags (one read for all of them).
    pub(super) async fn with_tags(&self, list: &[crate::model::Instance]) -> Result<Vec<pb::Instance>> {
        let ids: Vec<i64> = list.iter().map(|i| i.id).collect();
        let mut tags = self.core.pools.admin.conn().await?.instances().tags_of(&ids).await?;
        Ok(list
            .iter()
            .map(|i| {
                let mut p = convert::instance_to_pb(i);
                p.tags = tags.remove(&i.id).unwrap_or_default().into_iter().collect();
                p
            })
            .collect())
    }

    /// The filters of a request's `tags` (an instance tag or a label of its task, at most
    /// [`MAX_TAG_FILTERS`]) and `params` (a search param's tag, at most
    /// [`crate::grpc::convert::MAX_SEARCH_PARAMS`]); fields named after `prefix`.
    pub(super) async fn tag_filters(
        &self,
        prefix: &str,
        tags: &std::collections::HashMap<String, String>,
        params: &std::collections::HashMap<String, String>,
    ) -> Result<Vec<TagFilter>> {
        if tags.len() > MAX_TAG_FILTERS {
            return Err(Error::invalid(
                format!("{prefix}tags"),
                format!("has {} tags, at most {MAX_TAG_FILTERS}", tags.len()),
            ));
        }
        let max = crate::grpc::convert::MAX_SEARCH_PARAMS;
        if params.len() > max {
            return Err(Error::invalid(
                format!("{prefix}params"),
                format!("has {} paths, at most {max}", params.len()),
            ));
        }
        let mut out = Vec::new();
        let mut sorted: Vec<(&String, &String)> = params.iter().collect();
        sorted.sort();
        for (path, value) in sorted {
            let field = format!("{prefix}params[{}]", validate::quote(path));
            crate::routing::keypath::parse(path).map_err(|why| Error::invalid(&field, why))?;
            // As stored: a value over 255 bytes by its digest.
            let value = crate::routing::hash::key_text(&serde_json::Value::String(value.clone()));
            out.push(TagFilter { name: path.clone(), value, tasks: Vec::new() });
        }
        let tags = validate::tag_filters(&format!("{prefix}tags"), tags)?;
        if !tags.is_empty() {
            let mut conn = self.core.pools.admin.conn().await?;
            for (name, value) in tags {
                let tasks = conn.tasks().tasks_labeled(&name, &value).await?;
                out.push(TagFilter { name, value, tasks });
            }
        }
        Ok(out)
    }

    /// The instance `id` if it exists and is in the caller's scope.
    pub(super) async fn instance_in_scope(
        &self,
        id: i64,
        grant: &Grant,
        n: &mut Note,
    ) -> Result<crate::model::Instance> {
        let inst = self
            .core
            .pools
            .admin
            .get_instance(id)
            .await
            .map_err(Error::from)?
            .ok_or_else(|| Error::NotFound(format!("instance {id}")))?;
        n.app = inst.app.clone();
        grant.app(&inst.app)?;
        Ok(inst)
    }

    pub(super) async fn get_instance_(
        &self,
        req: &Request<pb::GetInstanceRequest>,
        n: &mut Note,
    ) -> Result<pb::GetInstanceResponse> {
        let grant = self.caller(req, Access::Read, n)?;
        let id = req.get_ref().id;
        let inst = self.instance_in_scope(id, &grant, n).await?;
        let events = self.core.pools.admin.instance_events(id).await.map_err(Error::from)?;
        let children = if inst.is_parent() {
            self.core.pools.admin.children_of(id, 1000).await.map_err(Error::from)?
        } else {
            Vec::new()
        };
        // Chains and DAG joins, both ways; linked instances of apps outside the scope are left out.
        let mut conn = self.core.pools.admin.conn().await?;
        let links = conn.flow().links_touching(&[id]).await?;
        let other: Vec<i64> = links.iter().map(|(f, t, _)| if *f == id { *t } else { *f }).collect();
        let linked: std::collections::HashMap<i64, crate::model::Instance> = conn
            .instances()
            .instances_by_ids(&other)
            .await?
            .into_iter()
            .filter(|i| grant.app(&i.app).is_ok())
            .map(|i| (i.id, i))
            .collect();
        let link = |other: i64, kind| {
            linked.get(&other).map(|i| pb::InstanceLink {
                instance: Some(convert::instance_to_pb(i)),
                kind: convert::link_kind_to_pb(kind).into(),
            })
        };
        let upstream = links.iter().filter(|(_, t, _)| *t == id).filter_map(|(f, _, k)| link(*f, *k)).collect();
        let downstream = links.iter().filter(|(f, _, _)| *f == id).filter_map(|(_, t, k)| link(*t, *k)).collect();
        Ok(pb::GetInstanceResponse {
            instance: self.with_tags(std::slice::from_ref(&inst)).await?.pop(),
            events: events.iter().map(convert::event_to_pb).collect(),
            children: children.iter().map(convert::instance_to_pb).collect(),
            upstream,
            downstream,
        })
    }

    pub(super) async fn cancel_instance_(
        &self,
        req: &Request<pb::CancelInstanceRequest>,
        n: &mut Note,
    ) -> Result<pb::CancelInstanceResponse> {
        let grant = self.caller(req, Access::Operate, n)?;
        let r = req.get_ref();
        self.instance_in_scope(r.id, &grant, n).await?;
        validate::text("reason", &r.reason, validate::MAX_REASON)?;
        let actor = grant.identity.actor();
        let a = Actor { scheduler_id: &self.core.scheduler_id, caller: &actor };
        match cancel_instance(&self.core.pools.admin, r.id, &r.reason, self.now(), &a, &self.core.routing)
            .await
            .map_err(Error::from)?
        {
            CancelOutcome::Canceled(i) => {
                self.core.signals.commands.notify_one();
                Ok(pb::CancelInstanceResponse { instance: Some(convert::instance_to_pb(&i)) })
            }
            CancelOutcome::AlreadyFinal(i) => {
                Err(Error::FailedPrecondition(format!("instance {} is already {}; nothing to cancel", i.id, i.status)))
            }
            CancelOutcome::NotFound => Err(Error::NotFound(format!("instance {}", r.id))),
        }
    }

    pub(super) async fn retry_instance_(
        &self,
        req: &Request<pb::RetryInstanceRequest>,
        n: &mut Note,
    ) -> Result<pb::RetryInstanceResponse> {
        let grant = self.caller(req, Access::Operate, n)?;
        let id = req.get_ref().id;
        self.instance_in_scope(id, &grant, n).await?;
        let actor = grant.identity.actor();
        let a = Actor { scheduler_id: &self.core.scheduler_id, caller: &actor };
        match retry_instance(&self.core.pools.admin, id, self.now(), &a, &self.core.routing)
            .await
            .map_err(Error::from)?
        {
            RetryOutcome::Retried(i) => {
                self.core.signals.dispatch.notify_one();
                Ok(pb::RetryInstanceResponse { instance: Some(convert::instance_to_pb(&i)) })
            }
            RetryOutcome::NotFinal(i) => Err(Error::FailedPrecondition(format!(
                "instance {} is {}; only a finished instance can be retried",
                i.id, i.status
            ))),
            RetryOutcome::NotFound => Err(Error::NotFound(format!("instance {id}"))),
        }
    }

    pub(super) async fn watch_instance_(
        &self,
        req: &Request<pb::WatchInstanceRequest>,
        n: &mut Note,
    ) -> Result<super::wait::Watch> {
        let grant = self.caller(req, Access::Read, n)?;
        let r = req.get_ref();
        self.instance_in_scope(r.id, &grant, n).await?;
        self.watch(r.id, r.logs)
    }

    pub(super) async fn get_instance_logs_(
        &self,
        req: &Request<pb::GetInstanceLogsRequest>,
        n: &mut Note,
    ) -> Result<pb::GetInstanceLogsResponse> {
        let grant = self.caller(req, Access::Read, n)?;
        let r = req.get_ref();
        let limit = page_size("limit", r.limit, 1000)?;
        self.instance_in_scope(r.id, &grant, n).await?;
        let (lines, dropped) =
            self.core.pools.admin.instance_logs(r.id, r.after_seq, limit).await.map_err(Error::from)?;
        Ok(pb::GetInstanceLogsResponse { lines: lines.iter().map(convert::log_to_pb).collect(), dropped })
    }
}

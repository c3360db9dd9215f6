//! AdminService calls on the cluster: workers, schedulers, counts, and the audit trail.

use super::*;

impl AdminApi {
    /// Sessions of live axd, of the apps in the caller's scope.
    pub(super) async fn live_workers(
        &self,
        grant: &Grant,
        app: Option<&str>,
    ) -> Result<Vec<crate::model::WorkerRecord>> {
        let list = self.core.pools.admin.list_workers(app).await.map_err(Error::from)?;
        // Sessions of an axd that stopped heartbeating are gone, even before its rows are purged.
        let alive_since = self.core.alive_since();
        let alive: std::collections::HashSet<String> = self
            .core
            .pools
            .admin
            .list_schedulers()
            .await
            .map_err(Error::from)?
            .into_iter()
            .filter(|s| s.heartbeat_at >= alive_since)
            .map(|s| s.scheduler_id)
            .collect();
        Ok(list.into_iter().filter(|w| alive.contains(&w.scheduler_id) && grant.scope.contains(&w.app)).collect())
    }

    pub(super) async fn list_workers_(
        &self,
        req: &Request<pb::ListWorkersRequest>,
        n: &mut Note,
    ) -> Result<pb::ListWorkersResponse> {
        let grant = self.caller(req, Access::Read, n)?;
        let app = &req.get_ref().app;
        if !app.is_empty() {
            validate::app("app", app)?;
            grant.app(app)?;
        }
        let workers = self.live_workers(&grant, (!app.is_empty()).then_some(app.as_str())).await?;
        let mut apps: Vec<String> = workers.iter().map(|w| w.app.clone()).collect();
        apps.sort();
        apps.dedup();
        let streaks = self.core.pools.admin.list_streaks(Some(&apps)).await.map_err(Error::from)?;
        Ok(pb::ListWorkersResponse { workers: workers.iter().map(|w| convert::worker_to_pb(w, &streaks)).collect() })
    }

    pub(super) async fn list_schedulers_(
        &self,
        req: &Request<pb::ListSchedulersRequest>,
        n: &mut Note,
    ) -> Result<pb::ListSchedulersResponse> {
        let grant = self.caller(req, Access::Read, n)?;
        let schedulers = self.core.pools.admin.list_schedulers().await.map_err(Error::from)?;
        // Only sessions of apps in scope are counted and named.
        let workers: Vec<_> = self
            .core
            .pools
            .admin
            .list_workers(None)
            .await
            .map_err(Error::from)?
            .into_iter()
            .filter(|w| grant.scope.contains(&w.app))
            .collect();
        let alive_since = self.core.alive_since();
        Ok(pb::ListSchedulersResponse {
            schedulers: schedulers
                .iter()
                .map(|s| pb::SchedulerNode {
                    scheduler_id: s.scheduler_id.clone(),
                    host: s.host.clone(),
                    address: s.address.clone(),
                    version: s.version.clone(),
                    start_time: Some(convert::ts_to_pb(s.started_at)),
                    heartbeat_time: Some(convert::ts_to_pb(s.heartbeat_at)),
                    workers: u32::try_from(workers.iter().filter(|w| w.scheduler_id == s.scheduler_id).count())
                        .unwrap_or(u32::MAX),
                    worker_ids: {
                        let mut ids: Vec<String> = workers
                            .iter()
                            .filter(|w| w.scheduler_id == s.scheduler_id)
                            .map(|w| w.worker_id.clone())
                            .collect();
                        ids.sort();
                        ids
                    },
                    alive: s.heartbeat_at >= alive_since,
                })
                .collect(),
        })
    }

    pub(super) async fn get_cluster_stats_(
        &self,
        req: &Request<pb::GetClusterStatsRequest>,
        n: &mut Note,
    ) -> Result<pb::GetClusterStatsResponse> {
        let grant = self.caller(req, Access::Read, n)?;
        grant.all_apps("GetClusterStats")?;
        let s = self.core.pools.admin.cluster_stats(self.core.alive_since()).await.map_err(Error::from)?;
        Ok(pb::GetClusterStatsResponse {
            tasks: s.tasks,
            enabled_tasks: s.enabled_tasks,
            instances: s
                .instances
                .iter()
                .map(|(status, n)| pb::StatusCount { status: convert::status_to_pb(*status).into(), count: *n })
                .collect(),
            workers: s.workers,
            schedulers: s.schedulers,
            answered_by: Some(self.health()),
        })
    }

    /// This axd's loops and clock offset, as `GetClusterStats` reports them.
    fn health(&self) -> pb::SchedulerHealth {
        let stall_after = self.core.health_stall_after;
        let duration = |d: chrono::TimeDelta| prost_types::Duration {
            seconds: d.num_seconds(),
            // The sub-second part carries the sign of the whole, as protobuf requires.
            nanos: d.subsec_nanos(),
        };
        let std = |d: Duration| duration(chrono::TimeDelta::from_std(d).unwrap_or(chrono::TimeDelta::MAX));
        pb::SchedulerHealth {
            scheduler_id: self.core.scheduler_id.clone(),
            serving: self.core.progress.serving(),
            loops: self
                .core
                .progress
                .since_last_rounds()
                .into_iter()
                .map(|(l, since)| pb::LoopHealth {
                    name: l.key().to_owned(),
                    since_last_round: Some(std(since)),
                    stalled: since > stall_after,
                })
                .collect(),
            stall_after: Some(std(stall_after)),
            clock_offset: Some(duration(chrono::Utc::now() - self.core.clock.now())),
        }
    }

    pub(super) async fn list_audit_entries_(
        &self,
        req: &Request<pb::ListAuditEntriesRequest>,
        n: &mut Note,
    ) -> Result<pb::ListAuditEntriesResponse> {
        let grant = self.caller(req, Access::Read, n)?;
        let r = req.get_ref();
        let limit = page_size("page_size", r.page_size, 100)?;
        let text = |field: &str, v: &str| -> Result<Option<String>> {
            if v.is_empty() {
                return Ok(None);
            }
            if v.len() > 255 {
                return Err(Error::invalid(field, format!("is {} bytes long, at most 255 allowed", v.len())));
            }
            Ok(Some(v.to_owned()))
        };
        let before_id = before_id(&r.page_token)?;
        let since = r.start_time.as_ref().map(|t| convert::ts_from_pb("start_time", t)).transpose()?;
        let until = r.end_time.as_ref().map(|t| convert::ts_from_pb("end_time", t)).transpose()?;
        if let (Some(a), Some(b)) = (since, until)
            && a > b
        {
            return Err(Error::invalid("end_time", "is before start_time"));
        }
        let filter = AuditFilter {
            actor: text("actor", &r.actor)?,
            target: text("target", &r.target)?,
            rpc: text("rpc", &r.rpc)?,
            since,
            until,
            apps: grant.apps(),
            before_id,
            limit,
        };
        let list = self.core.pools.admin.list_audit(&filter).await.map_err(Error::from)?;
        let next_page_token = next_page_token(&list, limit, |e| e.id);
        Ok(pb::ListAuditEntriesResponse {
            entries: list
                .into_iter()
                .map(|e| pb::AuditEntry {
                    id: e.id,
                    time: Some(convert::ts_to_pb(e.at)),
                    actor: e.actor,
                    rpc: e.rpc,
                    target: e.target,
                    app: e.app,
                    outcome: e.outcome,
                    detail: e.detail,
                    before_json: e.before.unwrap_or_default(),
                    after_json: e.after.unwrap_or_default(),
                })
                .collect(),
            next_page_token,
        })
    }
}

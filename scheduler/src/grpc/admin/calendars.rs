//! AdminService calls on calendars: create, update, get, list, delete. Calendars are shared by the
//! tasks of every app, so changing one needs `admin` with scope `*`.

use super::*;
use crate::model::Calendar;

pub(super) fn calendar_target(name: &str) -> String {
    format!("calendar/{}", clip(name))
}

fn calendar_json(c: &Calendar) -> String {
    serde_json::json!({ "name": c.name, "description": c.description, "dates": convert::dates_to_pb(&c.dates) })
        .to_string()
}

fn calendar_to_pb(c: &Calendar) -> pb::Calendar {
    pb::Calendar {
        name: c.name.clone(),
        description: c.description.clone(),
        dates: convert::dates_to_pb(&c.dates),
        created_by: c.created_by.clone(),
        create_time: Some(convert::ts_to_pb(c.created_at)),
        updated_by: c.updated_by.clone(),
        update_time: Some(convert::ts_to_pb(c.updated_at)),
    }
}

/// Checks a calendar's fields: the calendar to store, made by `actor` at `now`.
fn calendar_from_pb(c: &pb::Calendar, actor: &str, now: Ts) -> Result<Calendar> {
    validate::task_name("calendar.name", &c.name)?;
    validate::text("calendar.description", &c.description, validate::MAX_DESCRIPTION)?;
    Ok(Calendar {
        name: c.name.clone(),
        description: c.description.clone(),
        dates: convert::dates_from_pb("calendar.dates", &c.dates)?,
        created_by: actor.to_owned(),
        created_at: now,
        updated_by: actor.to_owned(),
        updated_at: now,
    })
}

impl AdminApi {
    pub(super) async fn create_calendar_(
        &self,
        req: &Request<pb::CreateCalendarRequest>,
        n: &mut Note,
    ) -> Result<pb::CreateCalendarResponse> {
        let grant = self.caller(req, Access::Manage, n)?;
        grant.all_apps("changing a calendar (shared by the tasks of every app)")?;
        let c = req.get_ref().calendar.as_ref().ok_or_else(|| Error::invalid("calendar", "is required"))?;
        let cal = calendar_from_pb(c, &grant.identity.actor(), self.now())?;
        let mut tx = self.core.pools.admin.begin().await?;
        match tx.calendars().insert_calendar(&cal).await {
            Ok(()) => {}
            Err(StoreError::UniqueViolation(_)) => {
                return Err(Error::AlreadyExists(format!("calendar {}", validate::quote(&cal.name))));
            }
            Err(e) => return Err(e.into()),
        }
        tx.commit().await?;
        n.after = Some(calendar_json(&cal));
        Ok(pb::CreateCalendarResponse { calendar: Some(calendar_to_pb(&cal)) })
    }

    pub(super) async fn update_calendar_(
        &self,
        req: &Request<pb::UpdateCalendarRequest>,
        n: &mut Note,
    ) -> Result<pb::UpdateCalendarResponse> {
        let grant = self.caller(req, Access::Manage, n)?;
        grant.all_apps("changing a calendar (shared by the tasks of every app)")?;
        let c = req.get_ref().calendar.as_ref().ok_or_else(|| Error::invalid("calendar", "is required"))?;
        let now = self.now();
        let mut cal = calendar_from_pb(c, &grant.identity.actor(), now)?;
        let mut tx = self.core.pools.admin.begin().await?;
        let Some(before) = tx.calendars().get_calendar(&cal.name, true).await? else {
            return Err(Error::NotFound(format!("calendar {}", validate::quote(&cal.name))));
        };
        cal.created_by = before.created_by.clone();
        cal.created_at = before.created_at;
        tx.calendars().update_calendar(&cal).await?;
        // Tasks that use it: a date no longer excluded may come before their stored next fire.
        // (One newly excluded is skipped by the trigger when it comes.)
        for t in tx.tasks().tasks_with_calendar(&cal.name, 10_000).await? {
            let Some(current) = t.next_fire_at else { continue };
            let fresh = crate::schedule::next_fire_from(&t.config, &cal.dates, t.pause.as_ref(), now);
            if let Some(earlier) = fresh.filter(|f| *f < current) {
                tx.tasks().set_next_fire(t.id, Some(earlier)).await?;
            }
        }
        tx.notify(crate::store::Notice::Tasks).await?;
        tx.commit().await?;
        self.core.signals.trigger.notify_one();
        n.before = Some(calendar_json(&before));
        n.after = Some(calendar_json(&cal));
        Ok(pb::UpdateCalendarResponse { calendar: Some(calendar_to_pb(&cal)) })
    }

    pub(super) async fn get_calendar_(
        &self,
        req: &Request<pb::GetCalendarRequest>,
        n: &mut Note,
    ) -> Result<pb::GetCalendarResponse> {
        let grant = self.caller(req, Access::Read, n)?;
        let name = &req.get_ref().name;
        validate::task_name("name", name)?;
        let mut conn = self.core.pools.admin.conn().await?;
        let cal = conn
            .calendars()
            .get_calendar(name, false)
            .await?
            .ok_or_else(|| Error::NotFound(format!("calendar {}", validate::quote(name))))?;
        let tasks = conn.tasks().tasks_with_calendar(name, 1000).await?;
        Ok(pb::GetCalendarResponse {
            calendar: Some(calendar_to_pb(&cal)),
            // Only the tasks of apps in the caller's scope: a calendar is shared, its users are not.
            tasks: tasks.into_iter().filter(|t| grant.app(&t.config.app).is_ok()).map(|t| t.name).collect(),
        })
    }

    pub(super) async fn list_calendars_(
        &self,
        req: &Request<pb::ListCalendarsRequest>,
        n: &mut Note,
    ) -> Result<pb::ListCalendarsResponse> {
        self.caller(req, Access::Read, n)?;
        let list = self.core.pools.admin.conn().await?.calendars().list_calendars().await?;
        Ok(pb::ListCalendarsResponse { calendars: list.iter().map(calendar_to_pb).collect() })
    }

    pub(super) async fn delete_calendar_(
        &self,
        req: &Request<pb::DeleteCalendarRequest>,
        n: &mut Note,
    ) -> Result<pb::DeleteCalendarResponse> {
        let grant = self.caller(req, Access::Manage, n)?;
        grant.all_apps("changing a calendar (shared by the tasks of every app)")?;
        let name = &req.get_ref().name;
        validate::task_name("name", name)?;
        let mut tx = self.core.pools.admin.begin().await?;
        // Locked first: a task that names it waits for this to commit, and then finds it gone.
        let Some(before) = tx.calendars().get_calendar(name, true).await? else {
            return Err(Error::NotFound(format!("calendar {}", validate::quote(name))));
        };
        let users = tx.tasks().tasks_with_calendar(name, 20).await?;
        if !users.is_empty() {
            let names: Vec<&str> = users.iter().map(|t| t.name.as_str()).collect();
            return Err(Error::FailedPrecondition(format!(
                "calendar {} is used by task(s) {}; change them first",
                validate::quote(name),
                names.join(", ")
            )));
        }
        tx.calendars().delete_calendar(name).await?;
        tx.commit().await?;
        n.before = Some(calendar_json(&before));
        Ok(pb::DeleteCalendarResponse {})
    }
}

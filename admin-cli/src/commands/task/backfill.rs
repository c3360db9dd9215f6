//! `axctl task backfill NAME --from T1 --to T2 [--dry-run]`: creates the instances the task's
//! schedule would have created in a past range, one per fire time, in time order; fires that have
//! an instance get no second one, so running it twice creates nothing new. At most 1000 fires.

use anyhow::Result;
use ax_proto::v1::BackfillTaskRequest;
use clap::Args;
use serde::Serialize;

use crate::{
    args::parse_timestamp,
    client::RpcResultExt as _,
    commands::Context,
    output::{self, BackfilledFireView, OutputFormat},
};

/// Arguments of `task backfill`.
#[derive(Args, Debug)]
pub struct BackfillArgs {
    /// Task name.
    pub name: String,
    /// Fires at or after this instant (RFC 3339).
    #[arg(long, value_name = "RFC3339", value_parser = parse_timestamp)]
    pub from: prost_types::Timestamp,
    /// Fires before this instant (RFC 3339), not after now.
    #[arg(long, value_name = "RFC3339", value_parser = parse_timestamp)]
    pub to: prost_types::Timestamp,
    /// Say what would be created; create nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// JSON output of `task backfill`.
#[derive(Serialize)]
struct Backfilled {
    dry_run: bool,
    created: u32,
    fires: Vec<BackfilledFireView>,
}

/// Backfills the range.
pub async fn run(args: BackfillArgs, ctx: &Context) -> Result<()> {
    let mut client = ctx.client().await?;
    let request = BackfillTaskRequest {
        name: args.name.clone(),
        from: Some(args.from),
        to: Some(args.to),
        dry_run: args.dry_run,
    };
    let response = client.backfill_task(request).await.rpc()?;
    let view = Backfilled {
        dry_run: args.dry_run,
        created: response.created,
        fires: response.fires.iter().map(BackfilledFireView::from).collect(),
    };
    match ctx.output {
        OutputFormat::Json => output::print_json(&view),
        OutputFormat::Table => output::print_text(&output::backfill_report(&args.name, args.dry_run, &view.fires)),
    }
}

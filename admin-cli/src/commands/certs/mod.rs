//! `axctl certs ...`: local certificate tooling for trying mTLS without a PKI.

use anyhow::Result;
use clap::Subcommand;

use crate::commands::Context;

mod init;
mod p12;
mod write;

/// Certs verbs.
#[derive(Subcommand, Debug)]
pub enum CertsCommand {
    /// Write a development CA and certificates for axd, workers and operators into DIR, and print
    /// the axd flags and axctl environment that use them. Not for production: the CA key sits next
    /// to the certificates.
    Init(init::InitArgs),
}

impl CertsCommand {
    /// Runs the verb (locally; nothing is sent anywhere).
    pub fn run(self, ctx: &Context) -> Result<()> {
        match self {
            CertsCommand::Init(args) => init::run(args, ctx),
        }
    }
}

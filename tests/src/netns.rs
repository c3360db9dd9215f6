//! A network namespace with veth links to this host, for processes whose network a test cuts for
//! real: the kernel drops their packets, so neither end sees a reset (a partition, not a crash).
//!
//! Link `i` joins the host at `10.213.X.(4i+1)` to the namespace at `10.213.X.(4i+2)`; a process in
//! the namespace reaches a host service that listens on the link's host address (tests put a
//! [`crate::proxy::Proxy`] there in front of an axd that listens on loopback). [`Netns::cut`] takes
//! the namespace's end of one link down; [`Netns::heal`] brings it back. Dropping the value deletes
//! the namespace and its links.
//!
//! Needs root (CAP_NET_ADMIN) and iproute2. In CI a failure to create it fails the test; outside CI
//! `AX_SKIP_NETNS_TESTS=1` turns it into a skip that is reported on stderr.

use std::{net::Ipv4Addr, process::Command};

/// A namespace and its links.
pub struct Netns {
    /// The namespace's name.
    pub name: String,
    prefix: (u8, u8),
    links: usize,
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip").args(args).output().map_err(|e| format!("cannot run ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

fn may_skip() -> bool {
    std::env::var("CI").map(|v| v != "true" && v != "1").unwrap_or(true)
        && std::env::var("AX_SKIP_NETNS_TESTS").is_ok_and(|v| v == "1")
}

impl Netns {
    /// A new namespace with `links` veth links to the host, or `None` if it cannot be made and
    /// skipping is allowed (never in CI).
    pub fn create(links: usize) -> Option<Netns> {
        let tag = fastrand::u32(..) & 0xff_ffff;
        let n = Netns { name: format!("ax-t-{tag:06x}"), prefix: (213, (tag & 0xff) as u8), links };
        match n.set_up() {
            Ok(()) => Some(n),
            Err(e) => {
                drop(n);
                if may_skip() {
                    crate::skip(&format!("cannot make a network namespace ({e}) and AX_SKIP_NETNS_TESTS=1"));
                    return None;
                }
                panic!(
                    "cannot make a network namespace for a partition test: {e}. Run the tests as root (CI does), \
                     or set AX_SKIP_NETNS_TESTS=1 outside CI to skip"
                );
            }
        }
    }

    fn host_if(&self, i: usize) -> String {
        format!("{}h{i}", &self.name[5..])
    }

    fn ns_if(&self, i: usize) -> String {
        format!("{}n{i}", &self.name[5..])
    }

    /// The host's address on link `i` (where host services for the namespace listen).
    pub fn host_ip(&self, i: usize) -> Ipv4Addr {
        Ipv4Addr::new(10, self.prefix.0, self.prefix.1, (4 * i + 1) as u8)
    }

    /// The namespace's address on link `i`.
    pub fn ns_ip(&self, i: usize) -> Ipv4Addr {
        Ipv4Addr::new(10, self.prefix.0, self.prefix.1, (4 * i + 2) as u8)
    }

    fn set_up(&self) -> Result<(), String> {
        ip(&["netns", "add", &self.name])?;
        ip(&["-n", &self.name, "link", "set", "lo", "up"])?;
        for i in 0..self.links {
            let (h, n) = (self.host_if(i), self.ns_if(i));
            ip(&["link", "add", &h, "type", "veth", "peer", "name", &n])?;
            ip(&["link", "set", &n, "netns", &self.name])?;
            ip(&["addr", "add", &format!("{}/30", self.host_ip(i)), "dev", &h])?;
            ip(&["link", "set", &h, "up"])?;
            ip(&["-n", &self.name, "addr", "add", &format!("{}/30", self.ns_ip(i)), "dev", &n])?;
            ip(&["-n", &self.name, "link", "set", &n, "up"])?;
        }
        Ok(())
    }

    /// A command that runs `program` inside the namespace.
    pub fn command(&self, program: &std::path::Path) -> tokio::process::Command {
        let mut c = tokio::process::Command::new("ip");
        c.args(["netns", "exec", &self.name]).arg(program);
        c
    }

    /// Takes the namespace's end of link `i` down: packets in both directions are dropped from now
    /// on, and nobody is told.
    pub fn cut(&self, i: usize) {
        ip(&["-n", &self.name, "link", "set", &self.ns_if(i), "down"]).expect("cut the link");
    }

    /// Brings link `i` back up.
    pub fn heal(&self, i: usize) {
        ip(&["-n", &self.name, "link", "set", &self.ns_if(i), "up"]).expect("heal the link");
        // Taking the device down removed the namespace's address route with it only if the
        // address went too; it did not, but the address must be there for the link to work.
        let _ = ip(&["-n", &self.name, "addr", "add", &format!("{}/30", self.ns_ip(i)), "dev", &self.ns_if(i)]);
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        // Deleting the namespace deletes its veth ends, and with them the host ends.
        let _ = ip(&["netns", "del", &self.name]);
        for i in 0..self.links {
            let _ = ip(&["link", "del", &self.host_if(i)]);
        }
    }
}
